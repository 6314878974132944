import { ApiError, NETWORK_ERROR_MESSAGE } from './api-error';
import type {
  Account,
  ActivityRow,
  AutoTopUp,
  AutoTopUpRequest,
  ByokKey,
  ByokList,
  CheckoutSession,
  CreatedKey,
  CreateKeyRequest,
  Credits,
  KeyRecord,
  Purchase,
  SiteConfig,
  UpdateKeyRequest,
} from './types';

/**
 * The typed client of the account API (DATA-MODEL.md §7), the dashboard's only way to the backend
 * besides Cognito. Same origin as the page, so plain relative paths and no CORS.
 *
 * Every call sends `Authorization: Bearer <Cognito token>` from `token()`; on a 401 it asks for a
 * fresh token once (`token(true)`, i.e. a refresh) and retries, then gives up with the 401 (the app
 * signs out). Errors are {@link ApiError}s carrying the API's own message (OpenAI's error body).
 * Nothing here logs: a key or token must never reach a console or a URL.
 */
export interface AccountApi {
  account(): Promise<Account>;
  listKeys(): Promise<KeyRecord[]>;
  /** 409 `key_limit_exceeded` (ApiError) when the account already holds 5 keys. */
  createKey(body: CreateKeyRequest): Promise<CreatedKey>;
  updateKey(hash: string, body: UpdateKeyRequest): Promise<KeyRecord>;
  deleteKey(hash: string): Promise<void>;
  credits(): Promise<Credits>;
  /**
   * A Stripe Checkout Session for `amountUsd` of credit (400 below the minimum; 404 without payments);
   * `saveCard` saves the card for auto top-up (`setup_future_usage: off_session`).
   */
  checkout(amountUsd: number, saveCard?: boolean): Promise<CheckoutSession>;
  autoTopUp(): Promise<AutoTopUp>;
  /** 400 `no_saved_card` when turned on without a saved card. */
  setAutoTopUp(body: AutoTopUpRequest): Promise<AutoTopUp>;
  /** The low-balance email's threshold (null: none). */
  setLowBalanceAlert(usd: number | null): Promise<AutoTopUp>;
  /** Top-ups, auto top-ups, refunds and disputes, newest first. */
  purchases(): Promise<Purchase[]>;
  /** Rows for the last `days` UTC days (day × model × key). */
  activity(days: number): Promise<ActivityRow[]>;
  /** The attached keys, and the providers that accept one when the API says (else the page's list). */
  listByok(): Promise<ByokList>;
  /** Attaches (or replaces) the provider key. 400 when it does not start with `sk-`. */
  putByok(provider: string, key: string, allowFallback: boolean): Promise<ByokKey>;
  setByokFallback(provider: string, allowFallback: boolean): Promise<ByokKey>;
  deleteByok(provider: string): Promise<void>;
}

/** Gives the bearer token; `refresh` = the last one was refused, get a new one. */
export type TokenSource = (refresh: boolean) => Promise<string>;

/** Builds the client. `fetchImpl` defaults to the page's fetch. */
export function createAccountApi(token: TokenSource, fetchImpl: typeof fetch = (...args) => fetch(...args)): AccountApi {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response = await send(fetchImpl, method, path, await token(false), body);
    if (response.status === 401) response = await send(fetchImpl, method, path, await token(true), body);
    return readJson<T>(response);
  }
  const data = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await call<{ data: T }>(method, path, body)).data;
  const seg = encodeURIComponent;
  return {
    account: () => data<Account>('GET', '/v1/account'),
    listKeys: () => data<KeyRecord[]>('GET', '/v1/keys'),
    createKey: (body) => call<CreatedKey>('POST', '/v1/keys', body),
    updateKey: (hash, body) => data<KeyRecord>('PATCH', `/v1/keys/${seg(hash)}`, body),
    deleteKey: async (hash) => void (await call('DELETE', `/v1/keys/${seg(hash)}`)),
    credits: () => data<Credits>('GET', '/v1/credits'),
    checkout: (amountUsd, saveCard) =>
      call<CheckoutSession>('POST', '/v1/credits/checkout', { amount_usd: amountUsd, ...(saveCard ? { setup_future_usage: 'off_session' } : {}) }),
    autoTopUp: () => data<AutoTopUp>('GET', '/v1/credits/auto-top-up'),
    setAutoTopUp: (body) => data<AutoTopUp>('PUT', '/v1/credits/auto-top-up', body),
    setLowBalanceAlert: (usd) => data<AutoTopUp>('PUT', '/v1/credits/alerts', { low_balance_usd: usd }),
    purchases: () => data<Purchase[]>('GET', '/v1/credits/purchases'),
    activity: (days) => data<ActivityRow[]>('GET', `/v1/activity?days=${days}`),
    listByok: () => call<ByokList>('GET', '/v1/byok'),
    putByok: (provider, key, allowFallback) => data<ByokKey>('PUT', `/v1/byok/${seg(provider)}`, { key, allow_fallback: allowFallback }),
    setByokFallback: (provider, allowFallback) => data<ByokKey>('PATCH', `/v1/byok/${seg(provider)}`, { allow_fallback: allowFallback }),
    deleteByok: async (provider) => void (await call('DELETE', `/v1/byok/${seg(provider)}`)),
  };
}

/** `GET /config.json` (no auth). */
export async function loadSiteConfig(fetchImpl: typeof fetch = (...args) => fetch(...args)): Promise<SiteConfig> {
  let response: Response;
  try {
    // Same request as index.html's <link rel="preload">, so the preloaded answer is used.
    response = await fetchImpl('/config.json');
  } catch {
    throw new ApiError(NETWORK_ERROR_MESSAGE, 0);
  }
  return readJson<SiteConfig>(response);
}

async function send(fetchImpl: typeof fetch, method: string, path: string, token: string, body: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetchImpl(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiError(NETWORK_ERROR_MESSAGE, 0);
  }
}

/** Parses a success body, or turns OpenAI's error body (or its absence) into an {@link ApiError}. */
async function readJson<T>(response: Response): Promise<T> {
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.ok) {
    if (parsed === undefined && text !== '') throw new ApiError(`The server sent an answer that is not JSON (HTTP ${response.status}).`, response.status);
    return parsed as T;
  }
  const error = (parsed as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  const message =
    typeof error?.message === 'string' && error.message !== ''
      ? error.message
      : `The server answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}.`;
  return Promise.reject(new ApiError(message, response.status, typeof error?.code === 'string' ? error.code : null));
}

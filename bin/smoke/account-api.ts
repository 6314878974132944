/**
 * The deployment's public sign-in configuration (`GET /config.json`, what the dashboard reads first) and
 * the account API (`/v1/account`, `/v1/keys`, `/v1/activity`), called as the dashboard calls them:
 * fetch with the Cognito access token as the bearer. Every non-2xx answer is an error naming the
 * method, path, status and the API's own message.
 */

/** What `/config.json` says: the dashboard's user pool and app client. */
export interface SiteConfig {
  region: string;
  userPoolId: string;
  userPoolClientId: string;
  /** Only where Cognito is not AWS's own (locally: the emulator). */
  cognitoEndpoint?: string;
}

/** The fields of `GET /v1/account` the smoke test reads (README: "The account API"). */
export interface AccountInfo {
  id: string;
  email: string | null;
  free_tokens: number;
  free_tokens_held: number;
  credit_nano_usd: number;
  credit_held_nano_usd: number;
  total_usage_nano_usd: number;
  is_free_tier: boolean;
  free_grant_withheld: string | null;
}

/** One row of `GET /v1/activity`: a UTC day × model × key. */
export interface ActivityRow {
  date: string;
  model: string;
  key_hash: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  usage_nano_usd: number;
}

/** An answer that was not 2xx. */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** How long one account-API call may take, ms. */
const CALL_TIMEOUT_MS = 30_000;

/** `fetch` then JSON, throwing {@link HttpError} on a non-2xx answer. */
export async function fetchJson<T>(url: string, init: { method?: string; token?: string; apiKey?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const bearer = init.token ?? init.apiKey;
  const res = await fetch(url, {
    method,
    headers: {
      accept: 'application/json',
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const apiMessage = (parsed as { error?: { message?: unknown } } | undefined)?.error?.message;
    const said = typeof apiMessage === 'string' ? apiMessage : text.slice(0, 200);
    throw new HttpError(`${method} ${new URL(url).pathname} answered ${res.status}: ${said}`, res.status);
  }
  if (parsed === undefined) throw new HttpError(`${method} ${new URL(url).pathname} answered ${res.status} without JSON`, res.status);
  return parsed as T;
}

/** The account API of one deployment, for one signed-in user. */
export class AccountApi {
  /** @param origin the account API's origin (the CloudFront URL, or the AccountUrl output), no trailing slash. */
  constructor(
    private readonly origin: string,
    private readonly token: () => string,
  ) {}

  /** `GET /v1/account`. */
  async account(): Promise<AccountInfo> {
    return (await fetchJson<{ data: AccountInfo }>(`${this.origin}/v1/account`, { token: this.token() })).data;
  }

  /** `POST /v1/keys` → the key (shown once) and its hash. */
  async createKey(name: string): Promise<{ key: string; hash: string }> {
    const out = await fetchJson<{ key: string; data: { hash: string } }>(`${this.origin}/v1/keys`, { method: 'POST', token: this.token(), body: { name } });
    return { key: out.key, hash: out.data.hash };
  }

  /** `GET /v1/keys`: the hashes of the keys not deleted. */
  async keyHashes(): Promise<string[]> {
    return (await fetchJson<{ data: Array<{ hash: string }> }>(`${this.origin}/v1/keys`, { token: this.token() })).data.map((k) => k.hash);
  }

  /** `DELETE /v1/keys/{hash}`. */
  async deleteKey(hash: string): Promise<void> {
    await fetchJson(`${this.origin}/v1/keys/${encodeURIComponent(hash)}`, { method: 'DELETE', token: this.token() });
  }

  /** `GET /v1/activity?days=…` (today and yesterday by default: a run may cross midnight UTC). */
  async activity(days = 2): Promise<ActivityRow[]> {
    return (await fetchJson<{ data: ActivityRow[] }>(`${this.origin}/v1/activity?days=${days}`, { token: this.token() })).data;
  }
}

/** `GET <origin>/config.json`, checked to name a pool and a client. @throws Error when it does not. */
export async function siteConfig(origin: string): Promise<SiteConfig> {
  const c = await fetchJson<Partial<SiteConfig>>(`${origin}/config.json`);
  for (const field of ['region', 'userPoolId', 'userPoolClientId'] as const) {
    if (typeof c[field] !== 'string' || c[field] === '') throw new Error(`/config.json has no ${field}: ${JSON.stringify(c)}`);
  }
  return c as SiteConfig;
}

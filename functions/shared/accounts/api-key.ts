/**
 * API key format: `sk-mux-<secret>` (spec §2 "API key": `sk-<service>-<secret>`). The secret is 32
 * bytes from `crypto.randomBytes` written in base62 as exactly 43 characters. Only the SHA-256 of the
 * full key is stored; the key itself is shown once and never stored or logged.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AuthenticationError } from '../errors/gateway-errors';

/** Every modelmux key starts with this. */
export const API_KEY_PREFIX = 'sk-mux-';

/** Secret length in base62 characters: 62^43 > 2^256 > 62^42, so 43 digits hold any 32-byte value. */
export const API_KEY_SECRET_LENGTH = 43;

/** Characters of the secret kept in the display hint. */
const HINT_SECRET_CHARS = 4;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${API_KEY_SECRET_LENGTH}}$`);

/** A freshly generated key: `key` is shown to the user once; `keyHash` and `hint` are stored. */
export interface GeneratedApiKey {
  /** `sk-mux-` + 43 base62 characters. */
  key: string;
  /** SHA-256 hex (64 chars) of the full key: the keys table's partition key. */
  keyHash: string;
  /** `sk-mux-` + first 4 secret characters + `…`, safe to display. */
  hint: string;
}

/**
 * Generates a key with 256 bits of entropy. Encoding is rejection-free: the 32 random bytes are read
 * as one big-endian integer and written in base62, left-padded with `0` to 43 digits. Every byte string
 * maps to a distinct secret, so no entropy is lost (the secret is not uniform over all 43-digit base62
 * strings, which does not matter: it is uniform over 2^256 of them).
 */
export function generateApiKey(): GeneratedApiKey {
  let n = BigInt(`0x${randomBytes(32).toString('hex')}`);
  let secret = '';
  while (n > 0n) {
    secret = BASE62[Number(n % 62n)] + secret;
    n /= 62n;
  }
  secret = secret.padStart(API_KEY_SECRET_LENGTH, '0');
  const key = API_KEY_PREFIX + secret;
  return { key, keyHash: hashApiKey(key), hint: `${API_KEY_PREFIX}${secret.slice(0, HINT_SECRET_CHARS)}…` };
}

/** SHA-256 hex (lower case, 64 chars) of the full key string. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** True when `key` has the exact modelmux key shape (prefix + 43 base62 characters). */
export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/**
 * A key as it may be echoed in an error: at most 9 leading and 3 trailing characters, fewer for short
 * strings, so an error message or log line never carries a usable key (e.g. `sk-mux-ab…xyz`).
 */
export function redactApiKey(key: string): string {
  const head = key.slice(0, Math.min(9, Math.floor(key.length / 3)));
  const tail = key.length >= 20 ? key.slice(-3) : '';
  return `${head}…${tail}`;
}

/** Where a message sends people for keys when the caller knows no better (no request at hand). */
const DEFAULT_DASHBOARD = 'the modelmux dashboard';

/** The dashboard named in a message: `the dashboard at https://…/`, or the generic words. */
function inDashboard(dashboard: string): string {
  return dashboard.startsWith('http') ? `the dashboard at ${dashboard}` : dashboard;
}

/**
 * 401 for a key that is malformed, unknown, disabled or deleted (OpenAI's wording and code
 * `invalid_api_key`), pointing to the dashboard.
 * @param dashboard the dashboard's URL (http/public-url.ts `dashboardUrl`), e.g. `https://api.example.com/`.
 */
export function incorrectApiKeyError(key: string, dashboard = DEFAULT_DASHBOARD): AuthenticationError {
  return new AuthenticationError(
    `Incorrect API key provided: ${redactApiKey(key)}. You can find your API keys in ${inDashboard(dashboard)}.`,
    'invalid_api_key',
  );
}

/** 401 for a request without a Bearer key (OpenAI's wording; code null as OpenAI sends), pointing to the dashboard. */
export function missingApiKeyError(dashboard = DEFAULT_DASHBOARD): AuthenticationError {
  return new AuthenticationError(
    "You didn't provide an API key. You need to provide your API key in an Authorization header using " +
      `Bearer auth (i.e. Authorization: Bearer YOUR_KEY). You can create an API key in ${inDashboard(dashboard)}.`,
    null,
  );
}

/**
 * The API key from an `Authorization` header value (`Bearer <key>`; scheme case-insensitive, RFC 6750 §2.1).
 * @throws AuthenticationError (401, code null) when the header is absent, empty or not Bearer;
 *         (401, code `invalid_api_key`) when the token is not a well-formed `sk-mux-` key.
 */
export function parseBearer(authorizationHeader: string | undefined, dashboard = DEFAULT_DASHBOARD): string {
  const match = /^\s*bearer\s+(.*?)\s*$/i.exec(authorizationHeader ?? '');
  const token = match?.[1];
  if (!token) throw missingApiKeyError(dashboard);
  if (!isWellFormedApiKey(token)) throw incorrectApiKeyError(token, dashboard);
  return token;
}

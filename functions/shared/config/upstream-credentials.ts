/**
 * Upstream provider credentials (API keys and base-URL overrides), read once per container.
 *
 * Where they come from:
 * - `process.env`, for the names in `UPSTREAM_ENV_VARS` (derived from providers/manifest.ts) (local runs, and base-URL overrides the
 *   stack passes as plain env: a base URL is not a secret);
 * - the Secrets Manager secret named by `UPSTREAM_SECRET_ARN` (a JSON object of the same names), when
 *   that variable is set. The deployed stack never puts a `*_API_KEY` in the function's environment:
 *   env vars are readable by anyone with `lambda:GetFunctionConfiguration`, a secret is not.
 *
 * The secret wins over env for a name present in both. An empty string counts as "not set" on either
 * side, so a placeholder like `"GROQ_API_KEY": ""` left in the secret does not hide an env value.
 *
 * Why not Powertools `getSecret`: its default provider keeps its own module-level cache keyed by name.
 * Layered under our promise cache, the two TTLs add up (a rotated key could take up to 2 × maxAge to
 * show), and the provider cannot be reset between tests. We need a single-flight promise cache anyway
 * (the handler calls this at INIT and again per request), so the SDK client is used directly.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigUnavailableError } from '../openai/errors';
import { UPSTREAM_ENV_VARS } from '../providers/manifest';

export { UPSTREAM_API_KEY_VARS, UPSTREAM_BASE_URL_VARS, UPSTREAM_ENV_VARS, type UpstreamBaseUrlVar, type UpstreamEnvVar } from '../providers/manifest';

export { UPSTREAM_SECRET_ARN_ENV } from './stack-contract';
import { UPSTREAM_SECRET_ARN_ENV } from './stack-contract';

/**
 * How long a fetched secret is served before the next call fetches it again: 5 minutes (ms), so a key
 * rotated with `put-secret-value` reaches every warm container within ~5 min, at the cost of one
 * GetSecretValue (~10–30 ms) per container per 5 min.
 */
export const UPSTREAM_SECRET_MAX_AGE_MS = 5 * 60_000;

/**
 * After a failed refresh, how long (ms) the last good value keeps being served before the next try,
 * so a Secrets Manager outage costs one failed call per 30 s, not one per request.
 */
const RETRY_AFTER_FAILED_REFRESH_MS = 30_000;

/** Upstream variable name -> value; `undefined` when set nowhere (or set to an empty string). */
export type UpstreamCredentials = Readonly<Record<string, string | undefined>>;

interface CacheEntry {
  promise: Promise<UpstreamCredentials>;
  /** `Date.now()` ms after which the next call fetches again. */
  expiresAt: number;
}

let client: SecretsManagerClient | undefined;
let cache: CacheEntry | undefined;
let lastGood: UpstreamCredentials | undefined;

/**
 * The upstream credentials: env values for {@link UPSTREAM_ENV_VARS}, overlaid with the JSON object in
 * the secret named by `UPSTREAM_SECRET_ARN` when that is set (secret wins; it may also add names).
 *
 * Call it at module load (cold start, so the fetch is part of INIT) and await it again per request: the
 * promise is shared, so a container makes one GetSecretValue per {@link UPSTREAM_SECRET_MAX_AGE_MS},
 * however many callers. A failed refresh keeps serving the last good value.
 *
 * @throws ConfigUnavailableError (503, the returned promise rejects) when the secret cannot be read
 *   (missing, access denied, Secrets Manager down), has no SecretString, is not valid JSON, is not a
 *   JSON object, or holds a non-string value. The client sees only {@link CREDENTIALS_UNAVAILABLE_MESSAGE}:
 *   no upstream can be reached without keys, which is the gateway being unavailable, not a bug (500).
 *   The detail — the secret's name and the offending key, never a value — is the error's `cause`,
 *   which the edge logs at error level with the 503. A failed first load is not cached: the next call
 *   tries again.
 */
export function loadUpstreamCredentials(): Promise<UpstreamCredentials> {
  const secretId = nonEmpty(process.env[UPSTREAM_SECRET_ARN_ENV]);
  if (secretId === undefined) return Promise.resolve(Object.freeze(readEnv()));

  const now = Date.now();
  if (cache !== undefined && now < cache.expiresAt) return cache.promise;

  const fallback = lastGood;
  const entry: CacheEntry = { promise: Promise.resolve({}), expiresAt: now + UPSTREAM_SECRET_MAX_AGE_MS };
  entry.promise = fetchSecretValues(secretId).then(
    (secretValues) => {
      const merged = Object.freeze({ ...readEnv(), ...secretValues });
      lastGood = merged;
      return merged;
    },
    (error: unknown) => {
      if (fallback !== undefined) {
        if (cache === entry) cache = { promise: Promise.resolve(fallback), expiresAt: Date.now() + RETRY_AFTER_FAILED_REFRESH_MS };
        return fallback;
      }
      if (cache === entry) cache = undefined;
      throw new ConfigUnavailableError(CREDENTIALS_UNAVAILABLE_MESSAGE, { cause: error });
    },
  );
  cache = entry;
  return entry.promise;
}

/**
 * What the client reads when the upstream keys cannot be loaded: it names neither the secret nor any
 * value (the operator finds the detail in the log line's `cause`).
 */
export const CREDENTIALS_UNAVAILABLE_MESSAGE =
  'The gateway cannot reach its upstream providers right now (their credentials could not be loaded). Please retry.';

function readEnv(): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {};
  for (const name of UPSTREAM_ENV_VARS) values[name] = nonEmpty(process.env[name]);
  return values;
}

/** The secret's JSON object with empty strings dropped (so env values under them survive the merge). */
async function fetchSecretValues(secretId: string): Promise<Record<string, string>> {
  let secretString: string | undefined;
  try {
    const response = await secretsClient(secretId).send(new GetSecretValueCommand({ SecretId: secretId }));
    secretString = response.SecretString;
  } catch (error) {
    throw new Error(`Cannot read the upstream credentials secret ${secretId}: ${errorSummary(error)}`, { cause: error });
  }
  if (secretString === undefined) {
    throw new Error(`The upstream credentials secret ${secretId} has no SecretString; store a JSON object such as {"OPENAI_API_KEY":"…"}`);
  }
  return parseSecretObject(secretId, secretString);
}

function parseSecretObject(secretId: string, secretString: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    // JSON.parse's message quotes the input, which here is the secret itself: never pass it on.
    throw new Error(`The upstream credentials secret ${secretId} is not valid JSON; store a JSON object such as {"OPENAI_API_KEY":"…"}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`The upstream credentials secret ${secretId} must be a JSON object of variable name -> string, got ${Array.isArray(parsed) ? 'an array' : typeof parsed === 'object' ? 'null' : `a ${typeof parsed}`}`);
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') {
      throw new Error(`The upstream credentials secret ${secretId} has a non-string value for ${name}; every value must be a string`);
    }
    const trimmed = nonEmpty(value);
    if (trimmed !== undefined) values[name] = trimmed;
  }
  return values;
}

/**
 * One client per container. Region: the one in the ARN when given an ARN (an imported secret may live in
 * another region than the function, and a regional endpoint only serves its own secrets), else the
 * runtime's.
 */
function secretsClient(secretId: string): SecretsManagerClient {
  client ??= new SecretsManagerClient({
    region: regionOfArn(secretId) ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION,
    // Bounded so a network problem fails INIT or the request quickly instead of hanging until the
    // function timeout; the SDK still retries (3 attempts by default).
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 },
  });
  return client;
}

function regionOfArn(secretId: string): string | undefined {
  // arn:partition:secretsmanager:region:account:secret:name
  return secretId.startsWith('arn:') ? secretId.split(':')[3] || undefined : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function errorSummary(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

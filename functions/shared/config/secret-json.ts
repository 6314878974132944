/**
 * A JSON-object secret in Secrets Manager overlaid on environment variables, read once per container
 * and refreshed every {@link SECRET_MAX_AGE_MS}: the one loader behind the upstream keys
 * (upstream-credentials.ts) and the Stripe keys (payments/stripe-client.ts).
 *
 * The secret wins over env for a name present in both. An empty string counts as "not set" on either
 * side, so a placeholder like `"MINIMAX_API_KEY": ""` left in the secret does not hide an env value.
 *
 * Why not Powertools `getSecret`: its default provider keeps its own module-level cache keyed by name.
 * Layered under our promise cache, the two TTLs add up (a rotated key could take up to 2 × maxAge to
 * show), and the provider cannot be reset between tests. We need a single-flight promise cache anyway
 * (the handler calls the loader at INIT and again per request), so GetSecretValue is called directly
 * (config/secrets-manager.ts).
 */
import { ConfigUnavailableError } from '../errors/gateway-errors';
import { getSecretString } from './secrets-manager';

/**
 * How long a fetched secret is served before the next call fetches it again: 5 minutes (ms), so a key
 * rotated with `put-secret-value` reaches every warm container within ~5 min, at the cost of one
 * GetSecretValue (~10–30 ms) per container per 5 min.
 */
export const SECRET_MAX_AGE_MS = 5 * 60_000;

/**
 * After a failed refresh, how long (ms) the last good value keeps being served before the next try,
 * so a Secrets Manager outage costs one failed call per 30 s, not one per request.
 */
const RETRY_AFTER_FAILED_REFRESH_MS = 30_000;

/** Variable name -> value; `undefined` when set nowhere (or set to an empty string). */
export type SecretValues = Readonly<Record<string, string | undefined>>;

/** What a loader reads. */
export interface SecretJsonSource {
  /** The env variable naming the secret (ARN or name); unset = env only. */
  secretIdEnv: string;
  /** The names read from env (the secret may add more). */
  envNames: readonly string[];
  /** What the secret holds, for messages: `upstream credentials`. */
  label: string;
  /** An example of its JSON, for messages: `{"OPENAI_API_KEY":"…"}`. */
  example: string;
  /** What the client reads when it cannot be loaded (names neither the secret nor a value). */
  unavailableMessage: string;
}

interface CacheEntry {
  promise: Promise<SecretValues>;
  /** `Date.now()` ms after which the next call fetches again. */
  expiresAt: number;
}

/**
 * A loader of `source`: env values for its names, overlaid with the JSON object in the secret named by
 * `process.env[secretIdEnv]` when that is set (secret wins; it may also add names). The promise is
 * shared, so a container makes one GetSecretValue per {@link SECRET_MAX_AGE_MS}, however many callers.
 * A failed refresh keeps serving the last good value.
 *
 * The loader's promise rejects with ConfigUnavailableError (503, `unavailableMessage`) when the secret
 * cannot be read (missing, access denied, Secrets Manager down), has no SecretString, is not valid JSON,
 * is not a JSON object, or holds a non-string value. The detail — the secret's name and the offending
 * key, never a value — is the error's `cause`. A failed first load is not cached.
 */
export function createSecretJsonLoader(source: SecretJsonSource): () => Promise<SecretValues> {
  let cache: CacheEntry | undefined;
  let lastGood: SecretValues | undefined;
  const readEnv = (): Record<string, string | undefined> => {
    const values: Record<string, string | undefined> = {};
    for (const name of source.envNames) values[name] = nonEmpty(process.env[name]);
    return values;
  };
  return () => {
    const secretId = nonEmpty(process.env[source.secretIdEnv]);
    if (secretId === undefined) return Promise.resolve(Object.freeze(readEnv()));

    const now = Date.now();
    if (cache !== undefined && now < cache.expiresAt) return cache.promise;

    const fallback = lastGood;
    const entry: CacheEntry = { promise: Promise.resolve({}), expiresAt: now + SECRET_MAX_AGE_MS };
    entry.promise = fetchSecretValues(secretId, source).then(
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
        throw new ConfigUnavailableError(source.unavailableMessage, { cause: error });
      },
    );
    cache = entry;
    return entry.promise;
  };
}

/** The secret's JSON object with empty strings dropped (so env values under them survive the merge). */
async function fetchSecretValues(secretId: string, source: SecretJsonSource): Promise<Record<string, string>> {
  let secretString: string | undefined;
  try {
    secretString = await getSecretString(secretId);
  } catch (error) {
    throw new Error(`Cannot read the ${source.label} secret ${secretId}: ${errorSummary(error)}`, { cause: error });
  }
  if (secretString === undefined) {
    throw new Error(`The ${source.label} secret ${secretId} has no SecretString; store a JSON object such as ${source.example}`);
  }
  return parseSecretObject(secretId, secretString, source);
}

function parseSecretObject(secretId: string, secretString: string, source: SecretJsonSource): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    // JSON.parse's message quotes the input, which here is the secret itself: never pass it on.
    throw new Error(`The ${source.label} secret ${secretId} is not valid JSON; store a JSON object such as ${source.example}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      `The ${source.label} secret ${secretId} must be a JSON object of variable name -> string, got ${Array.isArray(parsed) ? 'an array' : typeof parsed === 'object' ? 'null' : `a ${typeof parsed}`}`,
    );
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') {
      throw new Error(`The ${source.label} secret ${secretId} has a non-string value for ${name}; every value must be a string`);
    }
    const trimmed = nonEmpty(value);
    if (trimmed !== undefined) values[name] = trimmed;
  }
  return values;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function errorSummary(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

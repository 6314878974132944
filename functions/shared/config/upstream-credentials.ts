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
 * The secret wins over env for a name present in both; loading and caching are config/secret-json.ts's.
 */
import { UPSTREAM_ENV_VARS } from '../providers/manifest';
import { createSecretJsonLoader, type SecretValues } from './secret-json';

import { UPSTREAM_SECRET_ARN_ENV } from './stack-contract';

/**
 * What the client reads when the upstream keys cannot be loaded: it names neither the secret nor any
 * value (the operator finds the detail in the log line's `cause`).
 */
export const CREDENTIALS_UNAVAILABLE_MESSAGE =
  'The gateway cannot reach its upstream providers right now (their credentials could not be loaded). Please retry.';

/**
 * The upstream credentials: env values for {@link UPSTREAM_ENV_VARS}, overlaid with the JSON object in
 * the secret named by `UPSTREAM_SECRET_ARN` when that is set (secret wins; it may also add names).
 *
 * Call it at module load (cold start, so the fetch is part of INIT) and await it again per request: the
 * promise is shared, so a container makes one GetSecretValue per SECRET_MAX_AGE_MS (config/secret-json.ts, 5 minutes),
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
export const loadUpstreamCredentials: () => Promise<SecretValues> = createSecretJsonLoader({
  secretIdEnv: UPSTREAM_SECRET_ARN_ENV,
  envNames: UPSTREAM_ENV_VARS,
  label: 'upstream credentials',
  example: '{"OPENAI_API_KEY":"…"}',
  unavailableMessage: CREDENTIALS_UNAVAILABLE_MESSAGE,
});

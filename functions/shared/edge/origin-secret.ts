import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError, ConfigUnavailableError } from '../errors/gateway-errors';

/**
 * "One door": behind CloudFront, a Function URL answers only requests that carry the distribution's
 * origin secret in {@link ORIGIN_SECRET_HEADER}, a custom origin header CloudFront adds to every
 * request it forwards (CloudFront docs, "Add custom headers to origin requests"; the pattern of AWS's
 * "Restricting access to an origin with custom headers"). Anything that calls the public URL directly,
 * around CloudFront and its WAF, gets 403 before any work is done.
 *
 * The value lives in the Secrets Manager secret named by `ORIGIN_SECRET_ARN` (generated per stack),
 * as JSON `{"current":"…","previous":"…"}`: CloudFront sends `current`; during a rotation the
 * functions accept `previous` too (README, "Rotate the origin secret"). Read at INIT like the upstream
 * keys and refreshed every {@link ORIGIN_SECRET_MAX_AGE_MS}, so no request pays for a Secrets Manager
 * call. Without `ORIGIN_SECRET_ARN` (no CloudFront, `npm start`) the check is off.
 */

import { ORIGIN_SECRET_HEADER } from '../config/stack-contract';
import { config } from '../config/env';
import { getSecretString } from '../config/secrets-manager';

/** How long a read secret is trusted before the next request refreshes it (ms): 5 minutes. */
export const ORIGIN_SECRET_MAX_AGE_MS = 5 * 60_000;

/** After a failed refresh, the last good value is kept this long before the next try (ms). */
const RETRY_AFTER_FAILED_REFRESH_MS = 30_000;

/** SHA-256 digests of the accepted values (compared in constant time). */
type Accepted = readonly Buffer[];

let cache: { promise: Promise<Accepted>; expiresAt: number } | undefined;
let lastGood: Accepted | undefined;

/** 403 for a request that did not come through the distribution (OpenAI's error body; the SDK's PermissionDeniedError). */
export class DirectAccessForbiddenError extends GatewayError {
  override name = 'DirectAccessForbiddenError';
  constructor() {
    super(403, 'permission_error', 'This endpoint is served through the API base URL only; direct calls to the function URL are refused.', {
      code: 'direct_access_forbidden',
    });
  }
}

/**
 * Resolves when the request may proceed: the check is off, or `headers` carry the current or the
 * previous origin secret.
 * @throws DirectAccessForbiddenError (403) when the header is missing or wrong.
 * @throws ConfigUnavailableError (503) when the secret has never been readable in this container
 *   (fail closed: nobody is let in unchecked); the detail is the error's cause, never the value.
 */
export async function verifyOrigin(headers: Readonly<Record<string, string | undefined>>): Promise<void> {
  const secretId = config().ORIGIN_SECRET_ARN;
  if (secretId === undefined) return;
  const accepted = await acceptedValues(secretId);
  const presented = headers[ORIGIN_SECRET_HEADER];
  if (presented === undefined || presented === '') throw new DirectAccessForbiddenError();
  const digest = sha256(presented);
  // Every candidate is compared (no early exit), each in constant time.
  let match = false;
  for (const candidate of accepted) match = timingSafeEqual(candidate, digest) || match;
  if (!match) throw new DirectAccessForbiddenError();
}

/**
 * Reads the origin secret at INIT (the handlers await it at top level, beside the upstream keys).
 * Never throws: a failure is retried by the first request, which answers 503 if it fails again.
 */
export async function prefetchOriginSecret(): Promise<void> {
  const secretId = config().ORIGIN_SECRET_ARN;
  if (secretId === undefined) return;
  await acceptedValues(secretId).catch(() => undefined);
}

function acceptedValues(secretId: string): Promise<Accepted> {
  const now = Date.now();
  if (cache !== undefined && now < cache.expiresAt) return cache.promise;
  const fallback = lastGood;
  const entry = { promise: Promise.resolve<Accepted>([]), expiresAt: now + ORIGIN_SECRET_MAX_AGE_MS };
  entry.promise = readSecret(secretId).then(
    (values) => {
      lastGood = values;
      return values;
    },
    (error: unknown) => {
      if (fallback !== undefined) {
        if (cache === entry) cache = { promise: Promise.resolve(fallback), expiresAt: Date.now() + RETRY_AFTER_FAILED_REFRESH_MS };
        return fallback;
      }
      if (cache === entry) cache = undefined;
      throw new ConfigUnavailableError('The gateway cannot verify requests right now. Please retry.', { cause: error });
    },
  );
  cache = entry;
  return entry.promise;
}

async function readSecret(secretId: string): Promise<Accepted> {
  const secretString = await getSecretString(secretId);
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString ?? '');
  } catch {
    // JSON.parse's message would quote the secret: never pass it on.
    throw new Error(`The origin secret ${secretId} is not JSON; expected {"current":"…","previous":"…"}`);
  }
  const values: Buffer[] = [];
  for (const field of ['current', 'previous']) {
    const value: unknown = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, field) : undefined;
    if (typeof value === 'string' && value !== '') values.push(sha256(value));
  }
  if (values.length === 0) throw new Error(`The origin secret ${secretId} has no "current" value`);
  return values;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

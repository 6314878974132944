/**
 * Who is calling the account API: the dashboard user's Cognito JWT (id or access token of the
 * configured pool and app client), verified with `aws-jwt-verify` — signature against the pool's JWKS,
 * `iss`, `exp` (required)/`nbf`, `iat` (required, not in the future), `token_use` ∈ {id, access}, and the client id (`aud` of an id token, `client_id`
 * of an access token). The JWKS is fetched once per container (at INIT by {@link prefetchSigningKeys},
 * else on first use) and cached in memory: a valid token costs no network call. A token signed with an
 * unknown `kid` triggers at most one re-fetch per 10 s (the library's penalty box), never one per request.
 */
import { JwtVerifier } from 'aws-jwt-verify';
import { validateCognitoJwtFields } from 'aws-jwt-verify/cognito-verifier';
import { FetchError, JwtExpiredError } from 'aws-jwt-verify/error';
import { SimpleJwksCache } from 'aws-jwt-verify/jwk';
import { API_KEY_PREFIX } from '../accounts/api-key';
import { AuthenticationError, ConfigUnavailableError } from '../errors/gateway-errors';
import { identityConfig, type IdentityConfig } from './identity-config';
import { jwksFetcher } from './jwks-fetcher';

/** A verified dashboard user. */
export interface VerifiedUser {
  /** Cognito `sub` (UUID): the account id of a self-serve account. */
  sub: string;
  /** `email` claim (id tokens only; access tokens carry none). */
  email: string | undefined;
  tokenUse: 'id' | 'access';
}

type Verifier = { verify(jwt: string): Promise<Record<string, unknown>>; hydrate(): Promise<void> };

let current: { config: IdentityConfig; verifier: Verifier } | undefined;

function verifier(): Verifier {
  const config = identityConfig();
  if (current?.config !== config) {
    const v = JwtVerifier.create(
      {
        issuer: config.issuer,
        jwksUri: config.jwksUri,
        audience: null, // checked per token use below: id tokens carry `aud`, access tokens `client_id`
        customJwtCheck: ({ payload }) => {
          validateCognitoJwtFields(payload, { tokenUse: null, clientId: config.userPoolClientId });
          assertIssuedInThePast(payload);
        },
      },
      { jwksCache: new SimpleJwksCache({ fetcher: jwksFetcher }) },
    );
    current = { config, verifier: v as unknown as Verifier };
  }
  return current.verifier;
}

/** How far in the future a token's `iat` may lie (clock skew between Cognito and us), seconds. */
export const IAT_SKEW_SECONDS = 60;

/**
 * A token must say when it ends and must not be issued in the future: aws-jwt-verify
 * checks `exp` only when present, and `iat` not at all. Cognito always sets both.
 * @throws Error (the verifier turns it into a refusal: 401 `invalid_token`).
 */
function assertIssuedInThePast(payload: { exp?: unknown; iat?: unknown }): void {
  if (typeof payload.exp !== 'number') throw new Error('token has no exp');
  if (typeof payload.iat !== 'number' || payload.iat > Date.now() / 1000 + IAT_SKEW_SECONDS) throw new Error('token has no iat, or one in the future');
}

/** 401 for a bad sign-in token; never echoes the token. */
function invalidToken(message: string, code: string | null): AuthenticationError {
  return new AuthenticationError(message, code);
}

/**
 * The bearer token of an account-API request.
 * @throws AuthenticationError (401) when absent, or when it is an `sk-mux-` API key (these routes take
 *         the dashboard sign-in token only).
 */
export function bearerToken(authorization: string | undefined): string {
  const token = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) {
    throw invalidToken('This route needs your dashboard sign-in token: Authorization: Bearer <Cognito JWT>.', null);
  }
  if (token.startsWith(API_KEY_PREFIX) || token.startsWith('sk-')) {
    throw invalidToken('The account API takes your dashboard sign-in token (a Cognito JWT), not an API key.', 'invalid_token');
  }
  return token;
}

/**
 * Verifies a Cognito JWT of this deployment's pool and app client.
 * @throws AuthenticationError (401, code `token_expired` or `invalid_token`) for an expired, forged,
 *         foreign-issuer or other-client token; ConfigUnavailableError (503) when the signing keys
 *         cannot be fetched, or sign-in is not configured.
 */
export async function verifyUserToken(token: string): Promise<VerifiedUser> {
  let payload: Record<string, unknown>;
  try {
    payload = await verifier().verify(token);
  } catch (err) {
    if (err instanceof JwtExpiredError) throw invalidToken('Your sign-in has expired. Sign in again.', 'token_expired');
    if (err instanceof FetchError) {
      throw new ConfigUnavailableError('The sign-in service cannot be reached right now. Please retry.', { cause: err });
    }
    throw invalidToken('Your sign-in token is not valid for this service. Sign in again.', 'invalid_token');
  }
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '') throw invalidToken('Your sign-in token has no subject.', 'invalid_token');
  return {
    sub,
    email: typeof payload.email === 'string' ? payload.email : undefined,
    tokenUse: payload.token_use === 'id' ? 'id' : 'access',
  };
}

/**
 * Fetches the pool's signing keys during INIT, so no request waits for them. Never throws and never
 * waits longer than `maxWaitMs`; resolves at once when sign-in is not configured.
 */
export async function prefetchSigningKeys(maxWaitMs = 2_000): Promise<void> {
  let v: Verifier;
  try {
    v = verifier();
  } catch {
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([v.hydrate().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
  clearTimeout(timer);
}

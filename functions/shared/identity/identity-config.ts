/**
 * Where the dashboard's users sign in: the Cognito user pool and app client, read from the environment
 * through zod on first use (once per container). The same settings serve AWS and the local emulator:
 * only the issuer, the JWKS URI and the endpoint differ, so one code path verifies both pools' tokens.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `COGNITO_USER_POOL_ID` | (none: the account API answers 503) | e.g. `eu-west-1_AbC123xyz`; its prefix is the region |
 * | `COGNITO_CLIENT_ID` | (none) | the dashboard's app client id (the `aud` of id tokens, `client_id` of access tokens) |
 * | `COGNITO_ISSUER` | `https://cognito-idp.<region>.amazonaws.com/<pool>` | the `iss` every token must carry |
 * | `COGNITO_JWKS_URI` | `<issuer>/.well-known/jwks.json` | where the signing keys are fetched (once per container) |
 * | `COGNITO_ENDPOINT` | (AWS's own) | the Cognito API endpoint when it is not AWS's (the local emulator) |
 */
import * as z from '../validation/zod';
import { ConfigUnavailableError } from '../openai/errors';
import { config } from '../config/env';

/** The settings above, resolved. */
export interface IdentityConfig {
  /** AWS region of the pool (the prefix of its id, e.g. `eu-west-1`; `local` for the emulator). */
  region: string;
  userPoolId: string;
  userPoolClientId: string;
  /** Expected `iss` claim. */
  issuer: string;
  /** JWKS document URL. */
  jwksUri: string;
  /** Cognito API endpoint, only when it is not AWS's own (the local emulator). */
  cognitoEndpoint: string | undefined;
}

const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.optional(z.url()));
const envSchema = z.object({
  COGNITO_USER_POOL_ID: z.string().check(z.regex(/^[a-z0-9-]+_[0-9A-Za-z]+$/, 'must look like <region>_<id>')),
  COGNITO_CLIENT_ID: z.string().check(z.minLength(1)),
  COGNITO_ISSUER: optionalUrl,
  COGNITO_JWKS_URI: optionalUrl,
  COGNITO_ENDPOINT: optionalUrl,
});

/**
 * Parses the identity settings from `env`.
 * @returns undefined when `COGNITO_USER_POOL_ID` is not set (sign-in not configured).
 * @throws Error naming the variable when a value is malformed.
 */
export function parseIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig | undefined {
  if (!env.COGNITO_USER_POOL_ID) return undefined;
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid identity setting ${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`);
  }
  const e = parsed.data;
  const region = e.COGNITO_USER_POOL_ID.split('_')[0] ?? '';
  const issuer = (e.COGNITO_ISSUER ?? `https://cognito-idp.${region}.amazonaws.com/${e.COGNITO_USER_POOL_ID}`).replace(/\/+$/, '');
  return {
    region,
    userPoolId: e.COGNITO_USER_POOL_ID,
    userPoolClientId: e.COGNITO_CLIENT_ID,
    issuer,
    jwksUri: e.COGNITO_JWKS_URI ?? `${issuer}/.well-known/jwks.json`,
    cognitoEndpoint: e.COGNITO_ENDPOINT,
  };
}

let cached: { config: IdentityConfig | undefined } | undefined;

/**
 * This container's identity settings (parsed once).
 * @throws ConfigUnavailableError (503, code `sign_in_not_configured`) when no user pool is configured.
 */
export function identityConfig(): IdentityConfig {
  const c = config();
  cached ??= { config: parseIdentityConfig({ COGNITO_USER_POOL_ID: c.COGNITO_USER_POOL_ID, COGNITO_CLIENT_ID: c.COGNITO_CLIENT_ID, COGNITO_ISSUER: c.COGNITO_ISSUER, COGNITO_JWKS_URI: c.COGNITO_JWKS_URI, COGNITO_ENDPOINT: c.COGNITO_ENDPOINT }) };
  if (cached.config === undefined) {
    throw new ConfigUnavailableError('Account sign-in is not configured on this deployment (no Cognito user pool).', {
      code: 'sign_in_not_configured',
    });
  }
  return cached.config;
}

/** Forgets the parsed settings (tests that point the process at another pool). */
export function resetIdentityConfig(): void {
  cached = undefined;
}

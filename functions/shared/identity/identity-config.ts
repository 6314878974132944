/**
 * Where the dashboard's users sign in: the Cognito user pool and app client, read from config/env.ts
 * at call time. The same settings serve AWS and the local emulator:
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
import { ConfigUnavailableError } from '../errors/gateway-errors';
import { config, ConfigError } from '../config/env';

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

/**
 * This container's identity settings, from config/env.ts at call time (the schema there validates each
 * variable; the defaults of the issuer and JWKS URI are derived here from the pool id).
 * @throws ConfigUnavailableError (503, code `sign_in_not_configured`) when no user pool is configured;
 *         ConfigError naming `COGNITO_CLIENT_ID` when a pool is set without its app client.
 */
export function identityConfig(): IdentityConfig {
  const c = config();
  if (c.COGNITO_USER_POOL_ID === undefined) {
    throw new ConfigUnavailableError('Account sign-in is not configured on this deployment (no Cognito user pool).', {
      code: 'sign_in_not_configured',
    });
  }
  if (c.COGNITO_CLIENT_ID === undefined) throw new ConfigError('COGNITO_CLIENT_ID', 'an app client id when COGNITO_USER_POOL_ID is set', '');
  const region = c.COGNITO_USER_POOL_ID.split('_')[0] ?? '';
  const issuer = (c.COGNITO_ISSUER ?? `https://cognito-idp.${region}.amazonaws.com/${c.COGNITO_USER_POOL_ID}`).replace(/\/+$/, '');
  return {
    region,
    userPoolId: c.COGNITO_USER_POOL_ID,
    userPoolClientId: c.COGNITO_CLIENT_ID,
    issuer,
    jwksUri: c.COGNITO_JWKS_URI ?? `${issuer}/.well-known/jwks.json`,
    cognitoEndpoint: c.COGNITO_ENDPOINT,
  };
}

/**
 * `GET /config.json` (public, no auth): what a browser needs to sign in — `{region, userPoolId,
 * userPoolClientId, cognitoEndpoint?}`; `cognitoEndpoint` only where Cognito is not AWS's own (locally,
 * the emulator). Cached by browsers and CloudFront for 5 minutes.
 */
import type { JsonResult } from '../http/types';
import { identityConfig } from '../identity/identity-config';

/** The public sign-in configuration. @throws ConfigUnavailableError (503) when sign-in is not configured. */
export function configRoute(): JsonResult {
  const c = identityConfig();
  return {
    kind: 'json',
    status: 200,
    headers: { 'cache-control': 'public, max-age=300' },
    body: {
      region: c.region,
      userPoolId: c.userPoolId,
      userPoolClientId: c.userPoolClientId,
      ...(c.cognitoEndpoint ? { cognitoEndpoint: c.cognitoEndpoint } : {}),
    },
  };
}

/**
 * The verified email of a signed-in user whose token carries none (access tokens): Cognito `GetUser`,
 * authorised by the access token itself (no IAM permission involved; Cognito API Reference, GetUser).
 * Called once per account, when it is created; the client is made once per container.
 */
import { CognitoIdentityProviderClient, GetUserCommand } from '@aws-sdk/client-cognito-identity-provider';
import { AuthenticationError, ConfigUnavailableError } from '../errors/gateway-errors';
import { identityConfig } from './identity-config';

let client: CognitoIdentityProviderClient | undefined;

/**
 * The `email` attribute of the user of `accessToken`.
 * @throws AuthenticationError (401) when Cognito refuses the token or the user has no email;
 *         ConfigUnavailableError (503) when Cognito cannot be reached.
 */
export async function emailOfAccessToken(accessToken: string): Promise<string> {
  const config = identityConfig();
  client ??= new CognitoIdentityProviderClient({
    region: config.region,
    ...(config.cognitoEndpoint ? { endpoint: config.cognitoEndpoint } : {}),
    // GetUser is unsigned (the access token authorises it); dummy credentials keep the SDK from
    // searching the default chain for ones it does not need.
    credentials: { accessKeyId: 'unused', secretAccessKey: 'unused' },
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 },
  });
  let attributes: Array<{ Name?: string; Value?: string }> | undefined;
  try {
    attributes = (await client.send(new GetUserCommand({ AccessToken: accessToken }))).UserAttributes;
  } catch (err) {
    const name = (err as { name?: string }).name ?? '';
    if (/NotAuthorized|UserNotFound|InvalidParameter/.test(name))
      throw new AuthenticationError('Your sign-in is no longer valid. Sign in again.', 'invalid_token');
    throw new ConfigUnavailableError('The sign-in service cannot be reached right now. Please retry.', { cause: err });
  }
  const email = attributes?.find((a) => a.Name === 'email')?.Value;
  if (!email) throw new AuthenticationError('Your sign-in has no email address.', 'invalid_token');
  return email;
}

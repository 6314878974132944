/**
 * Signing up as the dashboard does (web/src/auth/cognito.ts): SignUp with the email as the username on
 * the dashboard's public app client, ConfirmSignUp with the emailed code, then InitiateAuth
 * (USER_PASSWORD_AUTH) — operations Cognito takes without AWS credentials. Where the operator's AWS
 * credentials allow `cognito-idp:AdminConfirmSignUp` on the pool, `admin` confirms without a code
 * instead. The user deletes itself at the end (DeleteUser with its access token: no credentials either).
 */
import { randomBytes } from 'node:crypto';
import {
  AdminConfirmSignUpCommand,
  CognitoIdentityProviderClient,
  ConfirmSignUpCommand,
  DeleteUserCommand,
  InitiateAuthCommand,
  SignUpCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import type { SiteConfig } from './account-api';

/** How the sign-up is confirmed: the emailed code (asked for), or AdminConfirmSignUp with AWS credentials. */
export type ConfirmMode = 'code' | 'admin';

/** A signed-in smoke user. */
export interface SmokeUser {
  email: string;
  /** Cognito `sub`: the id of the account the account API makes for it. */
  sub: string;
  accessToken: string;
}

/** A password the pool's policy takes (12+ characters, upper and lower case, a digit, a symbol), new each run. */
export function newPassword(): string {
  return `Smoke-7-${randomBytes(12).toString('hex')}`;
}

/** A Cognito client for the config's pool (AWS's endpoint for its region, or the one config names). */
export function cognitoClient(config: SiteConfig): CognitoIdentityProviderClient {
  return new CognitoIdentityProviderClient({ region: config.region, ...(config.cognitoEndpoint ? { endpoint: config.cognitoEndpoint } : {}) });
}

/** What {@link signUp} needs besides the pool. */
export interface SignUpOptions {
  email: string;
  password: string;
  confirm: ConfirmMode;
  /** Asks for the code Cognito sent to `email` (with `confirm: 'code'`). */
  askCode: (email: string) => Promise<string>;
}

/**
 * Sign-up → confirmation → sign-in.
 * @returns the user, and how it was confirmed (for the step's line).
 * @throws the SDK's error of the call that failed (UsernameExistsException, CodeMismatchException, …).
 */
export async function signUp(client: CognitoIdentityProviderClient, config: SiteConfig, o: SignUpOptions): Promise<{ user: SmokeUser; how: string }> {
  const ClientId = config.userPoolClientId;
  const up = await client.send(new SignUpCommand({ ClientId, Username: o.email, Password: o.password, UserAttributes: [{ Name: 'email', Value: o.email }] }));
  if (!up.UserSub) throw new Error('SignUp answered without a UserSub');
  let how = 'confirmed at sign-up';
  if (up.UserConfirmed !== true) {
    if (o.confirm === 'admin') {
      await client.send(new AdminConfirmSignUpCommand({ UserPoolId: config.userPoolId, Username: o.email }));
      how = 'confirmed with AdminConfirmSignUp';
    } else {
      const code = (await o.askCode(o.email)).trim();
      if (code === '') throw new Error(`no confirmation code was given for ${o.email}`);
      await client.send(new ConfirmSignUpCommand({ ClientId, Username: o.email, ConfirmationCode: code }));
      how = 'confirmed with the emailed code';
    }
  }
  const auth = await client.send(
    new InitiateAuthCommand({ ClientId, AuthFlow: 'USER_PASSWORD_AUTH', AuthParameters: { USERNAME: o.email, PASSWORD: o.password } }),
  );
  const accessToken = auth.AuthenticationResult?.AccessToken;
  if (!accessToken) throw new Error(`sign-in answered ${auth.ChallengeName ? `the challenge ${auth.ChallengeName}` : 'no tokens'}`);
  return { user: { email: o.email, sub: up.UserSub, accessToken }, how };
}

/** The user deletes itself (its account's items stay: the account API deletes no account). */
export async function deleteUser(client: CognitoIdentityProviderClient, user: SmokeUser): Promise<void> {
  await client.send(new DeleteUserCommand({ AccessToken: user.accessToken }));
}

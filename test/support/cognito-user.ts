/** Signing up and in as a dashboard user would, against the gateway's Cognito emulator (real SDK calls). */
import { randomBytes } from 'node:crypto';
import { CognitoIdentityProviderClient, ConfirmSignUpCommand, InitiateAuthCommand, SignUpCommand } from '@aws-sdk/client-cognito-identity-provider';
import type { RunningGateway } from '../../local/gateway';

/** What a signed-in user holds. */
export interface SignedInUser {
  email: string;
  password: string;
  sub: string;
  accessToken: string;
  idToken: string;
  refreshToken: string;
}

/** A Cognito client for the gateway's emulator. */
export function cognitoClient(gw: RunningGateway): CognitoIdentityProviderClient {
  if (!gw.cognito) throw new Error('the gateway was started without { cognito }');
  return new CognitoIdentityProviderClient({ endpoint: gw.cognito.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}

/** A fresh unique email address. */
export function newEmail(tag = 'user'): string {
  return `${tag}-${randomBytes(5).toString('hex')}@example.com`;
}

/** A password the pool's policy accepts. */
export const GOOD_PASSWORD = 'Correct-Horse-7-Battery';

/** Signs in with a password (USER_PASSWORD_AUTH). */
export async function signIn(gw: RunningGateway, email: string, password = GOOD_PASSWORD): Promise<Omit<SignedInUser, 'sub'>> {
  const client = cognitoClient(gw);
  try {
    const out = await client.send(
      new InitiateAuthCommand({
        AuthFlow: 'USER_PASSWORD_AUTH',
        ClientId: gw.cognito!.userPoolClientId,
        AuthParameters: { USERNAME: email, PASSWORD: password },
      }),
    );
    const r = out.AuthenticationResult;
    if (!r?.AccessToken || !r.IdToken || !r.RefreshToken) throw new Error('no tokens');
    return { email, password, accessToken: r.AccessToken, idToken: r.IdToken, refreshToken: r.RefreshToken };
  } finally {
    client.destroy();
  }
}

/** Sign-up → the emailed code → confirm → sign-in. */
export async function signUpAndSignIn(gw: RunningGateway, email = newEmail(), password = GOOD_PASSWORD): Promise<SignedInUser> {
  const client = cognitoClient(gw);
  try {
    const up = await client.send(
      new SignUpCommand({ ClientId: gw.cognito!.userPoolClientId, Username: email, Password: password, UserAttributes: [{ Name: 'email', Value: email }] }),
    );
    const code = await gw.cognito!.confirmationCode(email);
    await client.send(new ConfirmSignUpCommand({ ClientId: gw.cognito!.userPoolClientId, Username: email, ConfirmationCode: code }));
    return { ...(await signIn(gw, email, password)), sub: String(up.UserSub) };
  } finally {
    client.destroy();
  }
}

/** fetch against the gateway's origin with a bearer token; returns status and parsed JSON. */
export async function call(
  gw: RunningGateway,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${gw.origin}${path}`, {
    method,
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

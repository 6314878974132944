import { ApiError, NETWORK_ERROR_MESSAGE } from '../api/api-error';
import type { SiteConfig } from '../api/types';

/**
 * Amazon Cognito user pools through their JSON API, with fetch: no AWS SDK or Amplify in the page.
 * Every call is `POST <endpoint>` with `Content-Type: application/x-amz-json-1.1` and
 * `X-Amz-Target: AWSCognitoIdentityProviderService.<Operation>`; these operations are public (the app
 * client has no secret), so no request signing. Errors come back as `{__type, message}` and become
 * {@link ApiError}s with Cognito's own message. Source: Amazon Cognito API Reference (InitiateAuth,
 * SignUp, ConfirmSignUp, ResendConfirmationCode, ForgotPassword, ConfirmForgotPassword, RevokeToken).
 *
 * The email is the user name (the pool signs people in by email).
 */

/** Tokens from a successful sign-in or refresh. `expiresIn` is seconds (access and id token lifetime). */
export interface CognitoTokens {
  accessToken: string;
  idToken: string;
  /** Present on sign-in; a refresh answers without one (the old one stays valid). */
  refreshToken?: string;
  expiresIn: number;
}

/** The user-pool operations the dashboard uses. */
export interface CognitoClient {
  /** Creates the user; `confirmed` false = a code was sent to the email. */
  signUp(email: string, password: string): Promise<{ confirmed: boolean }>;
  confirmSignUp(email: string, code: string): Promise<void>;
  resendConfirmationCode(email: string): Promise<void>;
  /** USER_PASSWORD_AUTH. Throws ApiError with code `UserNotConfirmedException` for an unconfirmed user. */
  signIn(email: string, password: string): Promise<CognitoTokens>;
  /** REFRESH_TOKEN_AUTH. */
  refresh(refreshToken: string): Promise<CognitoTokens>;
  forgotPassword(email: string): Promise<void>;
  confirmForgotPassword(email: string, code: string, newPassword: string): Promise<void>;
  /** Revokes the refresh token and the tokens issued from it (sign-out). */
  revoke(refreshToken: string): Promise<void>;
}

/** AWS's own endpoint for the pool's region, unless config names another (locally: cognito-local). */
export function cognitoEndpoint(config: SiteConfig): string {
  return config.cognitoEndpoint ?? `https://cognito-idp.${config.region}.amazonaws.com/`;
}

/** Builds the client for one user pool app client. */
export function createCognitoClient(config: SiteConfig, fetchImpl: typeof fetch = (...args) => fetch(...args)): CognitoClient {
  const endpoint = cognitoEndpoint(config);
  const ClientId = config.userPoolClientId;
  const call = (operation: string, body: Record<string, unknown>): Promise<Record<string, unknown>> => invoke(fetchImpl, endpoint, operation, body);
  return {
    async signUp(email, password) {
      const out = await call('SignUp', { ClientId, Username: email, Password: password, UserAttributes: [{ Name: 'email', Value: email }] });
      return { confirmed: out.UserConfirmed === true };
    },
    async confirmSignUp(email, code) {
      await call('ConfirmSignUp', { ClientId, Username: email, ConfirmationCode: code });
    },
    async resendConfirmationCode(email) {
      await call('ResendConfirmationCode', { ClientId, Username: email });
    },
    async signIn(email, password) {
      const out = await call('InitiateAuth', { ClientId, AuthFlow: 'USER_PASSWORD_AUTH', AuthParameters: { USERNAME: email, PASSWORD: password } });
      return tokensOf(out);
    },
    async refresh(refreshToken) {
      const out = await call('InitiateAuth', { ClientId, AuthFlow: 'REFRESH_TOKEN_AUTH', AuthParameters: { REFRESH_TOKEN: refreshToken } });
      return tokensOf(out);
    },
    async forgotPassword(email) {
      await call('ForgotPassword', { ClientId, Username: email });
    },
    async confirmForgotPassword(email, code, newPassword) {
      await call('ConfirmForgotPassword', { ClientId, Username: email, ConfirmationCode: code, Password: newPassword });
    },
    async revoke(refreshToken) {
      await call('RevokeToken', { ClientId, Token: refreshToken });
    },
  };
}

function tokensOf(out: Record<string, unknown>): CognitoTokens {
  const result = out.AuthenticationResult as Record<string, unknown> | undefined;
  if (result === undefined) {
    // A challenge (e.g. NEW_PASSWORD_REQUIRED for a user an operator created) this page does not handle.
    const challenge = typeof out.ChallengeName === 'string' ? out.ChallengeName : 'an unknown step';
    throw new ApiError(
      `Sign-in needs ${challenge}, which this page does not support. Reset your password with "Forgot your password?".`,
      400,
      'ChallengeRequired',
    );
  }
  const accessToken = result.AccessToken;
  const idToken = result.IdToken;
  if (typeof accessToken !== 'string' || typeof idToken !== 'string') throw new ApiError('Sign-in answered without tokens.', 502);
  return {
    accessToken,
    idToken,
    ...(typeof result.RefreshToken === 'string' ? { refreshToken: result.RefreshToken } : {}),
    expiresIn: typeof result.ExpiresIn === 'number' ? result.ExpiresIn : 3600,
  };
}

async function invoke(fetchImpl: typeof fetch, endpoint: string, operation: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetchImpl(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `AWSCognitoIdentityProviderService.${operation}` },
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    throw new ApiError(NETWORK_ERROR_MESSAGE, 0);
  }
  const text = await response.text().catch(() => '');
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    /* not JSON: handled below */
  }
  if (response.ok) return parsed;
  // `__type` may be qualified (`com.amazonaws…#NotAuthorizedException`); the message is `message` or `Message`.
  const type = typeof parsed.__type === 'string' ? (parsed.__type.split('#').pop() ?? null) : null;
  const raw = typeof parsed.message === 'string' ? parsed.message : typeof parsed.Message === 'string' ? parsed.Message : '';
  throw new ApiError(cognitoMessage(type, raw, response.status), response.status, type);
}

/** Cognito's message, in words a person can act on where Cognito's own is terse or technical. */
function cognitoMessage(type: string | null, raw: string, status: number): string {
  switch (type) {
    case 'UsernameExistsException':
      return 'An account with this email already exists. Sign in, or reset your password.';
    case 'CodeMismatchException':
      return 'That code is not right. Check the email and try again.';
    case 'ExpiredCodeException':
      return 'That code has expired. Ask for a new one.';
    case 'LimitExceededException':
    case 'TooManyRequestsException':
      return 'Too many attempts. Wait a few minutes and try again.';
    default:
      if (raw !== '') return /[.!?]$/.test(raw) ? raw : `${raw}.`;
      return `Sign-in service error (HTTP ${status}).`;
  }
}

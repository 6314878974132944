/**
 * The user pool's and dashboard app client's settings, as data in the Cognito API's own shapes: the CDK
 * construct (identity.ts) deploys exactly these, and `npm start` creates the local emulator's pool and
 * client from them (local/cognito-local.ts), so local sign-in behaves like the deployed one.
 */
import type { CreateUserPoolClientCommandInput, CreateUserPoolCommandInput } from '@aws-sdk/client-cognito-identity-provider';

/**
 * The pool: email is the username and must be verified (a code is mailed at sign-up), anyone may sign
 * up, and passwords are strong — at least 12 characters with upper and lower case, a digit and a symbol
 * (NIST SP 800-63B asks for length first; Cognito's own default is 8). Recovery by verified email only.
 */
export const USER_POOL_SETTINGS = {
  UsernameAttributes: ['email'],
  AutoVerifiedAttributes: ['email'],
  UsernameConfiguration: { CaseSensitive: false },
  Policies: {
    PasswordPolicy: {
      MinimumLength: 12,
      RequireUppercase: true,
      RequireLowercase: true,
      RequireNumbers: true,
      RequireSymbols: true,
      TemporaryPasswordValidityDays: 3,
    },
  },
  AdminCreateUserConfig: { AllowAdminCreateUserOnly: false },
  AccountRecoverySetting: { RecoveryMechanisms: [{ Name: 'verified_email', Priority: 1 }] },
} satisfies Omit<CreateUserPoolCommandInput, 'PoolName'>;

/**
 * The dashboard's app client: a public client (a browser cannot keep a secret) that signs in with a
 * password (USER_PASSWORD_AUTH) or SRP, and refreshes its tokens; access and id tokens live 60 minutes,
 * refresh tokens 30 days. User-existence errors are hidden (sign-in does not tell which emails exist).
 */
export const DASHBOARD_CLIENT_SETTINGS = {
  GenerateSecret: false,
  ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_USER_SRP_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
  PreventUserExistenceErrors: 'ENABLED',
  EnableTokenRevocation: true,
  AccessTokenValidity: 60,
  IdTokenValidity: 60,
  RefreshTokenValidity: 30,
  TokenValidityUnits: { AccessToken: 'minutes', IdToken: 'minutes', RefreshToken: 'days' },
} satisfies Omit<CreateUserPoolClientCommandInput, 'UserPoolId' | 'ClientName'>;

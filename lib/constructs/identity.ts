import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  OAuthScope,
  StandardThreatProtectionMode,
  UserPool,
  UserPoolClient,
  type UserPoolEmail,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { DASHBOARD_CLIENT_SETTINGS, USER_POOL_SETTINGS } from './identity-settings';

/**
 * Who may use the dashboard: an Amazon Cognito user pool (email is the username and is verified by a
 * mailed code; anyone may sign up; strong passwords) and the dashboard's public app client
 * (USER_PASSWORD_AUTH and SRP, refresh tokens, no secret). Settings from identity-settings.ts, which
 * `npm start` also gives the local emulator. The pool is retained with the stack's data: deleting it
 * would orphan every account (account id = the user's `sub`).
 *
 * Free tokens are granted by the account function on the user's first call, not by a post-confirmation
 * trigger (accounts/self-serve-account.ts says why), so the pool has no Lambda triggers.
 *
 * Threat protection (on by default) puts the pool on Cognito's Plus feature plan with standard
 * threat protection in audit mode: Cognito scores password and SRP sign-ins for risk (adaptive
 * authentication) and checks passwords against compromised-credential lists, and publishes what it
 * finds to CloudWatch metrics and the user event history, but blocks nothing (AWS advises two weeks or more of audit before full
 * enforcement: Cognito Developer Guide, "Threat protection"). Plus is billed per monthly active user
 * with no free tier (README, "Deploy": the `cognitoThreatProtection` option).
 */
/** A Cognito hosted sign-in domain (`<prefix>.auth.<region>.amazoncognito.com`) and where it may send users back. */
export interface HostedSignIn {
  readonly domainPrefix: string;
  /** https URLs (http only for localhost) the OAuth code flow may redirect to; also the sign-out URLs. */
  readonly callbackUrls: readonly string[];
}

/** Props of {@link Identity}. */
export interface IdentityProps {
  /** With a hosted domain, the dashboard client also allows the OAuth authorization-code flow; default none. */
  readonly hostedSignIn?: HostedSignIn | undefined;
  /** How the pool sends its mail (MailSender.userPoolEmail: a verified SES identity); default Cognito's own sender and daily quota. */
  readonly email?: UserPoolEmail | undefined;
  /** Plus feature plan with standard threat protection in audit mode (see the class comment); default true. `false`: the Essentials plan, threat protection off. */
  readonly threatProtection?: boolean | undefined;
}

export class Identity extends Construct {
  readonly userPool: UserPool;
  readonly dashboardClient: UserPoolClient;

  constructor(scope: Construct, id: string, props: IdentityProps = {}) {
    super(scope, id);
    const password = USER_POOL_SETTINGS.Policies.PasswordPolicy;
    const threatProtection = props.threatProtection ?? true;
    this.userPool = new UserPool(this, 'Users', {
      userPoolName: 'modelmux-users',
      selfSignUpEnabled: !USER_POOL_SETTINGS.AdminCreateUserConfig.AllowAdminCreateUserOnly,
      signInAliases: { email: true },
      signInCaseSensitive: USER_POOL_SETTINGS.UsernameConfiguration.CaseSensitive,
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      passwordPolicy: {
        minLength: password.MinimumLength,
        requireUppercase: password.RequireUppercase,
        requireLowercase: password.RequireLowercase,
        requireDigits: password.RequireNumbers,
        requireSymbols: password.RequireSymbols,
        tempPasswordValidity: Duration.days(password.TemporaryPasswordValidityDays),
      },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      ...(props.email === undefined ? {} : { email: props.email }),
      mfa: Mfa.OPTIONAL,
      mfaSecondFactor: { sms: false, otp: true },
      // Off names Essentials and OFF outright, so turning it off after a deploy with it on leaves the Plus plan's per-user price.
      featurePlan: threatProtection ? FeaturePlan.PLUS : FeaturePlan.ESSENTIALS,
      standardThreatProtectionMode: threatProtection ? StandardThreatProtectionMode.AUDIT_ONLY : StandardThreatProtectionMode.NO_ENFORCEMENT,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // cdk-nag AwsSolutions findings answered by design (test/lib/cdk-nag.test.ts).
    const acknowledge = (id: string, reason: string): void => Validations.of(this.userPool).acknowledge({ id: `AwsSolutions::AwsSolutions-${id}`, reason });
    acknowledge('COG2', 'Self-serve sign-up for an API dashboard: MFA (TOTP) is offered to every user, not forced on them.');
    if (!threatProtection)
      acknowledge(
        'COG8',
        'Threat protection turned off by the operator (context cognitoThreatProtection=false): the Plus feature plan is billed per monthly active user with no free tier. The one-grant-per-person rule and the optional WAF remain.',
      );
    const c = DASHBOARD_CLIENT_SETTINGS;
    const hosted = props.hostedSignIn;
    if (hosted !== undefined) this.userPool.addDomain('Hosted', { cognitoDomain: { domainPrefix: hosted.domainPrefix } });
    this.dashboardClient = this.userPool.addClient('Dashboard', {
      userPoolClientName: 'modelmux-dashboard',
      generateSecret: c.GenerateSecret,
      authFlows: { userPassword: true, userSrp: true },
      // The dashboard signs in with USER_PASSWORD_AUTH / SRP against the API: no OAuth flows and no
      // callback URLs (CDK's default would allow the implicit and code flows to https://example.com),
      // unless a hosted domain is configured, which gets the code flow to its own callback URLs only.
      ...(hosted === undefined
        ? { disableOAuth: true }
        : {
            oAuth: {
              flows: { authorizationCodeGrant: true },
              scopes: [OAuthScope.OPENID, OAuthScope.EMAIL],
              callbackUrls: [...hosted.callbackUrls],
              logoutUrls: [...hosted.callbackUrls],
            },
          }),
      preventUserExistenceErrors: c.PreventUserExistenceErrors === 'ENABLED',
      enableTokenRevocation: c.EnableTokenRevocation,
      accessTokenValidity: Duration.minutes(c.AccessTokenValidity),
      idTokenValidity: Duration.minutes(c.IdTokenValidity),
      refreshTokenValidity: Duration.days(c.RefreshTokenValidity),
    });
  }

  /** `COGNITO_USER_POOL_ID` and `COGNITO_CLIENT_ID` for the account function (functions/shared/identity). */
  get environment(): Record<string, string> {
    return { COGNITO_USER_POOL_ID: this.userPool.userPoolId, COGNITO_CLIENT_ID: this.dashboardClient.userPoolClientId };
  }
}

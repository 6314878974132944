import { Stack } from 'aws-cdk-lib';
import { UserPoolEmail } from 'aws-cdk-lib/aws-cognito';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/**
 * The verified Amazon SES identity the deployment sends mail from (`-c emailFrom=…`, lib/stack-context.ts).
 * `identity` is what was verified in SES: the address itself, or its domain.
 */
export interface MailSenderProps {
  /** The sender address, e.g. `billing@example.com`. */
  readonly from: string;
  /** The display name shown with it (printable ASCII without `"`, `\`, `<`, `>`); default none. */
  readonly fromName?: string | undefined;
  /** The SES identity that verifies `from`: `from` itself or its domain; default `from`. */
  readonly identity?: string | undefined;
}

/**
 * One verified SES identity, in the stack's region, used for every mail the deployment sends:
 * - the functions that send the account emails (low balance, a key at its spend limit, a failed auto
 *   top-up: functions/shared/notify/, SESv2 SendEmail; the settle and account functions) get the sender
 *   as `EMAIL_FROM` ({@link environment}) and `ses:SendEmail` on this identity's ARN only, only from
 *   this address ({@link grantSend});
 * - the Cognito user pool sends its codes through it too ({@link userPoolEmail}: EmailConfiguration
 *   `DEVELOPER` with this identity's `SourceArn`), past Cognito's own small daily quota. Cognito sends
 *   through its service-linked role AWSServiceRoleForAmazonCognitoIdpEmailService, so the identity
 *   needs no sending-authorization policy
 *   (https://docs.aws.amazon.com/cognito/latest/developerguide/cognito-user-pool-settings-ses-authorization-to-send-email.html).
 * Creates no resource: the identity is verified in SES beforehand (README, "Email").
 */
export class MailSender extends Construct {
  /** `arn:<partition>:ses:<region>:<account>:identity/<identity>`. */
  readonly identityArn: string;
  /** `EMAIL_FROM` for the functions that send mail: `"Name" <address>`, or the address alone. */
  readonly environment: Readonly<Record<'EMAIL_FROM', string>>;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: MailSenderProps,
  ) {
    super(scope, id);
    const identity = props.identity ?? props.from;
    if (identity !== props.from && identity !== props.from.slice(props.from.lastIndexOf('@') + 1)) {
      throw new Error(`emailIdentity ${identity} must be emailFrom (${props.from}) or its domain`);
    }
    this.identityArn = Stack.of(this).formatArn({ service: 'ses', resource: 'identity', resourceName: identity });
    this.environment = { EMAIL_FROM: props.fromName === undefined ? props.from : `"${props.fromName}" <${props.from}>` };
  }

  /** Grants `ses:SendEmail` on this identity only, and only with this sender address (`ses:FromAddress`). */
  grantSend(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'SesSendEmail',
        effect: Effect.ALLOW,
        actions: ['ses:SendEmail'],
        resources: [this.identityArn],
        conditions: { StringEquals: { 'ses:FromAddress': this.props.from } },
      }),
    );
  }

  /** The user pool's email setting: Cognito sends through this identity (the stack's region). */
  get userPoolEmail(): UserPoolEmail {
    const { from, fromName, identity } = this.props;
    return UserPoolEmail.withSES({
      fromEmail: from,
      ...(fromName === undefined ? {} : { fromName }),
      ...(identity !== undefined && identity !== from ? { sesVerifiedDomain: identity } : {}),
      // An environment-agnostic stack (offline synth) has no literal region: the deploy region's token.
      sesRegion: Stack.of(this).region,
    });
  }
}

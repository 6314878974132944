import { RemovalPolicy, SecretValue, Validations } from 'aws-cdk-lib';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ORIGIN_SECRET_ARN_ENV } from '../../functions/shared/config/stack-contract';

/** Props of {@link OriginSecret}. */
export interface OriginSecretProps {
  /**
   * The secret version CloudFront sends (its VersionId). Default: the current version at deploy time.
   * CloudFormation resolves a dynamic reference only when the property holding it changes, so a
   * rotation passes the new VersionId (`-c originSecretVersion=…`) to make CloudFront pick it up.
   */
  readonly versionId?: string;
}

/**
 * The distribution's origin secret ("one door"): a Secrets Manager secret generated
 * per stack, `{"current":"<48 random characters>"}`. CloudFront adds `current` to every origin request
 * as the `x-origin-verify` header, through a CloudFormation dynamic reference (`{{resolve:secretsmanager:…}}`),
 * so the value is never in the template; the functions read it at INIT and refuse requests without it
 * (functions/shared/edge/origin-secret.ts). During a rotation the secret also holds `previous`.
 *
 * No fixed name (CloudFormation generates a unique one): a deleted secret keeps its name for its 7-30
 * day recovery window, which would block redeploying a stack of the same name. DESTROY: the value is
 * worthless once the distribution is gone.
 */
export class OriginSecret extends Construct {
  /** The secret. */
  readonly secret: Secret;
  /** The value CloudFront sends, as a dynamic reference (resolved by CloudFormation at deploy). */
  readonly headerValue: string;

  constructor(scope: Construct, id: string, props: OriginSecretProps = {}) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description:
        'modelmux CloudFront origin secret: {"current":"…","previous":"…"}; CloudFront sends current as x-origin-verify (README: rotate the origin secret)',
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: 'current',
        passwordLength: 48,
        // Header-safe characters only.
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.headerValue = SecretValue.secretsManager(this.secret.secretArn, {
      jsonField: 'current',
      ...(props.versionId ? { versionId: props.versionId } : {}),
    }).unsafeUnwrap(); // a {{resolve:…}} reference, not the value
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'Rotation needs a CloudFront deploy between steps (the header value is a deploy-time dynamic reference), so it is a documented manual procedure (README, "Rotate the origin secret"), not a rotation Lambda.',
    });
  }

  /** `ORIGIN_SECRET_ARN` for the functions' environment. */
  get environment(): Record<string, string> {
    return { [ORIGIN_SECRET_ARN_ENV]: this.secret.secretArn };
  }

  /** Grants `secretsmanager:GetSecretValue` on this secret only. */
  grantRead(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'OriginSecret', effect: Effect.ALLOW, actions: ['secretsmanager:GetSecretValue'], resources: [this.secret.secretArn] }),
    );
  }
}

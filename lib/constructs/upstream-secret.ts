import { Aws, RemovalPolicy } from 'aws-cdk-lib';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Name of the secret the stack creates when none is imported. */
export const DEFAULT_UPSTREAM_SECRET_NAME = 'modelmux/upstream-keys';

/** Props of {@link UpstreamSecret}. */
export interface UpstreamSecretProps {
  /**
   * Use an existing secret instead of creating one: its full ARN (`arn:…:secret:name-AbCdEf`) or its name
   * (e.g. `modelmux/upstream-keys`, after a stack deletion retained the old one). Default: create
   * {@link DEFAULT_UPSTREAM_SECRET_NAME} with `{}` as its value.
   */
  readonly importSecret?: string;
}

/**
 * The Secrets Manager secret holding upstream API keys as one JSON object
 * (`{"OPENAI_API_KEY":"…","ANTHROPIC_API_KEY":"…",…}`), read by `functions/shared/providers/credentials.ts`.
 * Keys never go into function env vars, which anyone with `lambda:GetFunctionConfiguration` can read.
 *
 * Created secret: initial value `{}` (nothing secret is ever in the template); the operator fills it after
 * deploy with {@link putValueCommand}. Encrypted with the AWS-managed key `aws/secretsmanager`, so reading
 * needs no KMS grant. RETAIN: deleting the stack keeps the keys; redeploy then with
 * `-c upstreamSecretName=modelmux/upstream-keys` to reuse it (a new secret of that name would collide).
 * Imported secrets encrypted with a customer-managed KMS key also need `kms:Decrypt` for the functions:
 * not granted here.
 */
export class UpstreamSecret extends Construct {
  /** The secret. */
  readonly secret: ISecret;
  /** What the functions get as `UPSTREAM_SECRET_ARN`: an ARN (full or partial; GetSecretValue takes either). */
  readonly secretId: string;
  /** The IAM resource matching exactly this secret (a name import cannot know the 6-character suffix). */
  private readonly policyResource: string;
  /** How the operator names the secret on the CLI: its name, or the imported ARN. */
  private readonly cliSecretId: string;
  /** Where the secret lives: the stack's region, or the imported ARN's. */
  private readonly cliRegion: string;

  constructor(scope: Construct, id: string, props: UpstreamSecretProps = {}) {
    super(scope, id);
    const imported = props.importSecret?.trim();
    if (imported === undefined || imported === '') {
      const created = new Secret(this, 'Secret', {
        secretName: DEFAULT_UPSTREAM_SECRET_NAME,
        description: 'modelmux upstream provider API keys: one JSON object, e.g. {"OPENAI_API_KEY":"sk-..."}',
        secretObjectValue: {},
        removalPolicy: RemovalPolicy.RETAIN,
      });
      this.secret = created;
      this.secretId = created.secretArn;
      this.policyResource = created.secretArn;
      this.cliSecretId = DEFAULT_UPSTREAM_SECRET_NAME;
      this.cliRegion = Aws.REGION;
    } else if (imported.startsWith('arn:')) {
      this.secret = Secret.fromSecretCompleteArn(this, 'Secret', imported);
      this.secretId = imported;
      this.policyResource = imported;
      this.cliSecretId = imported;
      this.cliRegion = imported.split(':')[3] || Aws.REGION;
    } else {
      const byName = Secret.fromSecretNameV2(this, 'Secret', imported);
      this.secret = byName;
      this.secretId = byName.secretArn;
      // Secrets Manager appends "-" and 6 random characters to every secret ARN; `??????` matches exactly
      // those six (IAM docs for Secrets Manager, "auth-and-access_examples"), not other secrets' names.
      this.policyResource = `${byName.secretArn}-??????`;
      this.cliSecretId = imported;
      this.cliRegion = Aws.REGION;
    }
  }

  /** Grants `secretsmanager:GetSecretValue` on this secret only (no DescribeSecret: the loader does not call it). */
  grantGetSecretValue(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'UpstreamKeysSecret',
        effect: Effect.ALLOW,
        actions: ['secretsmanager:GetSecretValue'],
        resources: [this.policyResource],
      }),
    );
  }

  /**
   * The AWS CLI command an operator runs after deploy to store the keys (`file://` keeps the keys out of
   * shell history and the process list).
   */
  get putValueCommand(): string {
    return `aws secretsmanager put-secret-value --region ${this.cliRegion} --secret-id ${this.cliSecretId} --secret-string file://upstream-keys.json`;
  }
}

import { Aws, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * Name of the secret a stack creates when none is imported: `<stack name>/upstream-keys`, so two stacks
 * in one account and region never collide (e.g. `Modelmux/upstream-keys`, `Modelmux-staging/upstream-keys`).
 */
export function defaultUpstreamSecretName(stackName: string): string {
  return `${stackName}/upstream-keys`;
}

/** Props of {@link UpstreamSecret}. */
export interface UpstreamSecretProps {
  /**
   * Use an existing secret instead of creating one: its full ARN (`arn:…:secret:name-AbCdEf`) or its name
   * (e.g. `Modelmux/upstream-keys`, after a stack deletion retained the old one). Default: create
   * {@link defaultUpstreamSecretName} with `{}` as its value.
   */
  readonly importSecret?: string;
}

/**
 * The Secrets Manager secret holding upstream API keys as one JSON object
 * (`{"OPENAI_API_KEY":"…","ANTHROPIC_API_KEY":"…",…}`), read by `functions/shared/config/upstream-credentials.ts`.
 * Keys never go into function env vars, which anyone with `lambda:GetFunctionConfiguration` can read.
 *
 * Created secret: initial value `{}` (nothing secret is ever in the template); the operator fills it after
 * deploy with {@link putValueCommand}. Encrypted with the AWS-managed key `aws/secretsmanager`, so reading
 * needs no KMS grant. RETAIN: deleting the stack keeps the keys; redeploy then with
 * `-c upstreamSecretName=<stack name>/upstream-keys` to reuse it (a new secret of that name would collide).
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
      const name = defaultUpstreamSecretName(Stack.of(this).stackName);
      const created = new Secret(this, 'Secret', {
        secretName: name,
        description: 'modelmux upstream provider API keys: one JSON object, e.g. {"OPENAI_API_KEY":"sk-..."}',
        secretObjectValue: {},
        removalPolicy: RemovalPolicy.RETAIN,
      });
      Validations.of(created).acknowledge({
        id: 'AwsSolutions::AwsSolutions-SMG4',
        reason:
          'Third-party provider API keys: they are rotated at each provider and then stored with put-secret-value (README, "Rotate upstream keys"); Secrets Manager cannot mint them.',
      });
      this.secret = created;
      this.secretId = created.secretArn;
      this.policyResource = created.secretArn;
      this.cliSecretId = name;
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

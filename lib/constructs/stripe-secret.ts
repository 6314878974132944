import { Aws, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Name of the Stripe secret of a stack: `<stack name>/stripe`. */
export function stripeSecretName(stackName: string): string {
  return `${stackName}/stripe`;
}

/**
 * The Secrets Manager secret `<stack>/stripe` holding the Stripe keys as one JSON object
 * (`{"STRIPE_SECRET_KEY":"sk_live_…","STRIPE_WEBHOOK_SECRET":"whsec_…"}`), read by
 * `functions/shared/payments/stripe-client.ts` as the upstream keys are read. Created with `{}`: payments
 * stay disabled (no "Add credit", the webhook 404s) until the operator stores the keys
 * ({@link putValueCommand}; README "Payments"). RETAIN, like the upstream keys: a stack deployed again
 * under the same name after `cdk destroy` imports the kept one (`importSecret`, `-c stripeSecretName=`),
 * since a new secret of that name would collide.
 */
export class StripeSecret extends Construct {
  readonly secret: ISecret;
  /** `STRIPE_SECRET_ARN` for the functions that read it (an ARN, or the imported secret's name). */
  readonly environment: Readonly<Record<string, string>>;
  /** What IAM grants on: the ARN, or for a secret imported by name its ARN with the 6-character suffix. */
  private readonly policyResource: string;
  /** The `--secret-id` of the put command. */
  private readonly cliSecretId: string;

  /** @param props.importSecret an existing secret's full ARN or name, instead of creating `<stack>/stripe`. */
  constructor(scope: Construct, id: string, props: { importSecret?: string } = {}) {
    super(scope, id);
    const imported = props.importSecret?.trim();
    if (imported === undefined || imported === '') {
      const name = stripeSecretName(Stack.of(this).stackName);
      const created = new Secret(this, 'Secret', {
        secretName: name,
        description: 'modelmux Stripe keys: {"STRIPE_SECRET_KEY":"sk_...","STRIPE_WEBHOOK_SECRET":"whsec_..."}',
        secretObjectValue: {},
        removalPolicy: RemovalPolicy.RETAIN,
      });
      Validations.of(created).acknowledge({
        id: 'AwsSolutions::AwsSolutions-SMG4',
        reason:
          'Stripe API keys and the webhook signing secret are rolled in the Stripe dashboard and then stored with put-secret-value (README, "Payments"); Secrets Manager cannot mint them.',
      });
      this.secret = created;
      this.policyResource = created.secretArn;
      this.cliSecretId = name;
      this.environment = { STRIPE_SECRET_ARN: created.secretArn };
    } else if (imported.startsWith('arn:')) {
      this.secret = Secret.fromSecretCompleteArn(this, 'Secret', imported);
      this.policyResource = imported;
      this.cliSecretId = imported;
      this.environment = { STRIPE_SECRET_ARN: imported };
    } else {
      this.secret = Secret.fromSecretNameV2(this, 'Secret', imported);
      // Secrets Manager appends "-" and 6 random characters to every secret ARN (as upstream-secret.ts).
      this.policyResource = `${this.secret.secretArn}-??????`;
      this.cliSecretId = imported;
      this.environment = { STRIPE_SECRET_ARN: imported };
    }
  }

  /** Grants `secretsmanager:GetSecretValue` on this secret only. */
  grantGetSecretValue(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'StripeSecret', effect: Effect.ALLOW, actions: ['secretsmanager:GetSecretValue'], resources: [this.policyResource] }),
    );
  }

  /** Gives `fn` the secret: `STRIPE_SECRET_ARN` in its environment and read access. */
  attachTo(fn: IGrantable & { addEnvironment(key: string, value: string): unknown }): void {
    for (const [name, value] of Object.entries(this.environment)) fn.addEnvironment(name, value);
    this.grantGetSecretValue(fn);
  }

  /** The AWS CLI command that stores the keys (`file://` keeps them out of shell history). */
  get putValueCommand(): string {
    return `aws secretsmanager put-secret-value --region ${Aws.REGION} --secret-id ${this.cliSecretId} --secret-string file://stripe.json`;
  }
}

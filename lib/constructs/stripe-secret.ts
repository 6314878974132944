import { Aws, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Effect, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
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
 * ({@link putValueCommand}; README "Payments"). RETAIN, like the upstream keys.
 */
export class StripeSecret extends Construct {
  readonly secret: Secret;
  /** `STRIPE_SECRET_ARN` for the functions that read it. */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      secretName: stripeSecretName(Stack.of(this).stackName),
      description: 'modelmux Stripe keys: {"STRIPE_SECRET_KEY":"sk_...","STRIPE_WEBHOOK_SECRET":"whsec_..."}',
      secretObjectValue: {},
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'Stripe API keys and the webhook signing secret are rolled in the Stripe dashboard and then stored with put-secret-value (README, "Payments"); Secrets Manager cannot mint them.',
    });
    this.environment = { STRIPE_SECRET_ARN: this.secret.secretArn };
  }

  /** Grants `secretsmanager:GetSecretValue` on this secret only. */
  grantGetSecretValue(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'StripeSecret', effect: Effect.ALLOW, actions: ['secretsmanager:GetSecretValue'], resources: [this.secret.secretArn] }),
    );
  }

  /** Gives `fn` the secret: `STRIPE_SECRET_ARN` in its environment and read access. */
  attachTo(fn: IGrantable & { addEnvironment(key: string, value: string): unknown }): void {
    for (const [name, value] of Object.entries(this.environment)) fn.addEnvironment(name, value);
    this.grantGetSecretValue(fn);
  }

  /** The AWS CLI command that stores the keys (`file://` keeps them out of shell history). */
  get putValueCommand(): string {
    return `aws secretsmanager put-secret-value --region ${Aws.REGION} --secret-id ${this.secret.secretName} --secret-string file://stripe.json`;
  }
}

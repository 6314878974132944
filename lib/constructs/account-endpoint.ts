import { type FunctionUrl, HttpMethod, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { ByokKey } from './byok-key';
import { type DataTables, grantAccountAccess } from './data-tables';
import { GatewayFunction } from './gateway-function';
import type { Identity } from './identity';
import type { OriginSecret } from './origin-secret';
import type { SettlePath } from './settle-path';
import { SETTLE_QUEUE_URL_ENV } from '../../functions/shared/config/stack-contract';
import type { StripeSecret } from './stripe-secret';

/** Props of {@link AccountEndpoint}. */
export interface AccountEndpointProps {
  readonly tables: DataTables;
  readonly identity: Identity;
  readonly byokKey: ByokKey;
  /** CloudFront's origin secret: when set, the function refuses requests without it (one door). */
  readonly originSecret?: OriginSecret | undefined;
  /** Extra plain env (e.g. `PUBLIC_BASE_URL`). */
  readonly environment?: Readonly<Record<string, string>>;
  /** Days the function's logs are kept (see GatewayFunctionProps). */
  readonly logRetentionDays?: number;
  /** X-Ray tracing (see GatewayFunctionProps). */
  readonly tracing?: boolean;
  /** Memory in MB; default 512: JSON and one small DynamoDB call or two per request. */
  readonly memorySize?: number;
  /** The Stripe keys (checkout, the webhook): read access and `STRIPE_SECRET_ARN`. */
  readonly stripeSecret?: StripeSecret | undefined;
  /** Reserved concurrency (the stack gives it room of its own; see GatewayFunctionProps). */
  readonly reservedConcurrentExecutions?: number;
  /** Versions and a `live` alias the Function URL serves (see GatewayFunctionProps). */
  readonly liveAlias?: boolean;
  /**
   * The settle path: its queue's URL and depth (GetQueueAttributes), so a balance read reconciles a
   * lease a stopped container left only while no settle waits there (billing/lease-reclaim.ts).
   */
  readonly settle?: SettlePath;
}

/**
 * The account API: `functions/account/handler.ts` behind a BUFFERED Function URL (its answers are
 * small JSON). Authenticated by the dashboard user's Cognito JWT in the function (aws-jwt-verify), so
 * the URL itself is public like the others. Least privilege: its own table actions
 * (ACCOUNT_TABLE_ACTIONS), kms:GenerateDataKey on the BYOK key only, GetSecretValue on the Stripe secret
 * (checkout and Stripe's webhook, `/v1/billing/stripe/webhook`), GetQueueAttributes on the settle queue
 * (a balance read reconciles a stranded lease only while it is empty); no upstream secret, no kms:Decrypt.
 */
export class AccountEndpoint extends Construct {
  readonly gateway: GatewayFunction;
  readonly url: FunctionUrl;

  constructor(scope: Construct, id: string, props: AccountEndpointProps) {
    super(scope, id);
    this.gateway = new GatewayFunction(this, 'Gateway', {
      entry: 'functions/account/handler.ts',
      description: 'modelmux: the account API (/v1/account, /v1/keys, /v1/credits, /v1/activity, /v1/byok, /v1/billing, /config.json)',
      timeoutSeconds: 15,
      memorySize: props.memorySize ?? 512,
      ...(props.logRetentionDays === undefined ? {} : { logRetentionDays: props.logRetentionDays }),
      ...(props.tracing === undefined ? {} : { tracing: props.tracing }),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      liveAlias: props.liveAlias,
      environment: {
        ...props.tables.environment,
        ...props.identity.environment,
        ...props.byokKey.environment,
        ...props.originSecret?.environment,
        ...props.stripeSecret?.environment,
        ...(props.settle ? { [SETTLE_QUEUE_URL_ENV]: props.settle.queue.queueUrl } : {}),
        ...props.environment,
      },
    });
    grantAccountAccess(props.tables, this.gateway.function);
    props.originSecret?.grantRead(this.gateway.function);
    props.byokKey.grantGenerateDataKey(this.gateway.function);
    props.stripeSecret?.grantGetSecretValue(this.gateway.function);
    props.settle?.grantDepthRead(this.gateway.function);
    this.url = this.gateway.addPublicUrl(InvokeMode.BUFFERED, [HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.DELETE]);
  }
}

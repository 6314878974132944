import type { RemovalPolicy, StackProps } from 'aws-cdk-lib';
import type { UpstreamBaseUrlVar } from '../functions/shared/providers/manifest';
import type { CustomDomainProps } from './constructs/custom-domain';
import type { HostedSignIn } from './constructs/identity';
import type { MailSenderProps } from './constructs/mail-sender';
import type { ManagedInstancesOptions } from './constructs/managed-instances';
import type { DeploymentConfigName } from './stack-context';

/** Props of {@link ModelmuxStack}; `bin/app.ts` fills them from CDK context (see `stack-context.ts`). */
export interface ModelmuxStackProps extends StackProps {
  /** Put a CloudFront distribution in front so every route has one base URL, and the functions one door. Default true. */
  readonly cloudfront?: boolean;
  /** Import this secret (full ARN or name) instead of creating `<stack name>/upstream-keys`. */
  readonly upstreamSecretName?: string;
  /** Import this Stripe secret (full ARN or name) instead of creating `<stack>/stripe` (a redeploy after `cdk destroy`). */
  readonly stripeSecretName?: string;
  /** Plain-env base-URL overrides, e.g. `{ OPENAI_BASE_URL: 'https://…/v1' }`. Only `*_BASE_URL` names. */
  readonly upstreamBaseUrls?: Readonly<Partial<Record<UpstreamBaseUrlVar, string>>>;
  /** Reserved concurrency of the chat function; default none (it shares what the reservations leave). */
  readonly chatReservedConcurrency?: number;
  /** Reserved concurrency of the embeddings function; default none. */
  readonly embeddingsReservedConcurrency?: number;
  /** Reserved concurrency of the settle function (queue and sweep); default {@link DEFAULT_SETTLE_RESERVED_CONCURRENCY}. */
  readonly settleReservedConcurrency?: number;
  /** Reserved concurrency of the account function; default {@link DEFAULT_ACCOUNT_RESERVED_CONCURRENCY}. */
  readonly accountReservedConcurrency?: number;
  /** CodeDeploy configuration shifting the request functions' `live` alias; default LambdaCanary10Percent5Minutes. */
  readonly deploymentConfig?: DeploymentConfigName;
  /** AWS Backup of keys, accounts and ledger (`false`: none); default a daily plan without a copy region. */
  readonly backup?: false | { readonly copyRegion?: string | undefined; readonly copyVaultName?: string | undefined };
  /** A monthly AWS Budget mailing `email`; default none. */
  readonly budget?: { readonly monthlyUsd: number; readonly email: string };
  /** Cost Anomaly Detection mailing `email`; default none. */
  readonly costAnomalyDetection?: { readonly email: string };
  /** The verified SES identity every mail is sent from (the functions' and Cognito's); default none: no mail from the functions, Cognito's own sender. */
  readonly email?: MailSenderProps;
  /** A Cognito hosted domain with the OAuth code flow for the dashboard client; default none. */
  readonly hostedSignIn?: HostedSignIn;
  /** Cognito threat protection in audit mode on the Plus feature plan (billed per monthly active user, README); default true. */
  readonly cognitoThreatProtection?: boolean;
  /** Function settings (config/env.ts names, validated by stack-context.ts), given to every function. */
  readonly functionSettings?: Readonly<Record<string, string>>;
  /** Keep the old `byEmail` index during the upgrade to `byEmailKeys` (lib/constructs/data-tables.ts). */
  readonly legacyEmailIndex?: boolean;
  /** Tables restored by `npm run restore`, used instead of the stack's own (see DataTables). */
  readonly restoredTables?: Readonly<Partial<Record<'keys' | 'accounts' | 'ledger', string>>>;
  /** Memory of the chat function, MB; default the ChatEndpoint's (see `npm run bench`'s cost table). */
  readonly chatMemoryMb?: number;
  /** Memory of the embeddings function, MB; default the EmbeddingsEndpoint's. */
  readonly embeddingsMemoryMb?: number;
  /** Run chat and embeddings on Lambda Managed Instances with these options (docs/managed-instances.md); default none: per-invocation Lambda. */
  readonly managedInstances?: ManagedInstancesOptions | undefined;
  /** Removal policy of the tables; default RETAIN (see DataTables). */
  readonly tableRemovalPolicy?: RemovalPolicy;
  /** Days every function's logs are kept; default 30. Logs are retained after stack deletion. */
  readonly logRetentionDays?: number;
  /** Days the chat function's logs are kept; default `logRetentionDays`. */
  readonly chatLogRetentionDays?: number;
  /** Days the embeddings function's logs are kept; default `logRetentionDays`. */
  readonly embeddingsLogRetentionDays?: number;
  /** Alarms, dashboard and the alarm topic; default true (about $1–2 a month of alarms). */
  readonly monitoring?: boolean;
  /** Email address subscribed to the alarm topic; default none. */
  readonly alarmEmail?: string;
  /** The account's Lambda concurrency quota, for the concurrency alarm; default 100 + the stack's reservations (the smallest quota it deploys on). */
  readonly accountConcurrencyLimit?: number;
  /** X-Ray tracing of the functions; default false. */
  readonly tracing?: boolean;
  /** A custom domain on the distribution (needs CloudFront). */
  readonly domain?: CustomDomainProps;
  /**
   * WAF on the distribution: create a web ACL (`required`: the stack must be in us-east-1; otherwise it
   * is created only when the stack is in us-east-1, the one region a CloudFront web ACL can be made in),
   * or attach an existing one. Default (no value): none; the context's default is `{}`.
   */
  readonly waf?: { readonly rateLimit?: number; readonly required?: boolean } | { readonly webAclArn: string };
  /** Days CloudFront access logs are kept; default 90. */
  readonly accessLogRetentionDays?: number;
  /** The origin secret version CloudFront sends (rotation; README). Default: current at deploy. */
  readonly originSecretVersion?: string;
  /**
   * The URL people reach the deployment at (e.g. `https://api.example.com`), for messages that point to
   * the dashboard (`PUBLIC_BASE_URL`). Default: `https://<domainName>` with a custom domain; without
   * one, derived from each request's host (behind the default *.cloudfront.net name the function sees
   * its own Function URL host, so set this to the distribution's URL after the first deploy).
   */
  readonly publicBaseUrl?: string;
}

/** The settle function's reserved concurrency by default: two queue pollers, the sweep, and room. */
export const DEFAULT_SETTLE_RESERVED_CONCURRENCY = 5;
/** The account function's reserved concurrency by default: the dashboard always answers. */
export const DEFAULT_ACCOUNT_RESERVED_CONCURRENCY = 10;

/** Reserved concurrency per function (undefined: none). */
export type ReservedConcurrency = Readonly<Record<'chat' | 'embeddings', number | undefined> & Record<'settle' | 'account', number>>;

/**
 * The reservations of the stack's functions, defaults applied: the settle and account functions always
 * have theirs, so 300-s chat streams never take their room.
 * @throws Error when the settle function's reservation leaves its queue fewer than 2 pollers.
 */
export function reservedConcurrencyOf(props: ModelmuxStackProps): ReservedConcurrency {
  const settle = props.settleReservedConcurrency ?? DEFAULT_SETTLE_RESERVED_CONCURRENCY;
  if (settle < 3) throw new Error('settleReservedConcurrency must be at least 3 (two queue pollers and the sweep)');
  return {
    chat: props.chatReservedConcurrency,
    embeddings: props.embeddingsReservedConcurrency,
    settle,
    account: props.accountReservedConcurrency ?? DEFAULT_ACCOUNT_RESERVED_CONCURRENCY,
  };
}

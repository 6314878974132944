import { Annotations, Aws, CfnOutput, Fn, Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { UPSTREAM_BASE_URL_VARS } from '../functions/shared/providers/manifest';
import { TABLE_SCHEMAS } from '../functions/shared/store/table-schemas';
import { SETTLE_RESERVE_MS } from '../functions/shared/config/stack-contract';
import { AccessLogs } from './constructs/access-logs';
import { ACCOUNT_PATH_PATTERNS } from '../functions/shared/account-api/paths';
import { AccountEndpoint } from './constructs/account-endpoint';
import { StripeSecret } from './constructs/stripe-secret';
import { API_PATH_PATTERN, ApiDistribution, DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS, GEMINI_API_PATH_PATTERNS } from './constructs/api-distribution';
import { ByokKey } from './constructs/byok-key';
import { ChatEndpoint } from './constructs/chat-endpoint';
import { CustomDomain } from './constructs/custom-domain';
import { inUsEast1, requireFunctionUrlRegion } from './constructs/region-rule';
import { DataTables } from './constructs/data-tables';
import { EmbeddingsEndpoint } from './constructs/embeddings-endpoint';
import { Identity } from './constructs/identity';
import { ManagedInstances, MI_INSTANCE_VCPUS_PER_ENVIRONMENT_VCPU, MI_MIN_MEMORY_MB } from './constructs/managed-instances';
import { Backups } from './constructs/backups';
import { CostGuards } from './constructs/cost-guards';
import { Rollout } from './constructs/rollout';
import { type ModelmuxStackProps, type ReservedConcurrency, reservedConcurrencyOf } from './stack-props';

import { SettlePath } from './constructs/settle-path';
import { DEFAULT_LOG_RETENTION_DAYS } from './constructs/gateway-function';
import { Monitoring } from './constructs/monitoring';
import { addMailReputationAlarms, addRuleAlarm, addStripeWebhookAlarms } from './constructs/monitoring-integrations';
import { OriginSecret } from './constructs/origin-secret';
import { Site } from './constructs/site';
import { UpstreamSecret } from './constructs/upstream-secret';
import { ApiWebAcl } from './constructs/web-acl';
import { MailSender } from './constructs/mail-sender';

/**
 * modelmux in one stack: four on-demand tables, the upstream-keys secret, the chat function (streaming
 * Function URL), the embeddings function (buffered Function URL), the durable settle path (queue,
 * dead-letter queue, settle function, five-minute sweep), by default a CloudFront distribution giving
 * every route one base URL (with its origin secret, access logs, optional custom domain and WAF), and
 * monitoring (metrics, alarms, a dashboard). Idle: storage, alarms, the dashboard and the sweep's one
 * invocation (and accounts-table Scan) every 5 minutes.
 */
export class ModelmuxStack extends Stack {
  constructor(scope: Construct, id: string, props: ModelmuxStackProps = {}) {
    super(scope, id, { description: 'modelmux: OpenAI-compatible model-routing API (Lambda Function URLs + DynamoDB)', ...props });

    requireFunctionUrlRegion(this, 'FunctionUrlRegion');
    const cloudfront = props.cloudfront ?? true;
    if (!cloudfront && (props.domain !== undefined || props.waf !== undefined)) {
      throw new Error('domainName and waf need the CloudFront distribution (cloudfront=true)');
    }
    const tables = new DataTables(this, 'Data', {
      removalPolicy: props.tableRemovalPolicy,
      restoredTables: props.restoredTables,
      legacyEmailIndex: props.legacyEmailIndex,
    });
    const upstreamSecret = new UpstreamSecret(this, 'UpstreamKeys', { importSecret: props.upstreamSecretName });
    const originSecret = cloudfront ? new OriginSecret(this, 'OriginSecret', { versionId: props.originSecretVersion }) : undefined;
    const publicUrl = props.publicBaseUrl ?? (props.domain ? `https://${props.domain.domainName}` : undefined);
    const publicBaseUrl: Record<string, string> = publicUrl ? { PUBLIC_BASE_URL: publicUrl } : {};
    // Settings from `-c functionSettings=…` come last: every function gets them (each reads its own).
    const settings = props.functionSettings ?? {};
    // Mail: one verified SES identity for the settle and account functions' mail (EMAIL_FROM) and Cognito's.
    const mail = props.email === undefined ? undefined : new MailSender(this, 'Mail', props.email);
    const mailEnv = mail?.environment ?? {};
    const environment = { ...baseUrlEnvironment(props.upstreamBaseUrls ?? {}), ...publicBaseUrl, ...settings };
    // Accounts: the dashboard's users, and the key their own provider keys are sealed with.
    const identity = new Identity(this, 'Identity', {
      hostedSignIn: props.hostedSignIn,
      email: mail?.userPoolEmail,
      threatProtection: props.cognitoThreatProtection ?? true,
    });
    const byokKey = new ByokKey(this, 'Byok');
    // The shutdown extension on per-invocation Lambda only: there a container is frozen between
    // invocations, so only Lambda's SIGTERM can return its leases. Managed Instances never freeze (the
    // idle return runs) and Node serves them from worker threads, which no signal reaches.
    const shutdownExtension = props.managedInstances === undefined;
    const common = { tables, upstreamSecret, originSecret, byokKey, environment, tracing: props.tracing === true, liveAlias: true, shutdownExtension };
    const logDays = props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
    const reserved = reservedConcurrencyOf(props);
    const settle = new SettlePath(this, 'SettlePath', {
      tables,
      logRetentionDays: logDays,
      tracing: props.tracing === true,
      reservedConcurrency: reserved.settle,
      environment: { ...settings, ...mailEnv },
    });

    const chat = new ChatEndpoint(this, 'Chat', {
      ...common,
      settle,
      reservedConcurrentExecutions: reserved.chat,
      logRetentionDays: props.chatLogRetentionDays ?? logDays,
      memorySize: props.chatMemoryMb ?? (props.managedInstances && MI_MIN_MEMORY_MB),
      // Behind CloudFront a buffered answer must be out before the origin read timeout, or the client
      // gets CloudFront's 504 while the answer is still produced and billed.
      ...(cloudfront && settings.BUFFERED_CHAT_BUDGET_MS === undefined
        ? { bufferedChatBudgetMs: DEFAULT_ORIGIN_READ_TIMEOUT_SECONDS * 1000 - SETTLE_RESERVE_MS }
        : {}),
    });
    const embeddings = new EmbeddingsEndpoint(this, 'Embeddings', {
      ...common,
      settle,
      reservedConcurrentExecutions: reserved.embeddings,
      logRetentionDays: props.embeddingsLogRetentionDays ?? logDays,
      memorySize: props.embeddingsMemoryMb ?? (props.managedInstances && MI_MIN_MEMORY_MB),
    });
    // Payments: the Stripe keys, created empty (payments off until the operator stores them).
    const stripeSecret = new StripeSecret(this, 'Stripe', { importSecret: props.stripeSecretName });
    stripeSecret.attachTo(settle.settleFunction.function); // auto top-up charges run in the settle function
    new CfnOutput(this, 'StripeSecretPutCommand', {
      description:
        'Store the Stripe keys (stripe.json: {"STRIPE_SECRET_KEY":"sk_...","STRIPE_WEBHOOK_SECRET":"whsec_..."}) to enable payments; the webhook endpoint is <BaseUrl>/billing/stripe/webhook (BaseUrl ends in /v1); with cloudfront=false, <AccountUrl>v1/billing/stripe/webhook',
      value: stripeSecret.putValueCommand,
    });
    const account = new AccountEndpoint(this, 'Account', {
      tables,
      settle,
      identity,
      byokKey,
      originSecret,
      stripeSecret,
      environment: { ...publicBaseUrl, ...settings, ...mailEnv },
      logRetentionDays: logDays,
      tracing: props.tracing === true,
      reservedConcurrentExecutions: reserved.account,
      liveAlias: true,
    });
    const { rollout, managedInstances } = this.addOperations(props, { tables, settle, chat, embeddings, account, byokKey }, mail);

    // Function URLs end with '/', so `${url}v1` is a base URL an OpenAI SDK accepts.
    let baseUrl = Fn.join('', [chat.url.url, 'v1']);
    const front = cloudfront && originSecret !== undefined ? this.addFrontDoor(props, { chat, embeddings, account }, originSecret) : undefined;
    const distribution = front?.api;
    if (front !== undefined) baseUrl = front.baseUrl;

    if (props.monitoring ?? true)
      this.addMonitoring(props, { tables, settle, chat, embeddings, account }, { rollout, reserved, distribution, managedInstances, mail });
    this.addOutputs(props, baseUrl, { tables, upstreamSecret, settle, chat, embeddings, account, identity, byokKey });
  }

  /**
   * The CloudFront front door: the distribution over the three Function URLs and the dashboard site,
   * its access logs, optional custom domain and WAF, and their outputs. Returns it and the base URL.
   */
  private addFrontDoor(
    props: ModelmuxStackProps,
    parts: Pick<StackParts, 'chat' | 'embeddings' | 'account'>,
    originSecret: OriginSecret,
  ): { api: ApiDistribution; baseUrl: string } {
    const { chat, embeddings, account } = parts;
    const domain = props.domain ? new CustomDomain(this, 'Domain', props.domain) : undefined;
    const accessLogs = new AccessLogs(this, 'AccessLogs', { retentionDays: props.accessLogRetentionDays });
    const webAclArn = this.webAclArn(props.waf);
    // The dashboard (web/) is the distribution's default behaviour; the API keeps /v1/*.
    const site = new Site(this, 'Site', { accessLogsBucket: accessLogs.bucket });
    const api = new ApiDistribution(this, 'Api', {
      chatUrl: chat.url,
      embeddingsUrl: embeddings.url,
      originSecretHeaderValue: originSecret.headerValue,
      domain,
      logBucket: accessLogs.bucket,
      webAclArn,
      site: site.behavior,
    });
    // The account paths get the viewer's address: a sign-up's free grant is counted per client network.
    api.addFunctionBehaviour(ACCOUNT_PATH_PATTERNS, account.url, { viewerAddress: true });
    // Last: CloudFront takes the first matching pattern, and every other /v1/… route (and the Gemini API's embeddings) is above.
    api.addFunctionBehaviour([...GEMINI_API_PATH_PATTERNS, API_PATH_PATTERN], chat.url);
    site.deploy(api.distribution);
    const host = domain?.domainName ?? api.distribution.distributionDomainName;
    this.addDistributionOutputs(host, api, accessLogs, originSecret);
    return { api, baseUrl: Fn.join('', ['https://', host, '/v1']) };
  }

  /**
   * The web ACL for the distribution, or none. An existing one is attached as given; `required` creates
   * one and refuses a region other than us-east-1; otherwise (the context's default) one is created only
   * where a CloudFront web ACL can be: unconditionally in a stack pinned to us-east-1, under a
   * CloudFormation condition in a stack whose region is known at deploy time, and not at all (with a
   * synth warning) in a stack pinned to another region.
   */
  private webAclArn(waf: ModelmuxStackProps['waf']): string | undefined {
    if (waf === undefined) return undefined;
    if ('webAclArn' in waf) return waf.webAclArn;
    if (waf.required === true || this.region === 'us-east-1') return new ApiWebAcl(this, 'Waf', { rateLimit: waf.rateLimit }).arn;
    if (!Token.isUnresolved(this.region)) {
      Annotations.of(this).addWarningV2(
        'modelmux:noWaf',
        `No WAF web ACL: CloudFront's can only be created in us-east-1 and this stack is in ${this.region}. Create one there and pass -c wafWebAclArn=…, or -c waf=false to silence this.`,
      );
      return undefined;
    }
    const here = inUsEast1(this);
    const acl = new ApiWebAcl(this, 'Waf', { rateLimit: waf.rateLimit, condition: here });
    return Fn.conditionIf(here.logicalId, acl.arn, Aws.NO_VALUE).toString();
  }

  /**
   * Lambda Managed Instances when asked, rollouts (versions and the `live` alias the URLs serve, shifted by CodeDeploy; rollback alarms in
   * addMonitoring), backups, cost guards, the BYOK key policy naming its users' roles, and who may send mail.
   */
  private addOperations(
    props: ModelmuxStackProps,
    parts: Pick<StackParts, 'tables' | 'settle' | 'chat' | 'embeddings' | 'account' | 'byokKey'>,
    mail: MailSender | undefined,
  ): { rollout: Rollout; managedInstances: ManagedInstances | undefined } {
    const { tables, settle, chat, embeddings, account, byokKey } = parts;
    // High-volume mode: both request functions on Lambda Managed Instances (docs/managed-instances.md).
    const managedInstances =
      props.managedInstances === undefined
        ? undefined
        : new ManagedInstances(this, 'ManagedInstances', {
            ...props.managedInstances,
            functions: [chat.gateway, embeddings.gateway],
            logRetentionDays: props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS,
          });
    const rollout = new Rollout(this, 'Rollout', { deploymentConfig: props.deploymentConfig });
    for (const [name, part] of [
      ['Chat', chat],
      ['Embeddings', embeddings],
      ['Account', account],
    ] as const) {
      if (part.gateway.alias !== undefined) rollout.addAlias(name, part.gateway.alias);
    }
    if (props.backup !== false) {
      const backups = new Backups(this, 'Backups', {
        tables: [tables.tables.keys, tables.tables.accounts, tables.tables.ledger],
        copyRegion: props.backup?.copyRegion,
        copyVaultName: props.backup?.copyVaultName,
      });
      new CfnOutput(this, 'BackupRestoreRoleArn', {
        description: 'Role for AWS Backup restores of the tables (aws backup start-restore-job --iam-role-arn; README, Backups and restore)',
        value: backups.restoreRole.roleArn,
      });
    }
    if (props.budget !== undefined || props.costAnomalyDetection !== undefined) {
      new CostGuards(this, 'CostGuards', { budget: props.budget, anomalyDetection: props.costAnomalyDetection });
    }
    byokKey.restrictTo({ generateDataKey: [account.gateway.role], decrypt: [chat.gateway.role, embeddings.gateway.role] });
    // Mail is sent by the settle function (the request functions hand it a crossed threshold) and the account function (Stripe's webhook).
    for (const fn of [account.gateway, settle.settleFunction]) mail?.grantSend(fn.function);
    return { rollout, managedInstances };
  }

  /** Outputs of the CloudFront front door: the dashboard URL, the distribution, its logs and origin secret. */
  private addDistributionOutputs(host: string, api: ApiDistribution, accessLogs: AccessLogs, originSecret: OriginSecret): void {
    new CfnOutput(this, 'DashboardUrl', { description: 'The account dashboard (sign up, API keys, usage)', value: Fn.join('', ['https://', host, '/']) });
    new CfnOutput(this, 'DistributionId', { description: 'CloudFront distribution in front of the Function URLs', value: api.distribution.distributionId });
    new CfnOutput(this, 'DistributionDomainName', {
      description: "The distribution's own host name (the CNAME target of a custom domain whose DNS is not in Route 53)",
      value: api.distribution.distributionDomainName,
    });
    new CfnOutput(this, 'AccessLogBucket', { description: 'S3 bucket of CloudFront access logs (prefix cloudfront/)', value: accessLogs.bucket.bucketName });
    new CfnOutput(this, 'OriginSecretArn', {
      description: 'Secret CloudFront sends as x-origin-verify; the functions refuse requests without it (README: rotate the origin secret)',
      value: originSecret.secret.secretArn,
    });
  }

  /**
   * Metrics, alarms and the dashboard over the request functions, the settle path and the tables
   * (lib/constructs/monitoring.ts), with the alarm topic and dashboard as outputs.
   */
  private addMonitoring(
    props: ModelmuxStackProps,
    parts: Pick<StackParts, 'tables' | 'settle' | 'chat' | 'embeddings' | 'account'>,
    more: {
      rollout: Rollout;
      reserved: ReservedConcurrency;
      distribution: ApiDistribution | undefined;
      managedInstances: ManagedInstances | undefined;
      mail: MailSender | undefined;
    },
  ): void {
    const { tables, settle, chat, embeddings, account } = parts;
    const { rollout, reserved } = more;
    const monitoring = new Monitoring(this, 'Monitoring', {
      service: this.stackName,
      alarmEmail: props.alarmEmail,
      accountConcurrencyLimit: props.accountConcurrencyLimit,
      reservedConcurrency: Object.values(reserved).reduce<number>((sum, n) => sum + (n ?? 0), 0),
      requestLogGroups: [chat.gateway.logGroup, embeddings.gateway.logGroup],
    });
    monitoring.addFunction('Chat', chat.gateway.function, reserved.chat);
    monitoring.addFunction('Embeddings', embeddings.gateway.function, reserved.embeddings);
    monitoring.addFunction('Account', account.gateway.function, reserved.account);
    // The durable settle path: its consumer, a backlog older than 5 minutes (settles not
    // landing), and anything in its dead-letter queue (settles that failed for 24 h).
    monitoring.addFunction('Settle', settle.settleFunction.function, reserved.settle);
    monitoring.addQueue('SettleQueue', settle.queue, { maxAgeSeconds: 300 });
    monitoring.addQueue('Settle', settle.deadLetterQueue, { deadLetter: true });
    addRuleAlarm(monitoring, 'Sweep', settle.sweepRule);
    // Stripe's webhook (the account function), and SES's verdict on the mail when the stack sends any.
    addStripeWebhookAlarms(monitoring, this.stackName);
    if (more.mail !== undefined) addMailReputationAlarms(monitoring);
    for (const schema of TABLE_SCHEMAS) {
      const name = schema.logicalName.charAt(0).toUpperCase() + schema.logicalName.slice(1);
      monitoring.addTable(
        name,
        tables.tables[schema.logicalName],
        (schema.globalSecondaryIndexes ?? []).map((i) => i.indexName),
      );
    }
    const mi = more.managedInstances;
    if (mi !== undefined)
      monitoring.addCapacityProvider('Capacity', mi.capacityProvider.capacityProviderName, mi.maxVCpus, MI_INSTANCE_VCPUS_PER_ENVIRONMENT_VCPU);
    if (more.distribution !== undefined) monitoring.addDistribution(more.distribution.distribution.distributionId, ORIGIN_LATENCY_ALARM_MS);
    // A function's canary rolls back on its NEW version's own 5xx answers or errors, and only its own
    // (the service-wide alarms also count the old version's answers and the other functions').
    for (const [name, part] of [
      ['Chat', chat],
      ['Embeddings', embeddings],
      ['Account', account],
    ] as const) {
      if (part.gateway.alias !== undefined) rollout.addAlarms(name, monitoring.addCanary(name, part.gateway.alias));
    }
    monitoring.finish();
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic every alarm notifies (subscribe with -c alarmEmail=… or aws sns subscribe)',
      value: monitoring.topic.topicArn,
    });
    new CfnOutput(this, 'DashboardName', { description: 'CloudWatch dashboard: traffic, cost, fallbacks, latency', value: monitoring.dashboard.dashboardName });
  }

  /** The stack's outputs: base URLs, function URLs, Cognito ids, and what the admin CLI needs. */
  private addOutputs(props: ModelmuxStackProps, baseUrl: string, parts: StackParts): void {
    const { tables, upstreamSecret, settle, chat, embeddings, account, identity, byokKey } = parts;
    const cloudfront = props.cloudfront ?? true;
    const direct = cloudfront ? ' Answers only requests from CloudFront (x-origin-verify); clients use BaseUrl.' : '';
    new CfnOutput(this, 'BaseUrl', {
      description: cloudfront
        ? `OpenAI base URL for every route (chat completions, embeddings, models), via CloudFront${props.domain ? ' on the custom domain' : ''}`
        : 'OpenAI base URL for every route (chat completions, embeddings, models): the chat function serves them all (embeddings are also at EmbeddingsBaseUrl)',
      value: baseUrl,
    });
    new CfnOutput(this, 'ChatCompletionsUrl', { description: `Chat function URL (streaming).${direct}`, value: chat.url.url });
    new CfnOutput(this, 'EmbeddingsUrl', { description: `Embeddings function URL (buffered).${direct}`, value: embeddings.url.url });
    new CfnOutput(this, 'EmbeddingsBaseUrl', {
      description: `OpenAI base URL served by the embeddings function (buffered) directly.${direct}`,
      value: Fn.join('', [embeddings.url.url, 'v1']),
    });
    new CfnOutput(this, 'AccountUrl', { description: 'Account function URL (the account API, buffered), direct', value: account.url.url });
    new CfnOutput(this, 'UserPoolId', { description: 'Cognito user pool of the dashboard users', value: identity.userPool.userPoolId });
    new CfnOutput(this, 'UserPoolClientId', { description: "The dashboard's Cognito app client", value: identity.dashboardClient.userPoolClientId });
    new CfnOutput(this, 'ByokKeyArn', { description: "KMS key encrypting users' own provider keys", value: byokKey.key.keyArn });
    new CfnOutput(this, 'KeysTableName', { description: 'KEYS_TABLE for the admin CLI', value: tables.tables.keys.tableName });
    new CfnOutput(this, 'AccountsTableName', { description: 'ACCOUNTS_TABLE for the admin CLI', value: tables.tables.accounts.tableName });
    new CfnOutput(this, 'LedgerTableName', { description: 'LEDGER_TABLE for the admin CLI', value: tables.tables.ledger.tableName });
    new CfnOutput(this, 'UpstreamSecretArn', {
      description: 'Secret holding the upstream provider keys (UPSTREAM_SECRET_ARN for npm run admin -- health)',
      value: upstreamSecret.secretId,
    });
    new CfnOutput(this, 'SettleQueueUrl', { description: 'Durable settle queue (SETTLE_QUEUE_URL)', value: settle.queue.queueUrl });
    new CfnOutput(this, 'SettleDeadLetterQueueUrl', { description: 'Settles that failed for 24 h', value: settle.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'PutUpstreamKeysCommand', {
      description: 'Run after deploy with upstream-keys.json = {"OPENAI_API_KEY":"...",...}; warm functions pick it up within 5 minutes',
      value: upstreamSecret.putValueCommand,
    });
  }
}

/** CloudFront's p90 wait for the functions' first byte above which the origin-latency alarm goes off (ms). */
export const ORIGIN_LATENCY_ALARM_MS = 15_000;

/** The constructs of the stack its outputs and monitoring refer to. */
interface StackParts {
  tables: DataTables;
  upstreamSecret: UpstreamSecret;
  settle: SettlePath;
  chat: ChatEndpoint;
  embeddings: EmbeddingsEndpoint;
  account: AccountEndpoint;
  identity: Identity;
  byokKey: ByokKey;
}

/**
 * Validates base-URL overrides: only the known `*_BASE_URL` names, only http(s) URLs. Anything else (in
 * particular a `*_API_KEY`) is refused, so no key can reach a function's plain environment this way.
 */
export function baseUrlEnvironment(overrides: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  const allowed: readonly string[] = UPSTREAM_BASE_URL_VARS;
  for (const [name, value] of Object.entries(overrides)) {
    if (!allowed.includes(name)) {
      throw new Error(`upstreamBaseUrls: ${name} is not one of ${allowed.join(', ')} (API keys belong in the secret, not in env)`);
    }
    if (value === undefined || value === '') continue;
    if (!/^https?:\/\/[^\s]+$/.test(value)) throw new Error(`upstreamBaseUrls: ${name} must be an http(s) URL`);
    env[name] = value;
  }
  return env;
}

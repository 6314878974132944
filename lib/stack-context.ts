import type { StackProps } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import * as z from 'zod';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../functions/shared/config/env';
import type { ModelmuxStackProps } from './stack-props';
import { type ManagedInstancesOptions, MI_MIN_MEMORY_MB } from './constructs/managed-instances';

/** CodeDeploy's predefined Lambda deployment configurations (CodeDeploy docs, "Deployment configurations on an AWS Lambda compute platform"). */
export const DEPLOYMENT_CONFIGS = [
  'LambdaCanary10Percent5Minutes',
  'LambdaCanary10Percent10Minutes',
  'LambdaCanary10Percent15Minutes',
  'LambdaCanary10Percent30Minutes',
  'LambdaLinear10PercentEvery1Minute',
  'LambdaLinear10PercentEvery2Minutes',
  'LambdaLinear10PercentEvery3Minutes',
  'LambdaLinear10PercentEvery10Minutes',
  'LambdaAllAtOnce',
] as const;

/** One of {@link DEPLOYMENT_CONFIGS}. */
export type DeploymentConfigName = (typeof DEPLOYMENT_CONFIGS)[number];

/**
 * Function settings the stack sets itself (table names, queue, secrets, keys, identity, service name,
 * the public URL from its own context key, local-only endpoints): `functionSettings` may not name them.
 * Every other variable of config/env.ts can be set on a deployed stack with `-c functionSettings=…`.
 */
export const STACK_OWNED_SETTINGS: ReadonlySet<string> = new Set([
  ...['KEYS_TABLE', 'ACCOUNTS_TABLE', 'LEDGER_TABLE', 'RESPONSES_TABLE', 'DYNAMODB_ENDPOINT'],
  ...['SETTLE_QUEUE_URL', 'SETTLE_DEAD_LETTER_QUEUE_URL', 'SQS_ENDPOINT'],
  ...['UPSTREAM_SECRET_ARN', 'ORIGIN_SECRET_ARN', 'BYOK_KMS_KEY_ID', 'BYOK_LOCAL_KEK_FILE', 'PUBLIC_BASE_URL', 'EMAIL_FROM'],
  ...['COGNITO_USER_POOL_ID', 'COGNITO_CLIENT_ID', 'COGNITO_ISSUER', 'COGNITO_JWKS_URI', 'COGNITO_ENDPOINT'],
  ...['POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_TRACE_ENABLED'],
]);

/** The function settings a deployment may set (config/env.ts less {@link STACK_OWNED_SETTINGS}). */
export const DEPLOYABLE_SETTINGS: readonly string[] = CONFIG_VARIABLES.filter((name) => !STACK_OWNED_SETTINGS.has(name));

/**
 * Stack options from CDK context (`cdk.json` "context", or `-c name=value` on the command line, where
 * every value arrives as a string):
 * - `cloudfront`: `false` to skip the CloudFront distribution (default true);
 * - `upstreamSecretName`: import this secret (full ARN or name) instead of creating one;
 * - `stripeSecretName`: the same for the Stripe secret (`<stack>/stripe` is kept by `cdk destroy`);
 * - `upstreamBaseUrls`: object, or JSON string, of `*_BASE_URL` overrides;
 * - `chatReservedConcurrency`, `embeddingsReservedConcurrency`: integers (default none);
 * - `logRetentionDays` (default 30), `chatLogRetentionDays`, `embeddingsLogRetentionDays`: days the
 *   function logs are kept, one of CloudWatch's values (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365,
 *   400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653);
 * - `monitoring`: `false` to skip alarms and the dashboard (default true);
 * - `alarmEmail`: address subscribed to the alarm topic (it must confirm the subscription);
 * - `accountConcurrencyLimit`: the account's Lambda concurrency quota, for the concurrency alarm (default: the smallest quota
 *   the stack deploys on, 100 + its reserved concurrency; pass the real one);
 * - `tracing`: `true` for X-Ray tracing (default false);
 * - `domainName` with `certificateArn` (ACM, us-east-1) and/or `hostedZoneId` + `hostedZoneName`: a
 *   custom domain on the distribution;
 * - `waf`: default on where it can be: a WAF web ACL is created when the stack is deployed in us-east-1
 *   (a CloudFront web ACL can only be made there) and left out elsewhere; `true` requires it (a stack
 *   elsewhere is refused), `false` turns it off; `wafWebAclArn` attaches an existing one (made in
 *   us-east-1) instead; `wafRateLimit`: requests per 5 minutes per IP (default 2000);
 * - `accessLogRetentionDays`: days CloudFront access logs are kept (default 90);
 * - `originSecretVersion`: the origin secret's VersionId CloudFront should send (rotation, see README);
 * - `chatMemoryMb`, `embeddingsMemoryMb`: each function's memory, integer MB in Lambda's range
 *   128–10,240 (default: the endpoint construct's, chosen by `npm run bench`'s cost table);
 * - `publicBaseUrl`: the URL people reach the deployment at, for messages (default: the custom domain;
 *   without either, messages name no host, so a direct Function URL never leaks);
 * - `settleReservedConcurrency` (default 5, at least 3), `accountReservedConcurrency` (default 10):
 *   reserved concurrency of the settle and account functions, so chat streams never starve them;
 * - `deploymentConfig`: CodeDeploy's config for the request functions' `live` alias (default
 *   `LambdaCanary10Percent5Minutes`; one of {@link DEPLOYMENT_CONFIGS});
 * - `backup`: `false` to skip the AWS Backup plan (default true); `backupCopyRegion`: a region whose
 *   vault `backupCopyVaultName` (default `modelmux-backup-copy`) receives a copy of every backup;
 * - `budgetMonthlyUsd` with `budgetEmail` (default `alarmEmail`): a monthly AWS Budget;
 *   `costAnomalyDetection`: `true` for a Cost Anomaly Detection monitor mailing `budgetEmail`;
 * - `cognitoDomainPrefix` with `oauthCallbackUrls` (comma-separated): a Cognito hosted domain and
 *   OAuth code flow on the dashboard client (default none: password and SRP sign-in only);
 * - `cognitoThreatProtection`: `false` to leave Cognito threat protection off (default true: the Plus
 *   feature plan, standard threat protection in audit mode);
 * - `functionSettings`: object, or JSON string, of function settings (config/env.ts names, e.g.
 *   `{"RATE_LIMIT_RPM":"1200"}`), validated by that schema and passed to every function;
 * - `restoredTables`: object, or JSON string, `{"keys":…,"accounts":…,"ledger":…}` of tables restored
 *   by `npm run restore` (it writes this key into cdk.context.json) to use instead of the stack's own;
 * - `emailFrom` (a verified SES identity's address), `emailFromName`, `emailIdentity` (the address or
 *   its domain, as verified; default the address): mail from the functions and Cognito (MailSender);
 * - `legacyEmailIndex`: `true` keeps the old `byEmail` index (step 1 of the upgrade to `byEmailKeys`, README);
 * - `compute`: `managed-instances` runs chat and embeddings on Lambda Managed Instances (default `lambda`:
 *   per invocation), with `vpcId` + `vpcSubnetIds` (an existing VPC; default a new one) and
 *   `managedInstancesMinEnvironments`, `…MaxEnvironments`, `…MaxVCpus`, `…MaxConcurrency`, `…NatGateways` (docs/managed-instances.md).
 *
 * Parsed through one zod schema (`contextSchema` below, one field per key).
 * @throws Error on a value of the wrong shape, naming the context key.
 */
export function stackPropsFromContext(node: Node): Omit<ModelmuxStackProps, keyof StackProps | 'tableRemovalPolicy'> {
  const c = parseContext(node);
  const { domainName, certificateArn, hostedZoneId, hostedZoneName, wafWebAclArn } = c;
  if (domainName === undefined && (certificateArn ?? hostedZoneId ?? hostedZoneName) !== undefined) {
    throw new Error('context certificateArn, hostedZoneId and hostedZoneName need domainName');
  }
  if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) throw new Error('context hostedZoneId and hostedZoneName go together');
  if (domainName !== undefined && certificateArn === undefined && hostedZoneId === undefined) {
    throw new Error('context domainName needs certificateArn (ACM, us-east-1) or hostedZoneId + hostedZoneName');
  }
  const budgetEmail = checkOperations(c);
  if (c.waf === true && wafWebAclArn !== undefined) throw new Error('context waf=true and wafWebAclArn exclude each other');
  const createWaf = wafWebAclArn === undefined && (c.waf === true || (c.waf === undefined && (c.cloudfront ?? true)));
  return {
    cloudfront: c.cloudfront ?? true,
    upstreamSecretName: c.upstreamSecretName,
    stripeSecretName: c.stripeSecretName,
    upstreamBaseUrls: c.upstreamBaseUrls,
    chatReservedConcurrency: c.chatReservedConcurrency,
    embeddingsReservedConcurrency: c.embeddingsReservedConcurrency,
    logRetentionDays: c.logRetentionDays,
    chatLogRetentionDays: c.chatLogRetentionDays,
    embeddingsLogRetentionDays: c.embeddingsLogRetentionDays,
    monitoring: c.monitoring ?? true,
    alarmEmail: c.alarmEmail,
    accountConcurrencyLimit: c.accountConcurrencyLimit,
    tracing: c.tracing ?? false,
    domain:
      domainName === undefined
        ? undefined
        : { domainName, certificateArn, hostedZone: hostedZoneId && hostedZoneName ? { hostedZoneId, zoneName: hostedZoneName } : undefined },
    waf: createWaf ? { rateLimit: c.wafRateLimit, required: c.waf === true } : wafWebAclArn !== undefined ? { webAclArn: wafWebAclArn } : undefined,
    accessLogRetentionDays: c.accessLogRetentionDays,
    originSecretVersion: c.originSecretVersion,
    chatMemoryMb: c.chatMemoryMb,
    embeddingsMemoryMb: c.embeddingsMemoryMb,
    publicBaseUrl: c.publicBaseUrl,
    settleReservedConcurrency: c.settleReservedConcurrency,
    accountReservedConcurrency: c.accountReservedConcurrency,
    deploymentConfig: c.deploymentConfig,
    backup: c.backup === false ? false : { copyRegion: c.backupCopyRegion, copyVaultName: c.backupCopyVaultName },
    budget: c.budgetMonthlyUsd === undefined || budgetEmail === undefined ? undefined : { monthlyUsd: c.budgetMonthlyUsd, email: budgetEmail },
    costAnomalyDetection: c.costAnomalyDetection === true && budgetEmail !== undefined ? { email: budgetEmail } : undefined,
    hostedSignIn:
      c.cognitoDomainPrefix === undefined || c.oauthCallbackUrls === undefined
        ? undefined
        : { domainPrefix: c.cognitoDomainPrefix, callbackUrls: c.oauthCallbackUrls },
    cognitoThreatProtection: c.cognitoThreatProtection ?? true,
    functionSettings: c.functionSettings,
    legacyEmailIndex: c.legacyEmailIndex ?? false,
    restoredTables: c.restoredTables,
    email: c.emailFrom === undefined ? undefined : { from: c.emailFrom, fromName: c.emailFromName, identity: c.emailIdentity },
    managedInstances: managedInstancesOf(c),
  };
}

/**
 * `compute=managed-instances` and its options (docs/managed-instances.md), checked against the options
 * they exclude; undefined for per-invocation Lambda (the default).
 * @throws Error naming the context keys.
 */
function managedInstancesOf(c: StackContext): ManagedInstancesOptions | undefined {
  const { vpcId, vpcSubnetIds } = c;
  const options = {
    minEnvironments: c.managedInstancesMinEnvironments,
    maxEnvironments: c.managedInstancesMaxEnvironments,
    maxVCpus: c.managedInstancesMaxVCpus,
    maxConcurrency: c.managedInstancesMaxConcurrency,
    natGateways: c.managedInstancesNatGateways,
  };
  if (c.compute !== 'managed-instances') {
    if ([vpcId, vpcSubnetIds, ...Object.values(options)].some((v) => v !== undefined))
      throw new Error('context vpcId, vpcSubnetIds and managedInstances* need compute=managed-instances');
    return undefined;
  }
  if ((vpcId === undefined) !== (vpcSubnetIds === undefined)) throw new Error('context vpcId and vpcSubnetIds go together');
  if ((c.chatMemoryMb ?? MI_MIN_MEMORY_MB) < MI_MIN_MEMORY_MB || (c.embeddingsMemoryMb ?? MI_MIN_MEMORY_MB) < MI_MIN_MEMORY_MB) {
    throw new Error(`context chatMemoryMb and embeddingsMemoryMb must be at least ${MI_MIN_MEMORY_MB} with compute=managed-instances`);
  }
  if (c.chatReservedConcurrency !== undefined || c.embeddingsReservedConcurrency !== undefined)
    throw new Error(
      'context chatReservedConcurrency and embeddingsReservedConcurrency do not apply with compute=managed-instances (use managedInstancesMaxEnvironments)',
    );
  // X-Ray's SDK finds the invocation's segment per process, not per concurrent invocation: not proven safe there.
  if (c.tracing === true) throw new Error('context tracing is not supported with compute=managed-instances (docs/managed-instances.md §3)');
  if ((options.maxEnvironments ?? Infinity) < (options.minEnvironments ?? 0))
    throw new Error('context managedInstancesMaxEnvironments must be at least managedInstancesMinEnvironments');
  return { ...options, vpc: vpcId === undefined || vpcSubnetIds === undefined ? undefined : { vpcId, subnetIds: vpcSubnetIds } };
}

/**
 * Checks the operations options that go together; returns the budget's email (budgetEmail, else alarmEmail).
 * @throws Error naming the context keys.
 */
function checkOperations(c: StackContext): string | undefined {
  if (c.backupCopyVaultName !== undefined && c.backupCopyRegion === undefined) throw new Error('context backupCopyVaultName needs backupCopyRegion');
  if ((c.cognitoDomainPrefix === undefined) !== (c.oauthCallbackUrls === undefined))
    throw new Error('context cognitoDomainPrefix and oauthCallbackUrls go together');
  if (c.emailFrom === undefined && (c.emailFromName ?? c.emailIdentity) !== undefined)
    throw new Error('context emailFromName and emailIdentity need emailFrom');
  const budgetEmail = c.budgetEmail ?? c.alarmEmail;
  if ((c.budgetMonthlyUsd !== undefined || c.costAnomalyDetection === true) && budgetEmail === undefined) {
    throw new Error('context budgetMonthlyUsd and costAnomalyDetection need budgetEmail (or alarmEmail)');
  }
  return budgetEmail;
}

/** CloudWatch Logs' allowed retention periods, days (PutRetentionPolicy API reference). */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

/** Lambda's memory range, MB (Lambda Developer Guide, "Configure Lambda function memory"). */
const LAMBDA_MEMORY_MB = { min: 128, max: 10_240 } as const;

/** `-c name=value` gives strings: '' (like unset or null) means "not set". */
const unsetToUndefined = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : v);
/** Marks a string value that is not JSON (objectValue tells it from a non-object). */
const NOT_JSON = Symbol('not JSON');

const booleanValue = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean({ error: 'must be true or false' }));
const stringValue = z.string({ error: 'must be a string' });
const integerValue = z.preprocess(
  (v) => (typeof v === 'string' ? Number(v) : v),
  z.number({ error: 'must be a non-negative integer' }).int({ error: 'must be a non-negative integer' }).min(0, { error: 'must be a non-negative integer' }),
);
const retentionValue = integerValue.pipe(
  z.number().refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), {
    error: `must be one of CloudWatch's retention periods: ${LOG_RETENTION_DAYS.join(', ')}`,
  }),
);
const MEMORY_RANGE = `must be an integer from ${LAMBDA_MEMORY_MB.min} to ${LAMBDA_MEMORY_MB.max} (MB)`;
const memoryValue = integerValue.pipe(z.number().min(LAMBDA_MEMORY_MB.min, { error: MEMORY_RANGE }).max(LAMBDA_MEMORY_MB.max, { error: MEMORY_RANGE }));
const emailValue = stringValue.regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { error: 'must be an email address' });
const objectValue = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return NOT_JSON;
    }
  },
  z.record(z.string(), stringValue, { error: (issue) => (issue.input === NOT_JSON ? 'must be a JSON object' : 'must be an object') }),
);

/** `functionSettings`: only {@link DEPLOYABLE_SETTINGS}, each value accepted by config/env.ts's schema. */
const settingsValue = objectValue.superRefine((settings, ctx) => {
  for (const name of Object.keys(settings)) {
    if (!DEPLOYABLE_SETTINGS.includes(name)) {
      const why = STACK_OWNED_SETTINGS.has(name) ? 'is set by the stack' : 'is not a setting of config/env.ts';
      ctx.addIssue({ code: 'custom', message: `names ${name}, which ${why}` });
      return;
    }
  }
  try {
    loadConfig(settings);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    ctx.addIssue({ code: 'custom', message: `is invalid: ${err.message}` });
  }
});
const csvValue = stringValue.transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);
const urlListValue = csvValue.pipe(
  z
    .array(
      z
        .string()
        .regex(/^https:\/\/\S+$|^http:\/\/localhost(:\d+)?\/\S*$/, { error: 'must be https URLs (http only for localhost)' })
        .min(1),
    )
    .min(1, { error: 'must list at least one URL' }),
);

const opt = <T extends z.ZodType>(schema: T) => z.preprocess(unsetToUndefined, schema.optional());

/** Every context key the stack reads, with its zod schema (see {@link stackPropsFromContext}). */
const contextSchema = z.object({
  cloudfront: opt(booleanValue),
  upstreamSecretName: opt(stringValue),
  stripeSecretName: opt(stringValue),
  upstreamBaseUrls: opt(objectValue),
  chatReservedConcurrency: opt(integerValue),
  embeddingsReservedConcurrency: opt(integerValue),
  logRetentionDays: opt(retentionValue),
  chatLogRetentionDays: opt(retentionValue),
  embeddingsLogRetentionDays: opt(retentionValue),
  monitoring: opt(booleanValue),
  alarmEmail: opt(emailValue),
  accountConcurrencyLimit: opt(integerValue),
  tracing: opt(booleanValue),
  domainName: opt(stringValue),
  certificateArn: opt(stringValue),
  hostedZoneId: opt(stringValue),
  hostedZoneName: opt(stringValue),
  waf: opt(booleanValue),
  wafWebAclArn: opt(stringValue),
  wafRateLimit: opt(integerValue),
  accessLogRetentionDays: opt(integerValue),
  originSecretVersion: opt(stringValue),
  chatMemoryMb: opt(memoryValue),
  embeddingsMemoryMb: opt(memoryValue),
  publicBaseUrl: opt(stringValue.regex(/^https?:\/\/[^\s/]+(\/.*)?$/, { error: 'must be an http(s) URL' })),
  settleReservedConcurrency: opt(integerValue.pipe(z.number().min(3, { error: 'must be at least 3 (two queue pollers and the sweep)' }))),
  accountReservedConcurrency: opt(integerValue.pipe(z.number().min(1, { error: 'must be at least 1' }))),
  deploymentConfig: opt(z.enum(DEPLOYMENT_CONFIGS, { error: `must be one of ${DEPLOYMENT_CONFIGS.join(', ')}` })),
  backup: opt(booleanValue),
  backupCopyRegion: opt(stringValue.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'must be an AWS region name' })),
  backupCopyVaultName: opt(stringValue.regex(/^[A-Za-z0-9_.-]{2,50}$/, { error: 'must be a backup vault name' })),
  budgetMonthlyUsd: opt(integerValue.pipe(z.number().min(1, { error: 'must be at least 1 (USD)' }))),
  budgetEmail: opt(emailValue),
  costAnomalyDetection: opt(booleanValue),
  cognitoDomainPrefix: opt(
    stringValue.regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, { error: 'must be a Cognito domain prefix (lower case, digits, hyphens)' }),
  ),
  oauthCallbackUrls: opt(urlListValue),
  cognitoThreatProtection: opt(booleanValue),
  functionSettings: opt(settingsValue),
  emailFrom: opt(emailValue),
  emailFromName: opt(
    stringValue
      .regex(/^[\x20-\x7E]{1,64}$/, { error: 'must be 1 to 64 printable ASCII characters' })
      .refine((v) => !/["\\<>]/.test(v), { error: 'must not contain ", \\, < or >' }),
  ),
  emailIdentity: opt(stringValue.regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$|^[a-z0-9.-]+\.[a-z]{2,}$/i, { error: 'must be the emailFrom address or its domain' })),
  legacyEmailIndex: opt(booleanValue),
  compute: opt(z.enum(['lambda', 'managed-instances'], { error: 'must be lambda or managed-instances' })),
  vpcId: opt(stringValue.regex(/^vpc-[0-9a-f]{8,17}$/, { error: 'must be a VPC id (vpc-…)' })),
  vpcSubnetIds: opt(
    csvValue.pipe(
      z
        .array(z.string().regex(/^subnet-[0-9a-f]{8,17}$/, { error: 'must be subnet ids (subnet-…)' }))
        .min(1)
        .max(16, { error: 'must list 1 to 16 subnets' }),
    ),
  ),
  managedInstancesMinEnvironments: opt(integerValue.pipe(z.number().max(15_000, { error: 'must be at most 15000' }))),
  managedInstancesMaxEnvironments: opt(integerValue.pipe(z.number().min(1, { error: 'must be at least 1' }).max(15_000, { error: 'must be at most 15000' }))),
  managedInstancesMaxVCpus: opt(
    integerValue.pipe(z.number().min(12, { error: 'must be from 12 to 15000' }).max(15_000, { error: 'must be from 12 to 15000' })),
  ),
  managedInstancesNatGateways: opt(integerValue.pipe(z.number().min(1, { error: 'must be from 1 to 3' }).max(3, { error: 'must be from 1 to 3' }))),
  managedInstancesMaxConcurrency: opt(integerValue.pipe(z.number().min(1, { error: 'must be from 1 to 1600' }).max(1600, { error: 'must be from 1 to 1600' }))),
  restoredTables: opt(
    objectValue.superRefine((tables, ctx) => {
      for (const name of Object.keys(tables))
        if (!['keys', 'accounts', 'ledger'].includes(name))
          ctx.addIssue({ code: 'custom', message: `names ${name}; only keys, accounts and ledger are restored` });
    }),
  ),
});

/** Every context key the stack reads (`-c <key>=…`), as {@link contextSchema} names them. */
export const CONTEXT_KEYS: readonly string[] = Object.keys(contextSchema.shape);

/** The context values, parsed. */
type StackContext = z.output<typeof contextSchema>;

/**
 * Reads every key of {@link contextSchema} from the node's context and parses them.
 * @throws Error `context <key> must be …` for the first key of the wrong shape.
 */
function parseContext(node: Node): StackContext {
  const raw = Object.fromEntries(CONTEXT_KEYS.map((key) => [key, node.tryGetContext(key) as unknown]));
  const parsed = contextSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = (issue?.path ?? []).map(String).join('.');
  throw new Error(`context ${path} ${issue?.message ?? 'is invalid'}`);
}

import type { Node } from 'constructs';
import * as z from 'zod';
import type { ModelmuxStackProps } from './modelmux-stack';

/**
 * Stack options from CDK context (`cdk.json` "context", or `-c name=value` on the command line, where
 * every value arrives as a string):
 * - `cloudfront`: `false` to skip the CloudFront distribution (default true);
 * - `upstreamSecretName`: import this secret (full ARN or name) instead of creating one;
 * - `upstreamBaseUrls`: object, or JSON string, of `*_BASE_URL` overrides;
 * - `chatReservedConcurrency`, `embeddingsReservedConcurrency`: integers (default none);
 * - `logRetentionDays` (default 30), `chatLogRetentionDays`, `embeddingsLogRetentionDays`: days the
 *   function logs are kept, one of CloudWatch's values (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365,
 *   400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653);
 * - `monitoring`: `false` to skip alarms and the dashboard (default true);
 * - `alarmEmail`: address subscribed to the alarm topic (it must confirm the subscription);
 * - `accountConcurrencyLimit`: the account's Lambda concurrency quota, for the concurrency alarm (default 1000);
 * - `tracing`: `true` for X-Ray tracing (default false);
 * - `domainName` with `certificateArn` (ACM, us-east-1) and/or `hostedZoneId` + `hostedZoneName`: a
 *   custom domain on the distribution;
 * - `waf`: `true` to create a WAF web ACL (stack in us-east-1), or `wafWebAclArn` to attach an existing
 *   one; `wafRateLimit`: requests per 5 minutes per IP (default 2000);
 * - `accessLogRetentionDays`: days CloudFront access logs are kept (default 90);
 * - `originSecretVersion`: the origin secret's VersionId CloudFront should send (rotation, see README);
 * - `chatMemoryMb`, `embeddingsMemoryMb`: each function's memory, integer MB in Lambda's range
 *   128–10,240 (default: the endpoint construct's, chosen by `npm run bench`'s cost table);
 * - `publicBaseUrl`: the URL people reach the deployment at, for messages (default: each request's host).
 *
 * Parsed through one zod schema (`contextSchema` below, one field per key).
 * @throws Error on a value of the wrong shape, naming the context key.
 */
export function stackPropsFromContext(node: Node): Pick<
  ModelmuxStackProps,
  | 'cloudfront'
  | 'upstreamSecretName'
  | 'upstreamBaseUrls'
  | 'chatReservedConcurrency'
  | 'embeddingsReservedConcurrency'
  | 'logRetentionDays'
  | 'chatLogRetentionDays'
  | 'embeddingsLogRetentionDays'
  | 'monitoring'
  | 'alarmEmail'
  | 'accountConcurrencyLimit'
  | 'tracing'
  | 'domain'
  | 'waf'
  | 'accessLogRetentionDays'
  | 'originSecretVersion'
  | 'chatMemoryMb'
  | 'embeddingsMemoryMb'
  | 'publicBaseUrl'
> {
  const c = parseContext(node);
  const { domainName, certificateArn, hostedZoneId, hostedZoneName, wafWebAclArn } = c;
  if (domainName === undefined && (certificateArn ?? hostedZoneId ?? hostedZoneName) !== undefined) {
    throw new Error('context certificateArn, hostedZoneId and hostedZoneName need domainName');
  }
  if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) throw new Error('context hostedZoneId and hostedZoneName go together');
  if (domainName !== undefined && certificateArn === undefined && hostedZoneId === undefined) {
    throw new Error('context domainName needs certificateArn (ACM, us-east-1) or hostedZoneId + hostedZoneName');
  }
  const createWaf = c.waf ?? false;
  if (createWaf && wafWebAclArn !== undefined) throw new Error('context waf=true and wafWebAclArn exclude each other');
  return {
    cloudfront: c.cloudfront ?? true,
    upstreamSecretName: c.upstreamSecretName,
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
    domain: domainName === undefined ? undefined : { domainName, certificateArn, hostedZone: hostedZoneId && hostedZoneName ? { hostedZoneId, zoneName: hostedZoneName } : undefined },
    waf: createWaf ? { rateLimit: c.wafRateLimit } : wafWebAclArn !== undefined ? { webAclArn: wafWebAclArn } : undefined,
    accessLogRetentionDays: c.accessLogRetentionDays,
    originSecretVersion: c.originSecretVersion,
    chatMemoryMb: c.chatMemoryMb,
    embeddingsMemoryMb: c.embeddingsMemoryMb,
    publicBaseUrl: c.publicBaseUrl,
  };
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
  z.number().refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), { error: `must be one of CloudWatch's retention periods: ${LOG_RETENTION_DAYS.join(', ')}` }),
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

const opt = <T extends z.ZodType>(schema: T) => z.preprocess(unsetToUndefined, schema.optional());

/** Every context key the stack reads, with its zod schema (see {@link stackPropsFromContext}). */
const contextSchema = z.object({
  cloudfront: opt(booleanValue),
  upstreamSecretName: opt(stringValue),
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
  publicBaseUrl: opt(stringValue),
});

/** The context values, parsed. */
type StackContext = z.output<typeof contextSchema>;

/**
 * Reads every key of {@link contextSchema} from the node's context and parses them.
 * @throws Error `context <key> must be …` for the first key of the wrong shape.
 */
function parseContext(node: Node): StackContext {
  const raw = Object.fromEntries(Object.keys(contextSchema.shape).map((key) => [key, node.tryGetContext(key) as unknown]));
  const parsed = contextSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = (issue?.path ?? []).map(String).join('.');
  throw new Error(`context ${path} ${issue?.message ?? 'is invalid'}`);
}

import type { Node } from 'constructs';
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
  const domainName = stringContext(node, 'domainName');
  const certificateArn = stringContext(node, 'certificateArn');
  const hostedZoneId = stringContext(node, 'hostedZoneId');
  const hostedZoneName = stringContext(node, 'hostedZoneName');
  if (domainName === undefined && (certificateArn ?? hostedZoneId ?? hostedZoneName) !== undefined) {
    throw new Error('context certificateArn, hostedZoneId and hostedZoneName need domainName');
  }
  if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) throw new Error('context hostedZoneId and hostedZoneName go together');
  if (domainName !== undefined && certificateArn === undefined && hostedZoneId === undefined) {
    throw new Error('context domainName needs certificateArn (ACM, us-east-1) or hostedZoneId + hostedZoneName');
  }
  const wafWebAclArn = stringContext(node, 'wafWebAclArn');
  const createWaf = booleanContext(node, 'waf') ?? false;
  if (createWaf && wafWebAclArn !== undefined) throw new Error('context waf=true and wafWebAclArn exclude each other');
  return {
    cloudfront: booleanContext(node, 'cloudfront') ?? true,
    upstreamSecretName: stringContext(node, 'upstreamSecretName'),
    upstreamBaseUrls: objectContext(node, 'upstreamBaseUrls'),
    chatReservedConcurrency: integerContext(node, 'chatReservedConcurrency'),
    embeddingsReservedConcurrency: integerContext(node, 'embeddingsReservedConcurrency'),
    logRetentionDays: retentionContext(node, 'logRetentionDays'),
    chatLogRetentionDays: retentionContext(node, 'chatLogRetentionDays'),
    embeddingsLogRetentionDays: retentionContext(node, 'embeddingsLogRetentionDays'),
    monitoring: booleanContext(node, 'monitoring') ?? true,
    alarmEmail: emailContext(node, 'alarmEmail'),
    accountConcurrencyLimit: integerContext(node, 'accountConcurrencyLimit'),
    tracing: booleanContext(node, 'tracing') ?? false,
    domain: domainName === undefined ? undefined : { domainName, certificateArn, hostedZone: hostedZoneId && hostedZoneName ? { hostedZoneId, zoneName: hostedZoneName } : undefined },
    waf: createWaf ? { rateLimit: integerContext(node, 'wafRateLimit') } : wafWebAclArn !== undefined ? { webAclArn: wafWebAclArn } : undefined,
    accessLogRetentionDays: integerContext(node, 'accessLogRetentionDays'),
    originSecretVersion: stringContext(node, 'originSecretVersion'),
    chatMemoryMb: memoryContext(node, 'chatMemoryMb'),
    embeddingsMemoryMb: memoryContext(node, 'embeddingsMemoryMb'),
    publicBaseUrl: stringContext(node, 'publicBaseUrl'),
  };
}

/** CloudWatch Logs' allowed retention periods, days (PutRetentionPolicy API reference). */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

function retentionContext(node: Node, key: string): number | undefined {
  const days = integerContext(node, key);
  if (days !== undefined && !(LOG_RETENTION_DAYS as readonly number[]).includes(days)) {
    throw new Error(`context ${key} must be one of CloudWatch's retention periods: ${LOG_RETENTION_DAYS.join(', ')}`);
  }
  return days;
}

function emailContext(node: Node, key: string): string | undefined {
  const value = stringContext(node, key);
  if (value !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) throw new Error(`context ${key} must be an email address`);
  return value;
}

/** Lambda's memory range, MB (Lambda Developer Guide, "Configure Lambda function memory"). */
const LAMBDA_MEMORY_MB = { min: 128, max: 10_240 } as const;

function memoryContext(node: Node, key: string): number | undefined {
  const value = integerContext(node, key);
  if (value !== undefined && (value < LAMBDA_MEMORY_MB.min || value > LAMBDA_MEMORY_MB.max)) {
    throw new Error(`context ${key} must be an integer from ${LAMBDA_MEMORY_MB.min} to ${LAMBDA_MEMORY_MB.max} (MB)`);
  }
  return value;
}

function booleanContext(node: Node, key: string): boolean | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`context ${key} must be true or false`);
}

function stringContext(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key} must be a string`);
  return value;
}

function integerContext(node: Node, key: string): number | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  const parsed = typeof value === 'string' ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isInteger(parsed) || parsed < 0) {
    throw new Error(`context ${key} must be a non-negative integer`);
  }
  return parsed;
}

function objectContext(node: Node, key: string): Record<string, string> | undefined {
  let value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Error(`context ${key} must be a JSON object`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`context ${key} must be an object`);
  const result: Record<string, string> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw new Error(`context ${key}.${name} must be a string`);
    result[name] = entry;
  }
  return result;
}

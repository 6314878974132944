import type { Node } from 'constructs';
import type { ModelmuxStackProps } from './modelmux-stack';

/**
 * Stack options from CDK context (`cdk.json` "context", or `-c name=value` on the command line, where
 * every value arrives as a string):
 * - `cloudfront`: `false` to skip the CloudFront distribution (default true);
 * - `upstreamSecretName`: import this secret (full ARN or name) instead of creating one;
 * - `upstreamBaseUrls`: object, or JSON string, of `*_BASE_URL` overrides;
 * - `chatReservedConcurrency`, `embeddingsReservedConcurrency`: integers (default none);
 * - `chatMemoryMb`, `embeddingsMemoryMb`: each function's memory, integer MB in Lambda's range
 *   128–10,240 (default: the endpoint construct's, chosen by `npm run bench`'s cost table);
 * - `publicBaseUrl`: the URL people reach the deployment at, for messages (default: each request's host).
 *
 * @throws Error on a value of the wrong shape, naming the context key.
 */
export function stackPropsFromContext(node: Node): Pick<
  ModelmuxStackProps,
  | 'cloudfront' | 'upstreamSecretName' | 'upstreamBaseUrls' | 'chatReservedConcurrency' | 'embeddingsReservedConcurrency' | 'chatMemoryMb' | 'embeddingsMemoryMb'
  | 'publicBaseUrl'
> {
  return {
    cloudfront: booleanContext(node, 'cloudfront') ?? true,
    upstreamSecretName: stringContext(node, 'upstreamSecretName'),
    upstreamBaseUrls: objectContext(node, 'upstreamBaseUrls'),
    chatReservedConcurrency: integerContext(node, 'chatReservedConcurrency'),
    embeddingsReservedConcurrency: integerContext(node, 'embeddingsReservedConcurrency'),
    chatMemoryMb: memoryContext(node, 'chatMemoryMb'),
    embeddingsMemoryMb: memoryContext(node, 'embeddingsMemoryMb'),
    publicBaseUrl: stringContext(node, 'publicBaseUrl'),
  };
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

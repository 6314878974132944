/**
 * lib-dynamodb's document client over the SDK's DynamoDB client: the store client's second path
 * (store/lean-document-client.ts loads this module with `import()` only when a call needs it: an SDK
 * command such as CreateTable, or no environment credentials). Never part of a Lambda bundle.
 */
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as Doc from '@aws-sdk/lib-dynamodb';
import type { AwsCredentials } from '../aws/aws-json';
import type { StoreCommand } from './dynamo-commands';

/** How store/dynamo.ts configures the SDK client (same pool and limits as the JSON path). */
export interface SdkDocumentClientOptions {
  region?: string;
  endpoint?: string;
  /** Undefined: the SDK's default chain (profiles, SSO: the admin CLI). */
  credentials?: AwsCredentials;
  agent: HttpAgent | HttpsAgent;
  maxAttempts: number;
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
}

/**
 * A document client with the store's pool, limits and marshalling (`removeUndefinedValues`, numbers as
 * JS numbers), whose `destroy()` also destroys the SDK client (lib-dynamodb's own is a no-op).
 */
export function createSdkDocumentClient(opts: SdkDocumentClientOptions): Doc.DynamoDBDocumentClient {
  const plain = opts.endpoint?.startsWith('http:') === true;
  const client = new DynamoDBClient({
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    maxAttempts: opts.maxAttempts,
    requestHandler: {
      ...(plain ? { httpAgent: opts.agent } : { httpsAgent: opts.agent }),
      connectionTimeout: opts.connectionTimeoutMs,
      requestTimeout: opts.requestTimeoutMs,
      // Without this the SDK only logs a warning when requestTimeout passes (smithy NodeHttpHandlerOptions).
      throwOnRequestTimeout: true,
    },
  });
  // The SDK's logger middleware runs its sensitive-field log filters over every input and output even
  // with no logger configured; we never pass the SDK a logger.
  client.middlewareStack.remove('loggerMiddleware');
  const doc = Doc.DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  doc.destroy = () => client.destroy();
  return doc;
}

/** The lib-dynamodb command of a store command (same name, same input). */
export function toSdkCommand(command: StoreCommand<object, object>): Parameters<Doc.DynamoDBDocumentClient['send']>[0] {
  const Command = (Doc as unknown as Record<string, new (input: object) => Parameters<Doc.DynamoDBDocumentClient['send']>[0]>)[command.sdkName];
  if (Command === undefined) throw new Error(`lib-dynamodb has no ${command.sdkName}`);
  return new Command(command.input);
}

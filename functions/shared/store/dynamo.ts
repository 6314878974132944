/**
 * The DynamoDB document client: one per container, created on first use and reused by every request
 * (SDK clients hold connection pools and credential caches; creating one per request wastes both).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { config } from '../config/env';
import { AwsJsonClient, envCredentials, type AwsCredentials } from '../aws/aws-json';
import { dynamoErrorFromResponse } from './dynamo-json-errors';
import { StoreClient } from './lean-document-client';

/** Options for {@link createDocumentClient}; every field defaults from the environment. */
export interface DocumentClientOptions {
  /** e.g. `http://127.0.0.1:8000` for DynamoDB Local; omitted = the AWS regional endpoint. */
  endpoint?: string;
  /** AWS region; default `AWS_REGION`, else the SDK's region chain (profile config); `us-east-1` for a custom endpoint. */
  region?: string;
  /** Total attempts per call, including the first (SDK retry strategy). Default 3. */
  maxAttempts?: number;
  /** TCP connect timeout, ms. Default 1000. */
  connectionTimeoutMs?: number;
  /** Whole request/response timeout, ms. Default 3000. */
  requestTimeoutMs?: number;
  /**
   * Store commands over DynamoDB's JSON protocol (store/lean-document-client.ts). Default true; it
   * applies only when the credentials come from the environment (Lambda) or the endpoint is DynamoDB
   * Local, and the region is known: otherwise everything goes through the SDK (loaded on first use).
   */
  lean?: boolean;
}

/**
 * Request-path limits: a Lambda that waits 30 s for an unreachable table burns money and the client's
 * patience; three short attempts fail in a few seconds and become a 503 (see store-errors.ts).
 */
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_CONNECTION_TIMEOUT_MS = 1_000;
/** For a client made with no limits of its own; the container's client takes `DYNAMODB_REQUEST_TIMEOUT_MS` (config/env.ts). */
const DEFAULT_REQUEST_TIMEOUT_MS = 3_000;

/**
 * The connection pool of one client. Keep-alive, so a container signs and sends every call over the
 * same warm TCP (and, against AWS, TLS) connection: a new TLS connection costs a handshake's CPU and a
 * round trip. `maxSockets` 50 is the SDK's own default (smithy NodeHttpHandler); a Lambda invocation
 * has a few calls in flight at most. `lifo` reuses the most recently used socket first, so after a
 * burst the idle ones age out instead of being kept half-alive by round-robin reuse, and the socket a
 * thawed container picks is the one least likely to have been closed by the server meanwhile.
 * `keepAliveMsecs`: TCP keep-alive probes on idle sockets (Node's default 1 s).
 */
export const DYNAMODB_AGENT_OPTIONS: Readonly<AgentOptions> = { keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 50, scheduling: 'lifo' };

/** Credentials DynamoDB Local accepts (it checks only that some are present). */
const LOCAL_DUMMY_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * Instrumentation seam: when `globalThis[SDK_CLIENT_HOOK]` is a function, every DynamoDB client made
 * here is passed to it once, before its first call, e.g. to add an SDK-style `initialize` middleware
 * (its `middlewareStack` reaches both paths of the client). Only `npm run bench`
 * sets it (bench/aws-calls.ts counts calls and consumed capacity units there); `Symbol.for` makes it the
 * same key in a bundle and in the bench. Unset in Lambda: one property read per client, per container.
 */
export const SDK_CLIENT_HOOK = Symbol.for('modelmux.sdkClientCreated');

/**
 * The client's credentials: the environment's (always set in Lambda: the execution role's; see
 * aws/aws-json.ts envCredentials). For a custom endpoint (DynamoDB Local) without them, dummy static
 * credentials, so the default chain does not probe IMDS. Otherwise `undefined`: the SDK's default chain
 * (profiles, SSO: the admin CLI), on the SDK path.
 */
function credentialsFor(endpoint: string | undefined): AwsCredentials | undefined {
  return envCredentials() ?? (endpoint ? LOCAL_DUMMY_CREDENTIALS : undefined);
}

/**
 * Makes a new document client, with its own keep-alive connection pool ({@link DYNAMODB_AGENT_OPTIONS};
 * `destroy()` closes it). Numbers come back as JS numbers; `removeUndefinedValues` lets item objects
 * carry optional fields. Credentials: see {@link credentialsFor}. Store commands take the JSON-protocol
 * path (see {@link DocumentClientOptions.lean}); the hook, when set, is given the client.
 */
export function createDocumentClient(opts: DocumentClientOptions = {}): StoreClient {
  const endpoint = opts.endpoint;
  const credentials = credentialsFor(endpoint);
  // Without an explicit region, let the SDK's chain find it (AWS_REGION, then the profile in
  // ~/.aws/config, for the admin CLI); a made-up default would send it to the wrong region's tables.
  // DynamoDB Local ignores the region, but a request must be signed for one.
  const region = opts.region ?? process.env.AWS_REGION ?? (endpoint ? 'us-east-1' : undefined);
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const connectionTimeoutMs = opts.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS;
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // One pool for both paths. Ours rather than the SDK's default (also keep-alive, 50 sockets): stated,
  // and tested (test/store/connection-reuse.test.ts). Only the one the endpoint's scheme needs is made.
  const plain = endpoint?.startsWith('http:') === true;
  const agent = plain ? new HttpAgent(DYNAMODB_AGENT_OPTIONS) : new HttpsAgent(DYNAMODB_AGENT_OPTIONS);
  const limits = { agent, maxAttempts, connectionTimeoutMs, requestTimeoutMs };
  const json =
    opts.lean !== false && credentials !== undefined && region !== undefined
      ? new AwsJsonClient({
          endpoint: endpoint ?? `https://dynamodb.${region}.amazonaws.com`,
          region,
          service: 'dynamodb',
          targetPrefix: 'DynamoDB_20120810',
          jsonVersion: '1.0',
          credentials,
          errorFromResponse: dynamoErrorFromResponse,
          ...limits,
        })
      : undefined;
  const client = new StoreClient(json, { region, endpoint, credentials, ...limits });
  const hook: unknown = (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK];
  if (typeof hook === 'function') hook(client);
  return client;
}

let shared: StoreClient | undefined;

/**
 * The container's client, made on first call from `DYNAMODB_ENDPOINT` (set only for DynamoDB Local),
 * `DYNAMODB_REQUEST_TIMEOUT_MS` (config/env.ts; `npm start` sets 10,000: DynamoDB Local serialises
 * transactions and is far slower than DynamoDB under concurrency) and `AWS_REGION`. Reading the environment at first use, not at import, lets tests and the admin CLI
 * set it before any store call.
 */
export function documentClient(): StoreClient {
  const { DYNAMODB_REQUEST_TIMEOUT_MS: requestTimeoutMs, DYNAMODB_ENDPOINT } = config();
  // Raised (locally), the connect timeout follows: a loaded machine accepts DynamoDB Local's connections slowly too.
  // Lowered, it never exceeds the request's own limit.
  const connectionTimeoutMs = Math.min(requestTimeoutMs, requestTimeoutMs > DEFAULT_REQUEST_TIMEOUT_MS ? 5_000 : DEFAULT_CONNECTION_TIMEOUT_MS);
  shared ??= createDocumentClient({ endpoint: DYNAMODB_ENDPOINT, requestTimeoutMs, connectionTimeoutMs });
  return shared;
}

/** Replaces the container's client (tests, the local server); `undefined` makes the next call re-read the environment. */
export function setDocumentClient(client: StoreClient | undefined): void {
  shared = client;
}

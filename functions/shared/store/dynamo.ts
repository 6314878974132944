/**
 * The DynamoDB document client: one per container, created on first use and reused by every request
 * (SDK clients hold connection pools and credential caches; creating one per request wastes both).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config/env';
import { DynamoJsonClient } from './dynamo-json';
import { LeanPath, StoreDocumentClient } from './lean-document-client';

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
   * Item reads/writes and transactions over DynamoDB's JSON protocol (store/lean-document-client.ts).
   * Default true; it applies only when the credentials come from the environment (Lambda) or the
   * endpoint is DynamoDB Local, and the region is known: otherwise everything goes through the SDK.
   */
  lean?: boolean;
}

/**
 * Request-path limits: a Lambda that waits 30 s for an unreachable table burns money and the client's
 * patience; three short attempts fail in a few seconds and become a 503 (see store-errors.ts).
 */
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_CONNECTION_TIMEOUT_MS = 1_000;
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
 * here (the SDK client and its JSON-protocol path) is passed to it once, before its first call, e.g. to
 * add an SDK `initialize` middleware. Only `npm run bench`
 * sets it (bench/aws-calls.ts counts calls and consumed capacity units there); `Symbol.for` makes it the
 * same key in a bundle and in the bench. Unset in Lambda: one property read per client, per container.
 */
export const SDK_CLIENT_HOOK = Symbol.for('modelmux.sdkClientCreated');

/**
 * The client's credentials: with `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` set (always, in Lambda:
 * the execution role's credentials), `fromEnv()` given as `credentials`, which the SDK memoizes: the
 * environment is read once per client, not at every call. (Through `credentialDefaultProvider` the SDK
 * takes the provider as already memoized; lambda-credentials.ts stands in for the default chain in the
 * bundles with a bare `fromEnv`, which re-read six variables and built a new identity at each call.)
 * For a custom endpoint (DynamoDB Local) without them, dummy static credentials, so the default chain
 * does not probe IMDS. Otherwise `undefined`: the SDK's default chain (profiles, SSO: the admin CLI).
 */
/**
 * `credentials` read at first use and again only within 5 min of their `expiration` (when the
 * environment states one: `AWS_CREDENTIAL_EXPIRATION`), as the SDK's memoized provider does.
 */
function once(credentials: NonNullable<ReturnType<typeof credentialsFor>>): typeof credentials {
  if (typeof credentials !== 'function') return credentials;
  let current: Awaited<ReturnType<typeof credentials>> | undefined;
  return async () => {
    if (current === undefined || (current.expiration !== undefined && current.expiration.getTime() - Date.now() < 300_000)) current = await credentials();
    return current;
  };
}

function credentialsFor(endpoint: string | undefined) {
  if (process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY) return fromEnv();
  return endpoint ? LOCAL_DUMMY_CREDENTIALS : undefined;
}

/**
 * Makes a new document client, with its own keep-alive connection pool ({@link DYNAMODB_AGENT_OPTIONS};
 * `destroy()` closes it, see StoreDocumentClient). Numbers come back as JS numbers; `removeUndefinedValues` lets item objects
 * carry optional fields. Credentials: see {@link credentialsFor}. Item calls and transactions take the
 * JSON-protocol path (see {@link DocumentClientOptions.lean}); the hook, when set, is given the SDK
 * client and that path (both take `middlewareStack.add`).
 */
export function createDocumentClient(opts: DocumentClientOptions = {}): DynamoDBDocumentClient {
  const endpoint = opts.endpoint;
  const credentials = credentialsFor(endpoint);
  // Without an explicit region, let the SDK's chain find it (AWS_REGION, then the profile in
  // ~/.aws/config, for the admin CLI); a made-up default would send it to the wrong region's tables.
  // DynamoDB Local ignores the region, but the SDK needs one to sign.
  const region = opts.region ?? process.env.AWS_REGION ?? (endpoint ? 'us-east-1' : undefined);
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const connectionTimeoutMs = opts.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS;
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // One pool for both paths. Ours rather than the SDK's default (also keep-alive, 50 sockets): stated,
  // and tested (test/store/connection-reuse.test.ts). Only the one the endpoint's scheme needs is made.
  const plain = endpoint?.startsWith('http:') === true;
  const agent = plain ? new HttpAgent(DYNAMODB_AGENT_OPTIONS) : new HttpsAgent(DYNAMODB_AGENT_OPTIONS);
  const client = new DynamoDBClient({
    ...(region ? { region } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
    maxAttempts,
    requestHandler: {
      ...(plain ? { httpAgent: agent } : { httpsAgent: agent }),
      connectionTimeout: connectionTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // Without this the SDK only logs a warning when requestTimeout passes (smithy NodeHttpHandlerOptions).
      throwOnRequestTimeout: true,
    },
  });
  // The SDK's logger middleware runs its sensitive-field log filters over every input and output even
  // with no logger configured (the default NoOpLogger): ~2% of the gateway's CPU per request in
  // `npm run bench`. Store failures reach our logs as the errors they become (edge/function-url.ts,
  // app/settle-request.ts); we never pass the SDK a logger.
  client.middlewareStack.remove('loggerMiddleware');
  const lean = opts.lean !== false && credentials !== undefined && region !== undefined
    ? new LeanPath(new DynamoJsonClient({ endpoint: endpoint ?? `https://dynamodb.${region}.amazonaws.com`, region, credentials: once(credentials), agent, maxAttempts, connectionTimeoutMs, requestTimeoutMs }))
    : undefined;
  const hook: unknown = (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK];
  if (typeof hook === 'function') {
    hook(client);
    if (lean !== undefined) hook(lean);
  }
  return new StoreDocumentClient(client, lean);
}

let shared: DynamoDBDocumentClient | undefined;

/**
 * The container's client, made on first call from `DYNAMODB_ENDPOINT` (set only for DynamoDB Local),
 * `DYNAMODB_REQUEST_TIMEOUT_MS` (default 3,000; `npm start` sets 10,000: DynamoDB Local serialises
 * transactions and is far slower than DynamoDB under concurrency) and `AWS_REGION`. Reading the environment at first use, not at import, lets tests and the admin CLI
 * set it before any store call.
 */
export function documentClient(): DynamoDBDocumentClient {
  const { DYNAMODB_REQUEST_TIMEOUT_MS: timeout, DYNAMODB_ENDPOINT } = config();
  // Locally the connect timeout follows: a loaded machine accepts DynamoDB Local's connections slowly too.
  shared ??= createDocumentClient({ endpoint: DYNAMODB_ENDPOINT, ...(timeout > 0 ? { requestTimeoutMs: timeout, connectionTimeoutMs: Math.min(timeout, 5_000) } : {}) });
  return shared;
}

/** Replaces the container's client (tests, the local server); `undefined` makes the next call re-read the environment. */
export function setDocumentClient(client: DynamoDBDocumentClient | undefined): void {
  shared = client;
}

/**
 * AWS's JSON protocols spoken directly: one SigV4-signed `POST /` per call over a keep-alive pool. The
 * DynamoDB store (store/dynamo.ts, JSON 1.0) and the Secrets Manager reads (config/secrets-manager.ts,
 * JSON 1.1) go through it, so no Lambda bundle of the request path carries an AWS SDK client
 * (docs/dynamodb-client.md: CPU per call, bundle size and cold start).
 *
 * Why: measured on Node 24 against DynamoDB Local (docs/dynamodb-client.md), lib-dynamodb over the
 * SDK spends about twice the CPU per call of the same call signed by the SDK's own SigV4 signer
 * (`@smithy/signature-v4`) and sent with `node:http` (e.g. UpdateItem 2.0 against 1.2 ms on a loaded
 * machine; the unsigned floor 0.5). `aws4fetch` was measured too and lost: its WebCrypto HMACs cost
 * more CPU in Node than the SDK's whole stack.
 *
 * Wire format (DynamoDB Developer Guide, "DynamoDB low-level API"; Secrets Manager API Reference,
 * "Common parameters"): `Content-Type: application/x-amz-json-1.0|1.1`, `X-Amz-Target:
 * <prefix>.<Operation>`, the request as JSON; errors are 4xx/5xx with `{"__type": "…#<Name>",
 * "message": …}` plus the error's own members.
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import {
  DEFAULT_RETRY_DELAY_BASE,
  MAXIMUM_RETRY_DELAY,
  THROTTLING_RETRY_DELAY_BASE,
  isServerError,
  isThrottlingError,
  isTransientError,
} from '@smithy/core/retry';
import { SignatureV4 } from '@smithy/signature-v4';
import type { SourceData } from '@smithy/types';
import { backoffMs } from '../retry/backoff';
import { retrying, type RetryPolicy } from '../retry/retry';

/** Signing credentials: static, or a provider called at every signing. */
export type AwsCredentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

/**
 * The credentials in `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN` (Lambda puts the
 * execution role's there before INIT; Lambda Developer Guide, "Defined runtime environment variables"),
 * read at first use and again only within 5 min of their `AWS_CREDENTIAL_EXPIRATION`, as the SDK's
 * memoized provider does; `undefined` when they are not set (then the SDK's default chain applies).
 */
export function envCredentials(): AwsCredentials | undefined {
  if (!process.env.AWS_ACCESS_KEY_ID || !process.env.AWS_SECRET_ACCESS_KEY) return undefined;
  type Identity = { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date };
  let current: Identity | undefined;
  const read = (): Identity => {
    const {
      AWS_ACCESS_KEY_ID: accessKeyId = '',
      AWS_SECRET_ACCESS_KEY: secretAccessKey = '',
      AWS_SESSION_TOKEN: sessionToken,
      AWS_CREDENTIAL_EXPIRATION: expiration,
    } = process.env;
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}), ...(expiration ? { expiration: new Date(expiration) } : {}) };
  };
  return () => {
    if (current === undefined || (current.expiration !== undefined && current.expiration.getTime() - Date.now() < 300_000)) current = read();
    return Promise.resolve(current);
  };
}

const bytesOf = (x: SourceData): string | Buffer =>
  typeof x === 'string' ? x : ArrayBuffer.isView(x) ? Buffer.from(x.buffer, x.byteOffset, x.byteLength) : Buffer.from(x);

/**
 * SHA-256 and HMAC-SHA-256 for the signer, hashed synchronously by `node:crypto` (the `Checksum` shape
 * `@smithy/signature-v4` takes; the SDK's own node implementation does the same, but its module brings
 * a pure-JS fallback into the bundle).
 */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

/** What an {@link AwsJsonClient} needs. */
export interface AwsJsonOptions {
  /** `http(s)://host[:port]`: a local stand-in or the regional endpoint. */
  endpoint: string;
  region: string;
  /** SigV4 signing name: `dynamodb`, `secretsmanager`. */
  service: string;
  /** `X-Amz-Target` prefix: `DynamoDB_20120810`, `secretsmanager`. */
  targetPrefix: string;
  /** `1.0` (DynamoDB) or `1.1` (Secrets Manager). */
  jsonVersion: '1.0' | '1.1';
  credentials: AwsCredentials;
  /** Connection pool; default Node's global agent of the endpoint's scheme. */
  agent?: HttpAgent | HttpsAgent;
  /** Total attempts per call (throttling, 5xx and connection failures are retried). */
  maxAttempts: number;
  connectionTimeoutMs: number;
  /** Whole request/response time of one attempt, ms. */
  requestTimeoutMs: number;
  /** The error of a non-200 answer; default {@link awsJsonError}. */
  errorFromResponse?: (status: number, body: Record<string, unknown>, $metadata: AwsJsonMetadata) => Error;
}

/** The SDK's `$metadata` of an answer. */
export interface AwsJsonMetadata {
  httpStatusCode: number;
  attempts: number;
  totalRetryDelay: number;
}

/** The answer of one call: the parsed JSON body and the SDK-shaped metadata. */
interface AwsJsonOutput {
  body: Record<string, unknown>;
  $metadata: AwsJsonMetadata;
}

/** Error of a timed-out attempt; `TimeoutError` is the SDK's name for it (store-errors.ts maps it to 503). */
function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { name: 'TimeoutError' });
}

/** The error's name in `__type` (`com.amazonaws.dynamodb.v20120810#Name`, or a bare `Name`). */
export function errorName(status: number, body: Record<string, unknown>): string {
  const type = typeof body.__type === 'string' ? body.__type : '';
  return type.slice(type.lastIndexOf('#') + 1) || (status >= 500 ? 'InternalServerError' : 'UnknownError');
}

/**
 * An SDK-shaped error of a non-200 answer: named after `__type`, with `message`, `$fault`, `$metadata`
 * and the body's other members (what the SDK's `ServiceException` carries).
 */
function awsJsonError(status: number, body: Record<string, unknown>, $metadata: AwsJsonMetadata): Error {
  const { __type: _type, message, Message, ...members } = body;
  return Object.assign(new Error(String(message ?? Message ?? `AWS answered ${status}`)), {
    ...members,
    name: errorName(status, body),
    $fault: status >= 500 ? 'server' : 'client',
    $metadata,
  });
}

/** True when the SDK's standard strategy would retry `err`: throttling, 5xx, timeouts, dropped connections. */
function isRetryable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as Parameters<typeof isTransientError>[0];
  return isThrottlingError(e) || isTransientError(e) || isServerError(e);
}

/**
 * The wait before retry number `attempt` (1-based), ms: full jitter over `base · 2^(attempt-1)`,
 * base 500 ms for throttling and 100 ms otherwise, capped at 20 s (the SDK's standard strategy).
 */
function retryDelayMs(err: unknown, attempt: number): number {
  const throttled = isThrottlingError(err as Parameters<typeof isThrottlingError>[0]);
  return backoffMs(attempt - 1, { baseMs: throttled ? THROTTLING_RETRY_DELAY_BASE : DEFAULT_RETRY_DELAY_BASE, capMs: MAXIMUM_RETRY_DELAY, jitter: 'full' });
}

/** A client of one AWS JSON-protocol service: signs with SigV4, retries what the SDK's standard strategy retries. */
export class AwsJsonClient {
  private readonly url: URL;
  private readonly signer: SignatureV4;
  private readonly send: typeof httpRequest;
  private readonly contentType: string;

  constructor(private readonly opts: AwsJsonOptions) {
    this.url = new URL(opts.endpoint);
    this.signer = new SignatureV4({ credentials: opts.credentials, region: opts.region, service: opts.service, sha256: NodeSha256 });
    this.send = this.url.protocol === 'http:' ? httpRequest : httpsRequest;
    this.contentType = `application/x-amz-json-${opts.jsonVersion}`;
  }

  /**
   * Calls `operation` (e.g. `UpdateItem`) with `input` (the API's JSON) and returns its body.
   * @throws what `errorFromResponse` makes of an error answer (the last one, after retries),
   *   `TimeoutError`, or the socket error.
   */
  async call(operation: string, input: object, abortSignal?: AbortSignal): Promise<AwsJsonOutput> {
    const body = JSON.stringify(input);
    const toError = this.opts.errorFromResponse ?? awsJsonError;
    const policy: RetryPolicy = { maxAttempts: this.opts.maxAttempts, delayMs: (err, retry) => (isRetryable(err) ? retryDelayMs(err, retry + 1) : undefined) };
    return retrying(
      async (attempt, totalRetryDelay) => {
        const { status, text } = await this.attempt(operation, body, abortSignal);
        const $metadata = { httpStatusCode: status, attempts: attempt, totalRetryDelay };
        if (status === 200) return { body: JSON.parse(text) as Record<string, unknown>, $metadata };
        throw toError(status, parseErrorBody(text), $metadata);
      },
      policy,
      abortSignal === undefined ? {} : { signal: abortSignal },
    );
  }

  /** Closes the connection pool. */
  destroy(): void {
    this.opts.agent?.destroy();
  }

  private async attempt(operation: string, body: string, abortSignal?: AbortSignal): Promise<{ status: number; text: string }> {
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port: this.url.port ? Number(this.url.port) : undefined,
      path: '/',
      query: {},
      headers: {
        host: this.url.host,
        'content-type': this.contentType,
        'x-amz-target': `${this.opts.targetPrefix}.${operation}`,
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    });
    return new Promise((resolve, reject) => {
      const req = this.send(
        {
          host: this.url.hostname,
          port: this.url.port || undefined,
          method: 'POST',
          path: '/',
          headers: signed.headers,
          agent: this.opts.agent,
          signal: abortSignal,
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      const fail = (err: Error) => req.destroy(err);
      // Timed from the moment a socket is assigned, as the SDK's handler does: a call queued behind
      // `maxSockets` others has not been sent yet.
      let whole: NodeJS.Timeout | undefined;
      req.on('socket', (socket) => {
        whole = setTimeout(
          () => fail(timeoutError(`${this.opts.targetPrefix}.${operation}: no answer within ${this.opts.requestTimeoutMs} ms`)),
          this.opts.requestTimeoutMs,
        );
        if (!socket.connecting) return;
        const connect = setTimeout(
          () => fail(timeoutError(`${this.opts.service}: no connection within ${this.opts.connectionTimeoutMs} ms`)),
          this.opts.connectionTimeoutMs,
        );
        socket.once('connect', () => clearTimeout(connect));
        socket.once('close', () => clearTimeout(connect));
      });
      req.on('error', reject);
      req.on('close', () => clearTimeout(whole));
      req.end(body);
    });
  }
}

function parseErrorBody(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {}; // A proxy's HTML error page: the status says enough.
  }
}

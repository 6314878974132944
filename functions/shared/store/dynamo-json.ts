/**
 * DynamoDB's JSON protocol spoken directly: one signed `POST /` per call over the store's keep-alive
 * pool, for the calls on the request path (store/lean-document-client.ts routes them here).
 *
 * Why: measured on Node 24 against DynamoDB Local (docs/dynamodb-client.md), lib-dynamodb over the
 * SDK spends about twice the CPU per call of the same call signed by the SDK's own SigV4 signer
 * (`@smithy/signature-v4`, already in every bundle for Secrets Manager) and sent with `node:http`
 * (e.g. UpdateItem 2.0 against 1.2 ms on a loaded machine; the unsigned floor 0.5). `aws4fetch` was measured too and lost: its
 * WebCrypto HMACs cost more CPU in Node than the SDK's whole stack.
 *
 * Wire format (DynamoDB Developer Guide, "DynamoDB low-level API"): `Content-Type:
 * application/x-amz-json-1.0`, `X-Amz-Target: DynamoDB_20120810.<Operation>`, the request as JSON;
 * errors are 4xx/5xx with `{"__type": "com.amazonaws.dynamodb.v20120810#<Name>", "message": …}` plus
 * the error's own members (`Item`, `CancellationReasons`).
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { errorFromResponse, isRetryable, retryDelayMs } from './dynamo-json-errors';

/** What a {@link DynamoJsonClient} needs; see store/dynamo.ts for the defaults. */
export interface DynamoJsonOptions {
  /** `http(s)://host[:port]`: DynamoDB Local or the regional endpoint. */
  endpoint: string;
  region: string;
  /** Static, or a provider called at every signing (`fromEnv()`: Lambda's variables). */
  credentials: ConstructorParameters<typeof SignatureV4>[0]['credentials'];
  agent: HttpAgent | HttpsAgent;
  /** Total attempts per call (throttling, 5xx and connection failures are retried). */
  maxAttempts: number;
  connectionTimeoutMs: number;
  /** Whole request/response time of one attempt, ms. */
  requestTimeoutMs: number;
}

/** The answer of one call: the parsed JSON body and the SDK-shaped metadata. */
export interface DynamoJsonOutput {
  body: Record<string, unknown>;
  $metadata: { httpStatusCode: number; attempts: number; totalRetryDelay: number };
}

/** Error of a timed-out attempt; `TimeoutError` is the SDK's name for it (store-errors.ts maps it to 503). */
function timeoutError(message: string): Error {
  return Object.assign(new Error(message), { name: 'TimeoutError' });
}

/** A DynamoDB JSON-protocol client: signs with SigV4, retries what the SDK's standard strategy retries. */
export class DynamoJsonClient {
  private readonly url: URL;
  private readonly signer: SignatureV4;
  private readonly send: typeof httpRequest;

  constructor(private readonly opts: DynamoJsonOptions) {
    this.url = new URL(opts.endpoint);
    this.signer = new SignatureV4({ credentials: opts.credentials, region: opts.region, service: 'dynamodb', sha256: Sha256 });
    this.send = this.url.protocol === 'http:' ? httpRequest : httpsRequest;
  }

  /**
   * Calls `operation` (e.g. `UpdateItem`) with `input` (low-level, marshalled) and returns its body.
   * @throws the SDK's exception class for the error's name (e.g. `ConditionalCheckFailedException`,
   *   `TransactionCanceledException` with `CancellationReasons`), `TimeoutError`, or the socket error.
   */
  async call(operation: string, input: object, abortSignal?: AbortSignal): Promise<DynamoJsonOutput> {
    const body = JSON.stringify(input);
    let totalRetryDelay = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        const { status, text } = await this.attempt(operation, body, abortSignal);
        if (status === 200) return { body: JSON.parse(text) as Record<string, unknown>, $metadata: { httpStatusCode: status, attempts: attempt, totalRetryDelay } };
        throw errorFromResponse(status, text, attempt, totalRetryDelay);
      } catch (err) {
        if (attempt >= this.opts.maxAttempts || abortSignal?.aborted || !isRetryable(err)) throw err;
        const delay = retryDelayMs(err, attempt);
        totalRetryDelay += delay;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Closes the connection pool (shared with the SDK client of store/dynamo.ts). */
  destroy(): void {
    this.opts.agent.destroy();
  }

  private async attempt(operation: string, body: string, abortSignal?: AbortSignal): Promise<{ status: number; text: string }> {
    const signed = await this.signer.sign({
      method: 'POST', protocol: this.url.protocol, hostname: this.url.hostname, port: this.url.port ? Number(this.url.port) : undefined, path: '/', query: {},
      headers: { host: this.url.host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${operation}`, 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    return new Promise((resolve, reject) => {
      const req = this.send({ host: this.url.hostname, port: this.url.port || undefined, method: 'POST', path: '/', headers: signed.headers, agent: this.opts.agent, signal: abortSignal }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      const fail = (err: Error) => req.destroy(err);
      // Timed from the moment a socket is assigned, as the SDK's handler does: a call queued behind
      // `maxSockets` others has not been sent yet.
      let whole: NodeJS.Timeout | undefined;
      req.on('socket', (socket) => {
        whole = setTimeout(() => fail(timeoutError(`DynamoDB ${operation}: no answer within ${this.opts.requestTimeoutMs} ms`)), this.opts.requestTimeoutMs);
        if (!socket.connecting) return;
        const connect = setTimeout(() => fail(timeoutError(`DynamoDB: no connection within ${this.opts.connectionTimeoutMs} ms`)), this.opts.connectionTimeoutMs);
        socket.once('connect', () => clearTimeout(connect));
        socket.once('close', () => clearTimeout(connect));
      });
      req.on('error', reject);
      req.on('close', () => clearTimeout(whole));
      req.end(body);
    });
  }
}

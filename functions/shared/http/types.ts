/**
 * The contract between a Lambda edge (or the local Function URL stand-in) and the gateway core.
 * The core never sees a Lambda event or a node:http object: it takes a {@link GatewayRequest}
 * and returns a {@link GatewayResult}.
 */

/** A parsed HTTP request. Header names are lower-case. */
export interface GatewayRequest {
  method: string;
  /** Path without query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Raw query string without `?` (e.g. `days=30`); absent or empty when none. */
  query?: string;
  headers: Readonly<Record<string, string | undefined>>;
  /**
   * The address of the connection's other end (a Function URL's `requestContext.http.sourceIp`):
   * behind CloudFront that is a CloudFront server, not the client (account-api/client-address.ts).
   * Absent when the host does not say.
   */
  sourceIp?: string;
  /** Raw body as received (already base64-decoded if the event said so). */
  body: string;
  /** Aborted when the client goes away; every upstream call listens to it. */
  signal: AbortSignal;
  /** Our request id, also sent back as `x-request-id` and used as the ledger's idempotency key. */
  requestId: string;
  /** Wall-clock ms when the edge received the request (for latency logs and budgets). */
  receivedAt: number;
  /**
   * Epoch ms by which every upstream attempt must be over: the function's own timeout less a reserve
   * for writing the answer and the ledger. Undefined when the host sets no limit.
   */
  deadline?: number;
}

/** One server-sent event, already serialised to its wire form (`data: …\n\n`). */
export type SseFrame = string;

/** A buffered JSON (or plain) response. */
export interface JsonResult {
  kind: 'json';
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** Runs after the response has been handed to the client (billing settle). Never throws. */
  after?: () => Promise<void>;
}

/**
 * A streamed response: `text/event-stream` by default, or whatever `content-type` its headers set
 * (a held buffered JSON answer, app/chat-answer.ts). Status and headers are committed only when the
 * edge starts writing; `frames` yields wire-ready pieces as they are produced, and ends the body
 * itself (SSE: with `data: [DONE]` or an error event). `after` runs once the last byte has been
 * written, or the client has gone away.
 */
export interface StreamResult {
  kind: 'stream';
  status: number;
  headers: Record<string, string>;
  frames: AsyncIterable<SseFrame>;
  after?: () => Promise<void>;
}

export type GatewayResult = JsonResult | StreamResult;

/** A core route: from a request to a result. Errors are thrown as `GatewayError`. */
export type GatewayHandler = (req: GatewayRequest) => Promise<GatewayResult>;

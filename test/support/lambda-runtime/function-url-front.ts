import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildFunctionUrlEvent,
  findPreludeDelimiter,
  functionUrlIdentity,
  HTTP_INTEGRATION_CONTENT_TYPE,
  MAX_PRELUDE_BYTES,
  MAX_REQUEST_PAYLOAD_BYTES,
  parsePrelude,
  readRequestBody,
  toFunctionUrlResponse,
} from '../../../local/function-url';
import type { LambdaRuntime } from './runtime-api';

/**
 * The Function URL service in front of {@link LambdaRuntime}s, on loopback: an HTTP request becomes a
 * payload-2.0 event (local/function-url/event.ts), the runtime's answer becomes the HTTP response. A
 * BUFFERED answer is the handler's return value; a RESPONSE_STREAM answer is read from the Runtime API
 * stream: the JSON prelude up to 8 NUL bytes gives status and headers, the rest is relayed chunk by
 * chunk as it arrives. A function error before the first body byte is the service's 502
 * `{"Message":"Internal Server Error"}`; after it, the connection is cut.
 */

/** One function behind the front. */
export interface FrontRoute {
  match(path: string): boolean;
  runtime: LambdaRuntime;
  functionName: string;
  /** Give each invocation a sampled X-Ray trace header, as Lambda does with active tracing. */
  traced?: boolean;
}

/** A sampled X-Ray trace header: `Root=1-<epoch s, 8 hex>-<24 hex>;Parent=<16 hex>;Sampled=1` (X-Ray docs, "Tracing header"). */
export function newTraceHeader(): string {
  const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
  return `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${hex(12)};Parent=${hex(8)};Sampled=1`;
}

const INTERNAL_ERROR = JSON.stringify({ Message: 'Internal Server Error' });

/** Starts the front on a free loopback port; `url` ends with `/`. */
export async function startFunctionUrlFront(routes: readonly FrontRoute[]): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    handle(routes, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(INTERNAL_ERROR);
      else res.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function handle(routes: readonly FrontRoute[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const route = routes.find((r) => r.match(path));
  if (route === undefined) return void res.writeHead(404).end();
  const body = await readRequestBody(req, MAX_REQUEST_PAYLOAD_BYTES);
  if (body === undefined) return void res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ Message: 'Request Entity Too Large' }));
  const event = buildFunctionUrlEvent(req, body, functionUrlIdentity(route.functionName, 'us-east-1'), randomUUID(), Date.now());
  const outcome = await route.runtime.invoke(event, route.traced === true ? newTraceHeader() : undefined);

  if (outcome.kind === 'error') return void res.writeHead(502, { 'content-type': 'application/json' }).end(INTERNAL_ERROR);
  if (outcome.kind === 'buffered') {
    const converted = toFunctionUrlResponse(JSON.parse(outcome.payload.toString('utf8')));
    if (!converted.ok) return void res.writeHead(502, { 'content-type': 'application/json' }).end(INTERNAL_ERROR);
    res.writeHead(converted.response.statusCode, converted.response.headers);
    return void res.end(converted.response.body);
  }

  // RESPONSE_STREAM: prelude, delimiter, then the body as it comes.
  const integration = outcome.contentType.startsWith(HTTP_INTEGRATION_CONTENT_TYPE);
  let head = Buffer.alloc(0);
  let started = !integration;
  if (started) res.writeHead(200, { 'content-type': outcome.contentType });
  for await (const chunk of outcome.body as AsyncIterable<Buffer>) {
    if (started) {
      res.write(chunk);
      continue;
    }
    head = Buffer.concat([head, chunk]);
    const at = findPreludeDelimiter(head);
    if (at < 0) {
      if (head.length > MAX_PRELUDE_BYTES) throw new Error('prelude too large');
      continue;
    }
    const prelude = parsePrelude(head.subarray(0, at));
    if (prelude === undefined) throw new Error('bad prelude');
    res.writeHead(prelude.statusCode, prelude.headers);
    started = true;
    const rest = head.subarray(at + 8);
    if (rest.length > 0) res.write(rest);
  }
  const trailers = await outcome.trailers;
  if (trailers['lambda-runtime-function-error-type'] !== undefined) {
    if (!res.headersSent) return void res.writeHead(502, { 'content-type': 'application/json' }).end(INTERNAL_ERROR);
    return void res.destroy();
  }
  if (!started) return void res.writeHead(502, { 'content-type': 'application/json' }).end(INTERNAL_ERROR);
  res.end();
}

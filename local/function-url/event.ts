import { createHash } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { LambdaFunctionURLEvent } from 'aws-lambda';

/**
 * The Function URL service's translations, which the runtime test (test/lib/lambda-runtime.test.ts)
 * cannot see: HTTP request → payload-2.0 event, with the 6 MB limit; a BUFFERED return value, or a
 * streamed http-integration prelude, → HTTP response.
 */

/**
 * Largest invocation payload (the serialised event), bytes: 6 MiB. Over it a Function URL answers 413
 * with Lambda's `RequestEntityTooLargeException` text and the function never runs (Lambda Developer
 * Guide "Lambda quotas": invocation payload 6 MB, synchronous).
 */
export const MAX_REQUEST_PAYLOAD_BYTES = 6_291_456;

/**
 * Largest BUFFERED response payload, bytes: the runtime API refuses more ("Exceeded maximum allowed
 * payload size (6291556 bytes)"), the invocation fails and the Function URL answers 502.
 */
const MAX_BUFFERED_RESPONSE_BYTES = 6_291_556;

/** Cap on a streamed prelude before its delimiter, bytes (a guard, not an AWS number): past it, 502. */
export const MAX_PRELUDE_BYTES = 64 * 1024;

/** The url-id (32 lower-case alphanumerics, stable per function name) and domain of a Function URL. */
export function functionUrlIdentity(functionName: string, region: string): { urlId: string; domainName: string } {
  const urlId = createHash('sha256').update(functionName).digest('hex').slice(0, 32);
  return { urlId, domainName: `${urlId}.lambda-url.${region}.on.aws` };
}

const TEXT_MEDIA_TYPES = /^(text\/.*|application\/(json|xml|javascript))$/;

/**
 * The payload-2.0 event for `req` with its complete `body` (Lambda Developer Guide "Invoking Lambda
 * function URLs", request payload): header names lower-case, repeated ones joined with `,`; `cookies`
 * beside `headers.cookie` (as Function URLs send both); decoded `queryStringParameters`, absent without
 * a query; the body as text only for `text/*`, JSON, XML, JavaScript, else base64; the origin headers
 * the service adds (`x-forwarded-for/-proto/-port`) with this server's scheme and port.
 */
export function buildFunctionUrlEvent(
  req: IncomingMessage,
  body: Buffer,
  url: { urlId: string; domainName: string },
  requestId: string,
  receivedAt: number,
): LambdaFunctionURLEvent {
  const [rawPath = '/', rawQueryString = ''] = (req.url ?? '/').split(/\?(.*)/s);
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? '').toLowerCase();
    if (name !== '__proto__') headers[name] = headers[name] === undefined ? (req.rawHeaders[i + 1] ?? '') : `${headers[name]},${req.rawHeaders[i + 1] ?? ''}`;
  }
  headers['x-forwarded-for'] = headers['x-forwarded-for'] === undefined ? sourceIp : `${headers['x-forwarded-for']}, ${sourceIp}`;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  const cookies = (headers['cookie'] ?? '')
    .split(';')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  const event: LambdaFunctionURLEvent = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: url.urlId,
      domainName: url.domainName,
      domainPrefix: url.urlId,
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers['user-agent'] ?? '' },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: requestTime(receivedAt),
      timeEpoch: receivedAt,
    },
    isBase64Encoded: false,
  };
  if (cookies.length > 0) event.cookies = cookies;
  if (rawQueryString !== '') {
    const query: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(rawQueryString)) if (k !== '__proto__') query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
    event.queryStringParameters = query;
  }
  if (body.length > 0) {
    const text = TEXT_MEDIA_TYPES.test((headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '');
    event.body = body.toString(text ? 'utf8' : 'base64');
    event.isBase64Encoded = !text;
  }
  return event;
}

/** `requestContext.time`: `dd/MMM/yyyy:HH:mm:ss +0000` (UTC), e.g. `12/Mar/2020:19:03:58 +0000`. */
function requestTime(epochMs: number): string {
  const [, day, month, year, time] = new Date(epochMs).toUTCString().split(' ');
  return `${day}/${month}/${year}:${time} +0000`;
}

/** True when the serialised event is over {@link MAX_REQUEST_PAYLOAD_BYTES} (serialised only when it could be). */
export function eventExceedsPayloadLimit(event: LambdaFunctionURLEvent): boolean {
  const chars = event.body?.length ?? 0;
  if ((event.isBase64Encoded ? chars : chars * 6) + 128 * 1024 <= MAX_REQUEST_PAYLOAD_BYTES) return false;
  return Buffer.byteLength(JSON.stringify(event)) > MAX_REQUEST_PAYLOAD_BYTES;
}

/**
 * Reads the whole request body: the bytes, or `undefined` past `maxBytes` (the rest is drained, so the
 * 413 reaches a client that reads only after its upload). Rejects when the client aborts the upload.
 */
export function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else if (size > maxBytes + 64 * 1024 * 1024) req.destroy();
    });
    req.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks, size)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('client aborted the request body'));
    });
  });
}

/** Status and headers for the client; `set-cookie` from `cookies`, one header each. */
function headersOf(source: object, lowerCase: boolean): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const raw: unknown = Reflect.get(source, 'headers');
  if (typeof raw === 'object' && raw !== null) {
    for (const [name, value] of Object.entries(raw)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') headers[lowerCase ? name.toLowerCase() : name] = String(value);
    }
  }
  const cookies: unknown = Reflect.get(source, 'cookies');
  if (Array.isArray(cookies) && cookies.length > 0) headers['set-cookie'] = cookies.filter((c): c is string => typeof c === 'string');
  return headers;
}

const isStatus = (s: unknown): s is number => typeof s === 'number' && Number.isInteger(s) && s >= 100 && s <= 599;

/**
 * A BUFFERED function's return value as the Function URL sends it (Developer Guide, "Response payload
 * format"): an object with `statusCode` gives status, `headers`, `cookies` and `body` (base64-decoded
 * when `isBase64Encoded`); anything else is 200 `application/json` with the JSON of the value. Not ok
 * (→ 502): a payload over 6 MB, a bad status, a body that is not a string.
 */
export function toFunctionUrlResponse(
  result: unknown,
): { ok: true; response: { statusCode: number; headers: OutgoingHttpHeaders; body: Buffer } } | { ok: false; reason: string } {
  const structured = typeof result === 'object' && result !== null && 'statusCode' in result;
  const { statusCode, body = '', isBase64Encoded } = (structured ? result : {}) as { statusCode?: unknown; body?: unknown; isBase64Encoded?: unknown };
  // The whole return value is the payload; serialised here only when it could be near the limit (JSON escaping grows text ≤ 6×).
  const json = structured ? undefined : (JSON.stringify(result ?? null) ?? 'null');
  const payload =
    json !== undefined
      ? Buffer.byteLength(json)
      : typeof body === 'string' && body.length * 6 > MAX_BUFFERED_RESPONSE_BYTES - 256 * 1024
        ? Buffer.byteLength(JSON.stringify(result))
        : 0;
  if (payload > MAX_BUFFERED_RESPONSE_BYTES)
    return { ok: false, reason: `Exceeded maximum allowed payload size (${MAX_BUFFERED_RESPONSE_BYTES} bytes): ${payload} bytes` };
  if (json !== undefined) return { ok: true, response: { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(json) } };
  if (!isStatus(statusCode)) return { ok: false, reason: `statusCode ${String(statusCode)} is not an HTTP status` };
  if (typeof body !== 'string' && body !== null) return { ok: false, reason: 'body must be a string' };
  return {
    ok: true,
    response: { statusCode, headers: headersOf(result as object, true), body: Buffer.from(body ?? '', isBase64Encoded === true ? 'base64' : 'utf8') },
  };
}

/** Index of the 8-NUL prelude delimiter in `buffer`, or -1 (the http-integration-response format). */
export function findPreludeDelimiter(buffer: Buffer): number {
  return buffer.indexOf(Buffer.alloc(8));
}

/**
 * The prelude `{"statusCode", "headers", "cookies"}` before the delimiter, as the service reads it
 * (missing status = 200), or undefined when it is not a JSON object with a valid status (→ 502).
 */
export function parsePrelude(bytes: Buffer): { statusCode: number; headers: OutgoingHttpHeaders } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const statusCode: unknown = Reflect.get(parsed, 'statusCode') ?? 200;
  return isStatus(statusCode) ? { statusCode, headers: headersOf(parsed, false) } : undefined;
}

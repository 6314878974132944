import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { MAX_REQUEST_PAYLOAD_BYTES } from './limits.js';

/**
 * The request event a Function URL sends its function: API Gateway payload format 2.0 (Lambda
 * Developer Guide "Invoking Lambda function URLs", request payload table). Fidelity notes:
 * - `routeKey`, `requestContext.routeKey`, `requestContext.stage` are the placeholder `$default`;
 *   `accountId` is `"anonymous"` for auth type NONE (Powertools' recorded Function URL event).
 * - header names lower-case; a repeated header's values joined with `,` (doc example
 *   `"header2": "value1,value2"`).
 * - `cookies` lists the request cookies AND `headers.cookie` keeps them: Function URLs send both
 *   (aws-lambda-rust-runtime PR #586; hattipjs/hattip PR #159, observed on a live Function URL).
 * - `queryStringParameters`: decoded, repeated keys joined with `,`; absent (not `{}`) without a query.
 * - `body` absent when empty. Sent as text only for `text/*`, `application/json`, `application/xml`,
 *   `application/javascript`; anything else, including no content type and form-urlencoded, is
 *   base64 with `isBase64Encoded: true` (split verified against AWS for payload 2.0 in
 *   ministackorg/ministack PR #766; the docs only say "if the content type is binary").
 * - `x-forwarded-for/-proto/-port` and `x-amzn-trace-id` are added like the service does, with this
 *   server's real scheme (`http`) and port.
 */

/** Per-function URL values ("the URL"), computed once per route. */
export interface FunctionUrlIdentity {
  /** 32 lower-case alphanumerics, like a real url-id; derived from the function name (stable). */
  urlId: string;
  /** `<url-id>.lambda-url.<region>.on.aws`. */
  domainName: string;
}

/** The url-id and domain name a Function URL for `functionName` would have. */
export function functionUrlIdentity(functionName: string, region: string): FunctionUrlIdentity {
  const urlId = createHash('sha256').update(functionName).digest('hex').slice(0, 32);
  return { urlId, domainName: `${urlId}.lambda-url.${region}.on.aws` };
}

const TEXT_MEDIA_TYPES = new Set(['application/json', 'application/xml', 'application/javascript']);

/** Whether a request body with this `content-type` is passed as text (else base64). */
export function isTextContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType.startsWith('text/') || TEXT_MEDIA_TYPES.has(mediaType);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** `requestContext.time`: `dd/MMM/yyyy:HH:mm:ss +0000` in UTC, e.g. `12/Mar/2020:19:03:58 +0000`. */
export function formatRequestTime(epochMs: number): string {
  const d = new Date(epochMs);
  const date = `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()] ?? ''}/${d.getUTCFullYear()}`;
  return `${date}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}

/** Builds the v2.0 event for `req`, whose complete body is `body`. `receivedAt` is epoch ms. */
export function buildFunctionUrlEvent(
  req: IncomingMessage,
  body: Buffer,
  url: FunctionUrlIdentity,
  requestId: string,
  receivedAt: number,
): LambdaFunctionURLEvent {
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const rawPath = queryAt < 0 ? target : target.slice(0, queryAt);
  const rawQueryString = queryAt < 0 ? '' : target.slice(queryAt + 1);
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');

  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    const value = raw[i + 1] ?? '';
    if (name === '__proto__') continue;
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous},${value}`;
    if (name === 'cookie') for (const part of value.split(';')) if (part.trim() !== '') cookies.push(part.trim());
  }
  const forwardedFor = headers['x-forwarded-for'];
  headers['x-forwarded-for'] = forwardedFor === undefined ? sourceIp : `${forwardedFor}, ${sourceIp}`;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  headers['x-amzn-trace-id'] ??= traceId(receivedAt);

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
      http: {
        method: req.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: formatRequestTime(receivedAt),
      timeEpoch: receivedAt,
    },
    isBase64Encoded: false,
  };
  if (cookies.length > 0) event.cookies = cookies;
  if (rawQueryString !== '') event.queryStringParameters = parseQuery(rawQueryString);
  if (body.length > 0) {
    const text = isTextContentType(headers['content-type']);
    event.body = body.toString(text ? 'utf8' : 'base64');
    event.isBase64Encoded = !text;
  }
  return event;
}

function parseQuery(rawQueryString: string): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(rawQueryString)) {
    if (key === '__proto__') continue;
    const previous = parameters[key];
    parameters[key] = previous === undefined ? value : `${previous},${value}`;
  }
  return parameters;
}

function traceId(epochMs: number): string {
  const seconds = Math.floor(epochMs / 1000).toString(16).padStart(8, '0');
  return `Root=1-${seconds}-${randomBytes(12).toString('hex')}`;
}

/**
 * True when the serialised event would exceed {@link MAX_REQUEST_PAYLOAD_BYTES}. Serialises only
 * when a cheap upper bound (escaping can grow text x6; headers are capped by Node at 16 KiB)
 * cannot rule it out, so ordinary requests pay nothing.
 */
export function eventExceedsPayloadLimit(event: LambdaFunctionURLEvent): boolean {
  const bodyChars = event.body?.length ?? 0;
  const upperBound = (event.isBase64Encoded ? bodyChars : bodyChars * 6) + 128 * 1024;
  if (upperBound <= MAX_REQUEST_PAYLOAD_BYTES) return false;
  return Buffer.byteLength(JSON.stringify(event)) > MAX_REQUEST_PAYLOAD_BYTES;
}

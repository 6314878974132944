import type { OutgoingHttpHeaders } from 'node:http';
import { MAX_BUFFERED_RESPONSE_BYTES } from './limits.js';

/**
 * How a Function URL turns a BUFFERED function's return value into an HTTP response (payload
 * format 2.0 response inference; Lambda Developer Guide "Invoking Lambda function URLs",
 * "Response payload format"):
 * - an object with `statusCode`: status, `headers`, `body` (string; base64-decoded when
 *   `isBase64Encoded`), `cookies` (one `set-cookie` each);
 * - anything else (string, number, object without `statusCode`, null): 200,
 *   `content-type: application/json`, body = `JSON.stringify(result)` (a string result keeps its
 *   quotes: `"Hello, world!"`, 15 bytes, in the doc's example). `undefined` is sent as `null`.
 * A payload over {@link MAX_BUFFERED_RESPONSE_BYTES}, an unserialisable result, a non-integer status
 * or a non-string body makes the invocation fail: the caller answers 502.
 */

/** The HTTP response to send. `body` is the exact bytes. */
export interface HttpResponseParts {
  statusCode: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Either the response, or why the service would reject the function's output (-> 502). */
export type ResponseConversion = { ok: true; response: HttpResponseParts } | { ok: false; reason: string };

/** Converts a buffered handler's return value (see the module comment for the rules). */
export function toFunctionUrlResponse(result: unknown): ResponseConversion {
  if (typeof result === 'object' && result !== null && 'statusCode' in result) return structured(result);

  let payload: string | undefined;
  try {
    payload = JSON.stringify(result === undefined ? null : result);
  } catch (error) {
    return { ok: false, reason: `result is not serialisable: ${String(error)}` };
  }
  const body = Buffer.from(payload ?? 'null');
  if (body.length > MAX_BUFFERED_RESPONSE_BYTES) return tooLarge(body.length);
  return { ok: true, response: { statusCode: 200, headers: { 'content-type': 'application/json' }, body } };
}

function structured(result: object): ResponseConversion {
  const statusCode: unknown = Reflect.get(result, 'statusCode');
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) {
    return { ok: false, reason: `statusCode ${String(statusCode)} is not an HTTP status` };
  }
  const rawBody: unknown = Reflect.get(result, 'body');
  if (rawBody !== undefined && rawBody !== null && typeof rawBody !== 'string') {
    return { ok: false, reason: 'body must be a string' };
  }
  const text = rawBody ?? '';
  // The whole return value is the payload; serialise it only when the body alone could be near the
  // limit (JSON escaping grows a string at most 6x), so ordinary responses are not stringified twice.
  if (text.length * 6 > MAX_BUFFERED_RESPONSE_BYTES - 256 * 1024) {
    const payloadBytes = Buffer.byteLength(JSON.stringify(result));
    if (payloadBytes > MAX_BUFFERED_RESPONSE_BYTES) return tooLarge(payloadBytes);
  }

  const headers: OutgoingHttpHeaders = {};
  const rawHeaders: unknown = Reflect.get(result, 'headers');
  if (typeof rawHeaders === 'object' && rawHeaders !== null) {
    for (const [name, value] of Object.entries(rawHeaders)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        headers[name.toLowerCase()] = String(value);
      }
    }
  }
  const cookies: unknown = Reflect.get(result, 'cookies');
  if (Array.isArray(cookies)) {
    const values = cookies.filter((cookie): cookie is string => typeof cookie === 'string');
    const existing = headers['set-cookie'];
    if (values.length > 0) headers['set-cookie'] = existing === undefined ? values : [String(existing), ...values];
  }
  const body = Reflect.get(result, 'isBase64Encoded') === true ? Buffer.from(text, 'base64') : Buffer.from(text);
  return { ok: true, response: { statusCode, headers, body } };
}

function tooLarge(bytes: number): ResponseConversion {
  return {
    ok: false,
    reason: `Exceeded maximum allowed payload size (${MAX_BUFFERED_RESPONSE_BYTES} bytes): ${bytes} bytes`,
  };
}

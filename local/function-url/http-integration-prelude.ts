import type { OutgoingHttpHeaders } from 'node:http';
import { PRELUDE_DELIMITER_LENGTH } from './awslambda-globals.js';

/**
 * The Function URL side of `application/vnd.awslambda.http-integration-response`: a JSON prelude
 * `{"statusCode":…,"headers":{…},"cookies":[…]}` then 8 NUL bytes, then the body (format as written
 * by the runtime's `HttpResponseStream.from`, aws-lambda-nodejs-runtime-interface-client).
 */

const DELIMITER = Buffer.alloc(PRELUDE_DELIMITER_LENGTH);

/**
 * Index of the first 8-NUL delimiter in `buffer`, or -1. `searchFrom` lets a caller that appends
 * chunks rescan only the new bytes plus the 7 before them (a delimiter split across chunks).
 */
export function findPreludeDelimiter(buffer: Buffer, searchFrom = 0): number {
  return buffer.indexOf(DELIMITER, Math.max(0, searchFrom - (PRELUDE_DELIMITER_LENGTH - 1)));
}

/** Status line and headers decoded from a prelude. */
export interface ParsedPrelude {
  statusCode: number;
  /** Header names as the handler wrote them; `set-cookie` holds the cookies, one header each. */
  headers: OutgoingHttpHeaders;
}

/**
 * Decodes the prelude bytes (without the delimiter). Returns undefined when they are not a JSON
 * object or carry an invalid status: the service cannot build a response and the client gets a 502.
 * A missing `statusCode` means 200. Non-string header values are stringified; null ones dropped.
 */
export function parsePrelude(bytes: Buffer): ParsedPrelude | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;

  const statusValue: unknown = Reflect.get(parsed, 'statusCode');
  const statusCode = statusValue === undefined ? 200 : statusValue;
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) {
    return undefined;
  }

  const headers: OutgoingHttpHeaders = {};
  const rawHeaders: unknown = Reflect.get(parsed, 'headers');
  if (typeof rawHeaders === 'object' && rawHeaders !== null) {
    for (const [name, value] of Object.entries(rawHeaders)) {
      if (typeof value === 'string') headers[name] = value;
      else if (typeof value === 'number' || typeof value === 'boolean') headers[name] = String(value);
    }
  }
  const cookies: unknown = Reflect.get(parsed, 'cookies');
  if (Array.isArray(cookies) && cookies.length > 0) {
    headers['set-cookie'] = cookies.filter((cookie): cookie is string => typeof cookie === 'string');
  }
  return { statusCode, headers };
}

import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Responses the Function URL service sends by itself, instead of (or before) anything the function
 * produces. Bodies are prebuilt buffers: nothing is serialised per request.
 */

/**
 * Unhandled function error, runtime crash, timeout, or a malformed function response: 502 with this
 * JSON body. Sources: awsdocs/aws-lambda-developer-guide issue #430 (a failing Function URL returns
 * 502 "Internal Server Error"); the exact body `{"Message":"Internal Server Error"}` is what two
 * independent emulators reproduce (KensioSoftware/yulin `sim-lambda-url-error-response.ts`, and a
 * Go Lambda emulator's Function URL handler). Note the capital `M`: API Gateway's own 502 is
 * `{"message":"Internal server error"}`, a different service.
 */
const FUNCTION_ERROR_BODY = Buffer.from('{"Message":"Internal Server Error"}');

/**
 * Request payload over 6 MiB: 413 with Lambda's RequestEntityTooLargeException message. Sources:
 * a 413 "Payload Too Large" from a `lambda-url` host (ducktors/turborepo-remote-cache issue #677);
 * body text as recorded from a Function URL host in a third-party test and in the Go emulator above.
 */
const PAYLOAD_TOO_LARGE_BODY = Buffer.from(
  '{"Message":"Request must be smaller than 6291456 bytes for the InvokeFunction operation"}',
);

/**
 * Not AWS behaviour: a real Function URL hands every path to its one function. The stand-in serves
 * several functions on one port, so a path no route claims gets an OpenAI-shaped 404.
 */
const UNKNOWN_PATH_BODY = Buffer.from(
  '{"error":{"message":"Unknown path","type":"invalid_request_error","param":null,"code":null}}',
);

function send(res: ServerResponse, status: number, body: Buffer, requestId: string | undefined): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': body.length,
  };
  if (requestId !== undefined) headers['x-amzn-requestid'] = requestId;
  res.writeHead(status, headers);
  res.end(body);
}

/** 502 `{"Message":"Internal Server Error"}`: the function failed before sending any byte. */
export function sendFunctionError(res: ServerResponse, requestId: string): void {
  send(res, 502, FUNCTION_ERROR_BODY, requestId);
}

/** 413: the request payload would exceed {@link MAX_REQUEST_PAYLOAD_BYTES}; the function did not run. */
export function sendPayloadTooLarge(res: ServerResponse): void {
  send(res, 413, PAYLOAD_TOO_LARGE_BODY, undefined);
}

/** 404 OpenAI-shaped: no route (and no default route) claims the path. Stand-in only. */
export function sendUnknownPath(res: ServerResponse): void {
  send(res, 404, UNKNOWN_PATH_BODY, undefined);
}

/** A Node.js HTTP parser error: its `code` (`HPE_HEADER_OVERFLOW`, `HPE_INVALID_METHOD`, …). */
interface ClientError extends Error {
  code?: string;
}

/**
 * The server's `clientError` handler: a request Node's HTTP parser refuses never reaches a route, and
 * Node's own answer has no body. Not AWS behaviour (on AWS the Function URL service, or CloudFront in
 * front of it, parses HTTP and answers such requests with its own status and body before the function
 * runs; README "Errors"). Locally the client gets OpenAI's error shape: 431 `request_headers_too_large`
 * for headers over Node's limit, 408 for a request not finished in time, else 400 `invalid_http_request`
 * (bad framing, an invalid method or header). Written to the socket, which is then closed.
 */
export function answerClientError(err: ClientError, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request_headers_too_large', 'The request headers are larger than the gateway accepts.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not received in time.']
        : [400, 'invalid_http_request', 'The request is not valid HTTP/1.1 (framing, method or a header).'];
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

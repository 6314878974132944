/**
 * Local stand-in for AWS Lambda Function URLs, a thin adapter around the real handlers: the `awslambda`
 * global, the payload-2.0 event, BUFFERED and RESPONSE_STREAM invocation, one node:http server for
 * several functions. It keeps what the runtime test (test/lib/lambda-runtime.test.ts, the real
 * `aws-lambda-ric`) cannot see: the 6 MB payload limit, the streaming http-integration prelude, the
 * origin headers the service adds, buffered vs streaming invoke.
 *
 *   installAwslambdaGlobals();                      // before importing any handler module
 *   const chat = await import('../functions/chat-completions/handler.js');
 *   const server = createFunctionUrlServer([{ match: () => true, handler: chat.handler, invokeMode: 'RESPONSE_STREAM', functionName: 'modelmux-chat' }]);
 *   const { url, close } = await listen(server, 8787);
 */
export {
  buildFunctionUrlEvent,
  findPreludeDelimiter,
  functionUrlIdentity,
  MAX_PRELUDE_BYTES,
  MAX_REQUEST_PAYLOAD_BYTES,
  parsePrelude,
  readRequestBody,
  toFunctionUrlResponse,
} from './event';
export { HTTP_INTEGRATION_CONTENT_TYPE, installAwslambdaGlobals } from './runtime';
export { createFunctionUrlServer, listen, type FunctionUrlRoute, type InvocationRecord } from './server';

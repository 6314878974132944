/**
 * Local stand-in for AWS Lambda Function URLs: the `awslambda` global, the v2.0 event and context,
 * RESPONSE_STREAM and BUFFERED invocation, and one node:http server routing to several functions.
 *
 *   import { installAwslambdaGlobals, createFunctionUrlServer, listen } from './function-url/index.js';
 *   installAwslambdaGlobals();                      // before importing any handler module
 *   const chat = await import('../functions/chat-completions/handler.js');
 *   const server = createFunctionUrlServer([
 *     { match: (p) => p === '/v1/chat/completions', handler: chat.handler,
 *       invokeMode: 'RESPONSE_STREAM', functionName: 'modelmux-chat' },
 *   ]);
 *   const { url, close } = await listen(server, 8787);
 */
export {
  HTTP_INTEGRATION_CONTENT_TYPE,
  HttpResponseStream,
  installAwslambdaGlobals,
  isStreamingHandler,
  streamifyResponse,
  streamingHighWaterMark,
  type AwslambdaGlobal,
  type StreamifyOptions,
} from './awslambda-globals.js';
export { toFunctionUrlResponse, type HttpResponseParts, type ResponseConversion } from './buffered-response.js';
export { createContext, functionIdentity, type FunctionIdentity } from './context.js';
export { buildFunctionUrlEvent, functionUrlIdentity, isTextContentType, type FunctionUrlIdentity } from './event.js';
export { findPreludeDelimiter, parsePrelude, type ParsedPrelude } from './http-integration-prelude.js';
export type { InvocationOutcome, InvocationResult } from './invocation.js';
export * from './limits.js';
export { InvalidStreamingOperation, ResponseStream } from './response-stream.js';
export { listen, type ListeningServer } from './listen.js';
export {
  createFunctionUrlServer,
  type FunctionUrlRoute,
  type FunctionUrlServerOptions,
  type InvocationRecord,
  type InvokeMode,
} from './server.js';

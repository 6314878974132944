/**
 * The `awslambda` global that the Lambda Node.js managed runtime defines before it loads a handler
 * module (source: aws/aws-lambda-nodejs-runtime-interface-client, `src/utils/globals.ts`,
 * `src/stream/http-response-stream.ts`, `src/stream/response-stream.ts`).
 *
 * The base declaration already comes from `@types/aws-lambda` (listed in tsconfig `types`):
 * `awslambda.streamifyResponse(handler)`, `awslambda.HttpResponseStream.from(stream, metadata)` and
 * the stream class with `setContentType`. Redeclaring those here would clash, so this file only
 * AUGMENTS that namespace with what the runtime accepts and the package leaves out:
 * - the `options` argument of `streamifyResponse` (`highWaterMark`, bytes);
 * - {@link awslambda.HttpResponseMetadata}, the exact shape of the prelude that the Function URL
 *   service reads back into status, headers and `set-cookie`.
 *
 * Runtime facts a streaming handler must know (locally mirrored by `local/function-url/`):
 * - `HttpResponseStream.from` writes its prelude only on the first `write()` call. Ending the stream
 *   with `end(chunk)` and no prior `write()` skips the prelude: the client gets a 502; `end()` alone
 *   gives a 200 without the metadata (runtime-interface-client issue #97). Always `write()` first.
 * - The handler must call `end()`: a handler that resolves with the stream still open keeps the
 *   connection open until the function times out (runtime-interface-client issue #95).
 * - There is NO signal on the response stream when the Function URL client disconnects: no
 *   'close'/'error' event, writes keep succeeding, the invocation runs (and is billed) to its end.
 *   Sources: runtime-interface-client issue #145 (open; confirmed by a second tester), opennextjs-aws
 *   PR #952, and the Lambda Developer Guide page "Response streaming for Lambda functions", which
 *   says a disconnecting client does not interrupt or stop the streamed response and the full
 *   function duration is billed.
 */
import type { StreamifyHandler } from 'aws-lambda';

declare global {
  namespace awslambda {
    /**
     * The prelude `HttpResponseStream.from` serialises as JSON, followed by 8 NUL bytes, at the head
     * of the stream (content type `application/vnd.awslambda.http-integration-response`). The
     * Function URL service turns it into the HTTP status line, headers and one `set-cookie` header
     * per cookie. Header names are sent as given; values are strings.
     */
    interface HttpResponseMetadata {
      /** HTTP status; the service uses 200 when absent. */
      statusCode?: number;
      headers?: Record<string, string>;
      /** Full `set-cookie` values, e.g. `"id=1; Max-Age=60; HttpOnly"`. */
      cookies?: string[];
    }

    /** Second argument of `streamifyResponse` (runtime-interface-client `StreamifyResponseOptions`). */
    interface StreamifyResponseOptions {
      /** `highWaterMark` of the response stream, bytes (Node's default when absent: 16 KiB). */
      highWaterMark?: number;
    }

    /**
     * Marks `handler` as a response-streaming handler; the runtime then calls
     * `handler(event, responseStream, context)` and the returned promise must settle after
     * `responseStream.end()`. Returns the same function.
     */
    function streamifyResponse<TEvent = unknown, TResult = void>(
      handler: StreamifyHandler<TEvent, TResult>,
      options: StreamifyResponseOptions,
    ): StreamifyHandler<TEvent, TResult>;
  }
}

export {};

/**
 * The numbers the Lambda / Function URL services enforce, in one place, each with its source.
 */

/**
 * Largest invocation request payload (the serialised v2.0 event, not just the HTTP body), bytes:
 * 6 MiB. Over it a Function URL answers 413 and the function never runs. Sources: Lambda Developer
 * Guide "Lambda quotas" (invocation payload 6 MB, synchronous); the error text is Lambda's
 * `RequestEntityTooLargeException` ("Request must be smaller than 6291456 bytes for the
 * InvokeFunction operation").
 */
export const MAX_REQUEST_PAYLOAD_BYTES = 6_291_456;

/**
 * Largest BUFFERED response payload (the handler's serialised return value), bytes. The runtime API
 * rejects a larger response ("Exceeded maximum allowed payload size (6291556 bytes).", errorType
 * `RequestEntityTooLarge`, quoted from a runtime log in anomalyco/console issue #63), the invocation
 * fails and the Function URL answers 502. Documented as "6 MB" (config-rs-invoke-furls, BUFFERED).
 */
export const MAX_BUFFERED_RESPONSE_BYTES = 6_291_556;

/**
 * Largest RESPONSE_STREAM response, bytes: "200 MB" (config-rs-invoke-furls; older CDK docs say
 * 20 MB). Read as MiB here. Past it the stand-in cuts the connection.
 */
export const MAX_STREAMED_RESPONSE_BYTES = 200 * 1024 * 1024;

/** The stand-in's default function timeout, ms (Lambda's own default is 3 s). */
export const DEFAULT_TIMEOUT_MS = 300_000;

/** Lambda's maximum function timeout, ms: 900 s (Developer Guide "Lambda quotas"). */
export const MAX_TIMEOUT_MS = 900_000;

/** Lambda's default function memory, MB (reported as `context.memoryLimitInMB`). */
export const DEFAULT_MEMORY_MB = 128;

/**
 * Cap on the JSON prelude of a streamed response before the 8-NUL delimiter, bytes. Not a documented
 * AWS number: a guard so a handler that sets the integration content type but never writes the
 * delimiter cannot make the stand-in buffer its whole body. Exceeding it is a 502.
 */
export const MAX_PRELUDE_BYTES = 64 * 1024;

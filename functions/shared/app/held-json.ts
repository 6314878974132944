import type { JsonResult, StreamResult } from '../http/types';
import { asGatewayError, toErrorBody, type GatewayError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';

/**
 * A buffered answer that is not ready when its status must go out. A buffered response sends nothing
 * until it is whole, and CloudFront gives up on an origin silent for its origin read timeout (60 s,
 * lib/constructs/api-distribution.ts), answering the client with its own 504 while the gateway would
 * go on and bill an answer nobody receives. So at BUFFERED_CHAT_BUDGET_MS the 200 is committed and
 * JSON whitespace — a line feed every {@link HOLD_BEAT_MS} — keeps the connection alive until the
 * answer is written after it. Leading whitespace is valid JSON (RFC 8259 §2), so every JSON parser,
 * the openai SDK's included, reads the body as usual; DeepSeek's own API holds busy buffered requests
 * the same way (providers.md §4.5). CloudFront's read timeout is also the longest wait between two
 * packets, so the beats reset it.
 *
 * Fallback goes on behind the beats (nothing of the answer has been sent). If every target fails
 * after the commit, the status is already 200: the body is then OpenAI's error object
 * `{"error":{…}}` instead of a completion — rare (the answer took longer than the budget AND every
 * target failed) and documented in the README.
 */

/** A JSON-whitespace beat is written this often while the held answer is produced (ms). */
export const HOLD_BEAT_MS = 10_000;

/** What a held answer sends while it waits: a line feed, insignificant whitespace before the JSON. */
export const HOLD_BEAT = '\n';

/** Resolves true when `p` settles (either way) within `ms`; the caller then awaits `p` itself. */
export function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), Math.max(0, ms));
    const done = (): void => {
      clearTimeout(t);
      resolve(true);
    };
    p.then(done, done);
  });
}

/**
 * The held response: 200 `application/json` now, beats while `answer` is produced, then its body (or
 * OpenAI's error body if it failed). `after` runs the answer's own `after` (the settle), so an answer
 * produced for a client that has gone is still billed, as for any buffered answer.
 * @param answer the buffered result being produced (rejects with the routing's error).
 * @param requestId for the log line of a failure after the commit.
 * @param errorBody the error body in the client's API (OpenAI's by default).
 */
export function heldJson(answer: Promise<JsonResult>, signal: AbortSignal, requestId: string, errorBody: (err: GatewayError) => unknown = toErrorBody): StreamResult {
  // Handled from the start: the frames may never run (a client gone before the first byte), and a
  // rejection nobody listens to would end the process.
  answer.catch(() => undefined);
  async function* frames(): AsyncGenerator<string> {
    let result: JsonResult | undefined;
    let failure: unknown;
    const done = answer.then(
      (r) => void (result = r),
      (e: unknown) => void (failure = e),
    );
    yield HOLD_BEAT;
    while (!(await settledWithin(done, HOLD_BEAT_MS))) yield HOLD_BEAT;
    if (result !== undefined) {
      yield JSON.stringify(result.body);
      return;
    }
    if (signal.aborted) return;
    const error = asGatewayError(failure);
    logger.warn('buffered answer failed after its 200 was committed', { requestId, status: error.status, code: error.code });
    yield JSON.stringify(errorBody(error));
  }
  return {
    kind: 'stream',
    status: 200,
    headers: { 'content-type': 'application/json' },
    frames: frames(),
    after: async () => {
      const result = await answer.catch(() => undefined);
      await result?.after?.();
    },
  };
}

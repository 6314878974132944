import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { createEventGzip } from './response-encoding';

/**
 * Writes a streamed result's frames to the response stream as they are produced, then ends it.
 *
 * With `gzip`, every frame goes through one gzip member flushed after each write (Z_SYNC_FLUSH,
 * response-encoding.ts): each frame — the SSE events of one upstream read (app/chat-answer.ts
 * `streamed`), a keep-alive comment, a held-JSON beat — leaves as soon as it is produced and decodes on
 * its own, so compression adds no batching and no wait for the first token.
 * The frames end themselves (an SSE stream with `[DONE]` or its error event, app/chat-answer.ts
 * `streamed`, `streamedLate`): that last frame is written and flushed, then the member is finished (final
 * block + CRC/length trailer) and only then is the response ended, so a stream that failed mid-way
 * still delivers its error event inside a complete gzip member. If the frames themselves throw, the
 * member is still finished before the error goes on to the caller.
 *
 * Backpressure: a full pipe waits for 'drain' (or for the client to be gone: one shared promise, so
 * no listener piles up per wait). A client gone (`signal`) stops the writing; the gzip is dropped.
 * @param out the Function URL response stream (`HttpResponseStream.from`): its first write carries the prelude.
 * @param gone resolves when `signal` aborts.
 */
export async function writeFrames(
  out: Writable,
  frames: AsyncIterable<string>,
  opts: { gzip: boolean; signal: AbortSignal; gone: Promise<void> },
): Promise<void> {
  const { signal, gone } = opts;
  const gzip = opts.gzip ? createEventGzip() : undefined;
  if (gzip !== undefined) gzip.pipe(out, { end: false });
  const sink: Writable = gzip ?? out;
  try {
    for await (const frame of frames) {
      if (signal.aborted) break;
      if (!sink.write(frame)) await Promise.race([once(sink, 'drain').catch(() => undefined), gone]);
    }
  } finally {
    if (gzip !== undefined) await finishGzip(gzip, out, signal, gone);
    if (!out.destroyed) out.end();
  }
}

/** Ends the member and waits until its last bytes (trailer included) are handed to `out`; drops it if the client is gone. */
async function finishGzip(gzip: ReturnType<typeof createEventGzip>, out: Writable, signal: AbortSignal, gone: Promise<void>): Promise<void> {
  if (signal.aborted || out.destroyed) {
    gzip.unpipe(out);
    gzip.destroy();
    return;
  }
  const ended = once(gzip, 'end').catch(() => undefined);
  gzip.end();
  await Promise.race([ended, gone]);
  if (signal.aborted) gzip.destroy();
}

/**
 * One streamed chat request, timed at the client: when the headers, the first body byte, the first
 * token (first non-empty `delta.content`) and every later content event arrived, and how many
 * content events came in the same socket read (a proxy that batches chunks shows up there).
 */
import type { Pool } from 'undici';
import { pick } from './json-pick';
import type { RequestSpec } from './load';

/** Client-side timings of one stream, ms since the request was sent. */
export interface StreamTiming {
  headersMs: number;
  firstByteMs: number;
  /** First event with a non-empty `choices[0].delta.content`. */
  firstTokenMs: number;
  totalMs: number;
  /** Arrival time of every content event, ms (events in the same read share a time). */
  contentArrivalsMs: number[];
  /** Body reads (chunks the socket delivered). */
  reads: number;
  /** Content events that arrived in a read together with another one (batched chunks). */
  batchedChunks: number;
  /** The stream ended with `data: [DONE]`. */
  done: boolean;
}

/** Content events in one parsed SSE block list; marks `[DONE]`. */
function scanEvents(blocks: string[]): { content: number; done: boolean } {
  let content = 0;
  let done = false;
  for (const block of blocks) {
    for (const line of block.split(/\r?\n/)) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      const parsed: unknown = JSON.parse(data);
      if (hasContent(parsed)) content++;
    }
  }
  return { content, done };
}

function hasContent(chunk: unknown): boolean {
  const text = pick(chunk, 'choices', 0, 'delta', 'content');
  return typeof text === 'string' && text.length > 0;
}

/**
 * Sends `spec` (a `stream: true` chat request) and reads the SSE body to the end.
 * @throws Error on a non-200 status or a stream without a first token.
 */
export async function streamOnce(pool: Pool, spec: RequestSpec): Promise<StreamTiming> {
  const t0 = performance.now();
  const res = await pool.request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  const headersMs = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`stream: status ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  const decoder = new TextDecoder();
  let pending = '';
  let firstByteMs = Number.NaN;
  let firstTokenMs = Number.NaN;
  let reads = 0;
  let batchedChunks = 0;
  let done = false;
  const contentArrivalsMs: number[] = [];
  for await (const chunk of res.body) {
    const at = performance.now() - t0;
    reads++;
    if (Number.isNaN(firstByteMs)) firstByteMs = at;
    pending += decoder.decode(chunk as Uint8Array, { stream: true });
    const blocks = pending.split(/\r?\n\r?\n/);
    pending = blocks.pop() ?? '';
    const seen = scanEvents(blocks);
    if (seen.done) done = true;
    if (seen.content > 1) batchedChunks += seen.content;
    for (let i = 0; i < seen.content; i++) contentArrivalsMs.push(at);
    if (seen.content > 0 && Number.isNaN(firstTokenMs)) firstTokenMs = at;
  }
  if (Number.isNaN(firstTokenMs)) throw new Error('stream: no content event');
  return { headersMs, firstByteMs, firstTokenMs, totalMs: performance.now() - t0, contentArrivalsMs, reads, batchedChunks, done };
}

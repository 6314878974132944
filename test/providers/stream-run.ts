import type { ChunkParts } from '../../functions/shared/openai/chat-response';
import type { StreamTransform } from '../../functions/shared/providers/types';
import { decodeSse } from '../../functions/shared/sse/decode';

/** Shared by every adapter's stream tests: upstream bytes through the real SSE decoder and a transform. */

/** Feeds bytes in pieces of `size`, so lines, CRLF pairs and multi-byte UTF-8 characters are split. */
async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Every part a transform emitted, and what it threw (undefined for a clean end). */
export interface StreamRun {
  parts: ChunkParts[];
  error: unknown;
}

/**
 * Runs `bytes` through decodeSse and `transform` (push per event, then end), `size` bytes at a time,
 * as the router does. Never throws: a failure is returned with the parts emitted before it.
 */
export async function runTransform(transform: StreamTransform, bytes: Buffer, size: number): Promise<StreamRun> {
  const parts: ChunkParts[] = [];
  try {
    for await (const events of decodeSse(pieces(bytes, size))) for (const ev of events) parts.push(...transform.push(ev));
    parts.push(...transform.end());
  } catch (error) {
    return { parts, error };
  }
  return { parts, error: undefined };
}

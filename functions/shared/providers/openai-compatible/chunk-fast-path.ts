/**
 * A cheaper parse of the common stream chunk: the hot path of every OpenAI-compatible stream is one
 * `chatChunkBody.safeParse` per event (~500 per answer), and zod's walk of the loose schema was the
 * largest share of a long stream's CPU in `npm run bench` (its profile's "zod validation" row).
 *
 * {@link fastChunk} accepts only a chunk that {@link chatChunkBody} accepts unchanged — a plain object
 * whose choices carry text deltas (`role`, `content`, `refusal`, `reasoning_content` strings or null),
 * no usage, tool calls, reasoning details or MiniMax `base_resp` — and returns it as zod's output type.
 * zod's output for such a chunk is the same object shape (loose objects keep unknown keys; every field
 * is `.nullish()` with no default or transform), so the result is identical. Anything else returns
 * `undefined` and the caller parses with zod, which alone decides what is malformed.
 */
import type * as z from '../../validation/zod';
import type { chatChunkBody } from './wire';

/** zod's output type of a chunk. */
export type ChatChunk = z.infer<typeof chatChunkBody>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullish = (v: unknown): boolean => v === null || v === undefined;
const stringOrNullish = (v: unknown): boolean => typeof v === 'string' || v === null || v === undefined;
const numberOrNullish = (v: unknown): boolean => (typeof v === 'number' && Number.isFinite(v)) || v === null || v === undefined;

function plainDelta(d: unknown): boolean {
  if (nullish(d)) return true;
  if (!isObject(d)) return false;
  return (
    stringOrNullish(d.role) &&
    stringOrNullish(d.content) &&
    stringOrNullish(d.refusal) &&
    stringOrNullish(d.reasoning_content) &&
    nullish(d.reasoning_details) &&
    nullish(d.tool_calls)
  );
}

/**
 * The chunk as `chatChunkBody` would return it, when it is a plain text chunk; otherwise undefined
 * (parse it with zod).
 */
export function fastChunk(json: unknown): ChatChunk | undefined {
  if (!isObject(json)) return undefined;
  if (!nullish(json.usage) || !nullish(json.x_groq) || !nullish(json.base_resp) || !stringOrNullish(json.system_fingerprint)) return undefined;
  const choices = json.choices;
  if (!nullish(choices)) {
    if (!Array.isArray(choices)) return undefined;
    for (const c of choices) {
      if (!isObject(c) || !numberOrNullish(c.index) || !stringOrNullish(c.finish_reason) || !plainDelta(c.delta)) return undefined;
    }
  }
  return json as ChatChunk;
}

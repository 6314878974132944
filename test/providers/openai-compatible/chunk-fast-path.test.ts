import { describe, expect, it } from 'vitest';
import { fastChunk } from '../../../functions/shared/providers/openai-compatible/chunk-fast-path';
import { chatChunkBody } from '../../../functions/shared/providers/openai-compatible/wire';

const text = (content: unknown, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  system_fingerprint: 'fp_1',
  choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
  ...extra,
});

/** Chunks zod accepts that the fast path must take (and return exactly as zod does). */
const plain = [
  text('Hello'),
  text(null),
  text(''),
  { id: 'x', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  { id: 'x', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { id: 'x', choices: [] },
  { id: 'x', choices: [{ delta: { reasoning_content: 'think' } }, { index: 1, delta: null, finish_reason: 'length', logprobs: { content: [] } }] },
  { id: 'x', choices: null, usage: null, system_fingerprint: null, obfuscation: 'abc' },
  { id: 'x', error: { message: 'boom' } },
];

/** Chunks the fast path leaves to zod: other shapes zod accepts, and malformed ones it refuses. */
const toZod = [
  text('a', { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
  { id: 'x', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{' } }] } }] },
  { id: 'x', choices: [{ index: 0, delta: { reasoning_details: [{ text: 'r' }] } }] },
  { id: 'x', x_groq: { usage: { prompt_tokens: 1, completion_tokens: 1 } } },
  { id: 'x', base_resp: { status_code: 0, status_msg: '' } },
  text(42),
  text('a', { system_fingerprint: 7 }),
  { choices: [{ index: '0', delta: { content: 'a' } }] },
  { choices: [{ index: 0, delta: 'a' }] },
  { choices: [{ index: 0, delta: { content: 'a' }, finish_reason: 1 }] },
  { choices: {} },
  { choices: ['a'] },
  [],
  'a',
  null,
];

describe('stream chunk fast path', () => {
  it.each(plain.map((c, i) => [i, c] as const))('takes plain chunk %i and returns what zod returns', (_, chunk) => {
    const zod = chatChunkBody.safeParse(chunk);
    expect(zod.success).toBe(true);
    expect(fastChunk(chunk)).toEqual(zod.data);
  });

  it.each(toZod.map((c, i) => [i, c] as const))('leaves chunk %i to zod', (_, chunk) => {
    expect(fastChunk(chunk)).toBeUndefined();
  });
});

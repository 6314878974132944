import { describe, expect, it } from 'vitest';
import { HOLD_BEAT, heldJson } from '../../functions/shared/app/held-json';
import type { JsonResult } from '../../functions/shared/http/types';
import { UpstreamUnavailableError } from '../../functions/shared/openai/errors';

/** A buffered answer held past its budget: a 200 now, JSON whitespace, then the answer or an error object. */

async function body(frames: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const f of frames) out += f;
  return out;
}

describe('a held buffered answer', () => {
  it('commits a JSON 200 at once, beats with whitespace, then writes the answer and runs its settle', async () => {
    let settled = false;
    let resolve: (r: JsonResult) => void = () => undefined;
    const answer = new Promise<JsonResult>((r) => (resolve = r));
    const held = heldJson(answer, new AbortController().signal, 'req_1');
    expect(held).toMatchObject({ kind: 'stream', status: 200, headers: { 'content-type': 'application/json' } });
    const text = body(held.frames);
    setTimeout(() => resolve({ kind: 'json', status: 200, headers: {}, body: { object: 'chat.completion', choices: [] }, after: async () => void (settled = true) }), 20);
    const raw = await text;
    expect(raw.startsWith(HOLD_BEAT)).toBe(true);
    expect(JSON.parse(raw)).toEqual({ object: 'chat.completion', choices: [] });
    await held.after?.();
    expect(settled).toBe(true);
  });

  it('writes OpenAI\'s error object when every target failed after the commit', async () => {
    const held = heldJson(Promise.reject(new UpstreamUnavailableError(504, 'Every upstream for x timed out. Please retry.')), new AbortController().signal, 'req_2');
    expect(JSON.parse(await body(held.frames))).toMatchObject({ error: { type: 'timeout_error', code: 'upstream_timeout', message: expect.stringMatching(/timed out/) } });
    await expect(held.after?.()).resolves.toBeUndefined();
  });

  it('leaves no unhandled rejection when its frames never run (the client left before the first byte)', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const held = heldJson(Promise.reject(new Error('routing failed')), new AbortController().signal, 'req_3');
      await new Promise((r) => setTimeout(r, 20));
      await held.after?.();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

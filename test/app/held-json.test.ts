import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOLD_BEAT, HOLD_BEAT_MS, heldJson, settledWithin } from '../../functions/shared/app/chat-answer';
import type { JsonResult } from '../../functions/shared/http/types';
import { UpstreamUnavailableError } from '../../functions/shared/errors/gateway-errors';

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
    setTimeout(
      () => resolve({ kind: 'json', status: 200, headers: {}, body: { object: 'chat.completion', choices: [] }, after: async () => void (settled = true) }),
      20,
    );
    const raw = await text;
    expect(raw.startsWith(HOLD_BEAT)).toBe(true);
    expect(JSON.parse(raw)).toEqual({ object: 'chat.completion', choices: [] });
    await held.after?.();
    expect(settled).toBe(true);
  });

  it("writes OpenAI's error object when every target failed after the commit", async () => {
    const held = heldJson(
      Promise.reject(new UpstreamUnavailableError(504, 'Every upstream for x timed out. Please retry.')),
      new AbortController().signal,
      'req_2',
    );
    expect(JSON.parse(await body(held.frames))).toMatchObject({
      error: { type: 'timeout_error', code: 'upstream_timeout', message: expect.stringMatching(/timed out/) },
    });
    await expect(held.after?.()).resolves.toBeUndefined();
  });

  it('leaves no unhandled rejection when its frames never run (the client left before the first byte)', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const held = heldJson(Promise.reject(new Error('routing failed')), new AbortController().signal, 'req_3');
      // Node reports a rejection left unhandled after the microtasks that follow a macrotask have run, so
      // one turn of the event loop is past the point where an unhandledRejection event would have come.
      await new Promise((r) => setImmediate(r));
      await held.after?.();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

describe('the beats', () => {
  afterEach(() => vi.useRealTimers());

  it(`sends one at once, then one every ${HOLD_BEAT_MS} ms until the answer is ready, then the answer`, async () => {
    vi.useFakeTimers();
    let resolve: (r: JsonResult) => void = () => undefined;
    const held = heldJson(new Promise<JsonResult>((r) => (resolve = r)), new AbortController().signal, 'req_4');
    const frames = held.frames[Symbol.asyncIterator]();
    expect(await frames.next()).toEqual({ done: false, value: HOLD_BEAT });
    let next = frames.next();
    let arrived = false;
    void next.then(() => (arrived = true));
    await vi.advanceTimersByTimeAsync(HOLD_BEAT_MS - 1);
    expect(arrived).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await next).toEqual({ done: false, value: HOLD_BEAT });
    next = frames.next();
    await vi.advanceTimersByTimeAsync(HOLD_BEAT_MS / 2);
    resolve({ kind: 'json', status: 200, headers: {}, body: { ok: true } });
    // The answer goes out as soon as it is ready, not at the next beat.
    expect(await next).toEqual({ done: false, value: '{"ok":true}' });
    expect((await frames.next()).done).toBe(true);
  });

  it('writes no error object for a client that has gone (nobody would read it), but still ends', async () => {
    const controller = new AbortController();
    controller.abort();
    const held = heldJson(Promise.reject(new UpstreamUnavailableError(503, 'all down')), controller.signal, 'req_5');
    expect(await body(held.frames)).toBe(HOLD_BEAT);
  });
});

describe('settledWithin (the budget check before a commit)', () => {
  const never = new Promise<never>(() => undefined);

  it('is true when the promise settles either way in time, false when the time runs out first', async () => {
    expect(await settledWithin(Promise.resolve('x'), 50)).toBe(true);
    expect(await settledWithin(Promise.reject(new Error('x')), 50)).toBe(true);
    // Kept (not a wait: the input under test, proving wall time itself): a 10 ms timer against the 200 ms budget.
    expect(await settledWithin(new Promise((r) => setTimeout(r, 10)), 200)).toBe(true);
    expect(await settledWithin(never, 30)).toBe(false);
  });

  it('with no time left (a budget already spent) is false at once for pending work, true for work already done', async () => {
    const started = Date.now();
    expect(await settledWithin(never, -5_000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await settledWithin(Promise.resolve(), 0)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { atOnce, nextRetryDelay, retrying, TryAgain, type RetryPolicy } from '../../functions/shared/retry/retry';

/** The one retry loop: bounded tries, the policy's waits, the last error rethrown unchanged. */

const everyFailure: RetryPolicy = { maxAttempts: 3, delayMs: (_err, retry) => 10 * (retry + 1) };

describe('retrying', () => {
  it("tries again after the policy's waits, telling each try its number and the time waited", async () => {
    const seen: Array<[number, number]> = [];
    const waits: number[] = [];
    const result = await retrying(
      async (attempt, waited) => {
        seen.push([attempt, waited]);
        if (attempt < 3) throw new Error('busy');
        return 'ok';
      },
      everyFailure,
      { sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('ok');
    expect(waits).toEqual([10, 20]);
    expect(seen).toEqual([
      [1, 0],
      [2, 10],
      [3, 30],
    ]);
  });

  it('rethrows the last error once the tries are used up, and at once what the policy will not retry', async () => {
    const last = new Error('still busy');
    let calls = 0;
    await expect(
      retrying(
        async () => {
          calls++;
          throw last;
        },
        everyFailure,
        { sleep: async () => undefined },
      ),
    ).rejects.toBe(last);
    expect(calls).toBe(3);
    const fatal = new Error('fatal');
    calls = 0;
    await expect(
      retrying(
        async () => {
          calls++;
          throw fatal;
        },
        { maxAttempts: 5, delayMs: () => undefined },
      ),
    ).rejects.toBe(fatal);
    expect(calls).toBe(1);
  });

  it('stops waiting when its signal aborts, with the last error', async () => {
    const c = new AbortController();
    const err = new Error('busy');
    let calls = 0;
    const run = retrying(
      async () => {
        calls++;
        throw err;
      },
      { maxAttempts: 5, delayMs: () => 60_000 },
      { signal: c.signal },
    );
    setTimeout(() => c.abort(), 10);
    await expect(run).rejects.toBe(err);
    expect(calls).toBe(1);
  });
});

describe('atOnce', () => {
  it('tries again without a wait after TryAgain, n tries in all, and rethrows anything else at once', async () => {
    const waits: number[] = [];
    let calls = 0;
    const again = retrying(
      async () => {
        calls++;
        throw new TryAgain();
      },
      atOnce(3),
      { sleep: async (ms) => void waits.push(ms) },
    );
    await expect(again).rejects.toBeInstanceOf(TryAgain);
    expect([calls, waits]).toEqual([3, []]);
    const fatal = new Error('fatal');
    calls = 0;
    await expect(
      retrying(async () => {
        calls++;
        throw fatal;
      }, atOnce(3)),
    ).rejects.toBe(fatal);
    expect(calls).toBe(1);
  });
});

describe('nextRetryDelay', () => {
  it('gives up when the wait would not end before the time left', () => {
    expect(nextRetryDelay(everyFailure, new Error('x'), 0, 11)).toBe(10);
    expect(nextRetryDelay(everyFailure, new Error('x'), 0, 10)).toBeUndefined();
    expect(nextRetryDelay(everyFailure, new Error('x'), 2)).toBeUndefined();
  });
});

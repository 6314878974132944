import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '../../functions/shared/config/env';
import { now, setClock } from '../../functions/shared/time/clock';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * Rate limits, enforced inside the hold's conditional write: per account and per key, requests per
 * minute and concurrent requests, with OpenAI's 429 body and headers; the official SDK's retry works
 * against them. Paid accounts here run with RATE_LIMIT_RPM=20 (concurrency off); free-tier accounts
 * with the defaults (RATE_LIMIT_FREE_* unset: 20 per minute, 5 at once).
 */

let gw: RunningGateway;

beforeAll(async () => {
  process.env.RATE_LIMIT_RPM = '20';
  process.env.RATE_LIMIT_CONCURRENT = '0';
  delete process.env.RATE_LIMIT_FREE_RPM;
  delete process.env.RATE_LIMIT_FREE_CONCURRENT;
  reloadConfig();
  gw = await startGateway({ tablePrefix: `ratelimit-${process.pid}`, simulator: { chunkDelayMs: 0 } });
});

afterAll(async () => {
  setClock(undefined);
  await gw?.close();
});

/**
 * Runs the billing clock from the first millisecond of its next minute, at wall-clock speed, so every
 * request after this falls into one rate-limit window (unless a test takes a whole minute) without
 * waiting for a fresh minute.
 */
function startOfAMinute(): void {
  const minute = (Math.floor(now() / 60_000) + 1) * 60_000;
  const started = Date.now();
  setClock(() => minute + (Date.now() - started));
}

async function newClient(opts: { freeTokens: number; creditNanoUsd: number }, maxRetries = 0) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount(opts);
  const key = await createKey(account.accountId, 'test');
  return new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries });
}

const ask = (c: OpenAI, i: number) =>
  c.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: `hi ${i}` }] }).withResponse();

describe('rate limits', () => {
  it("with RATE_LIMIT_RPM=20 the 21st request in a minute is a 429 with OpenAI's body and headers", async () => {
    const client = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    startOfAMinute(); // all 21 in one window
    for (let i = 0; i < 20; i++) await ask(client, i);
    const err = (await ask(client, 20).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded', param: null });
    expect(err.message).toMatch(/Rate limit reached for your account on requests per minute \(RPM\): Limit 20/);
    const h = err.headers;
    expect(h?.get('x-ratelimit-limit-requests')).toBe('20');
    expect(h?.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(h?.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?s$|^\d+ms$/);
    const retryAfter = Number(h?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it("refuses a sixth concurrent request of a free-tier account with 429, and the SDK's own retry gets it through once a slot frees", async () => {
    const strict = await newClient({ freeTokens: 200_000, creditNanoUsd: 0 });
    gw.simulator?.setChunkDelay(300);
    try {
      const streams = await Promise.all(
        [0, 1, 2, 3, 4].map((i) =>
          strict.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 20, stream: true, messages: [{ role: 'user', content: `slow ${i}` }] }),
        ),
      );
      const refused = (await ask(strict, 5).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(refused.status).toBe(429);
      expect(refused.message).toMatch(/concurrent requests: Limit 5/);
      expect(refused.headers?.get('retry-after')).toBe('1');
      // The SDK retries a 429 after retry-after (openai-node: up to maxRetries, default 2).
      const statuses: number[] = [];
      const counting: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      };
      const retrying = new OpenAI({ baseURL: gw.baseUrl, apiKey: strict.apiKey, maxRetries: 5, fetch: counting });
      const answer = ask(retrying, 6);
      for (const s of streams) for await (const chunk of s) void chunk;
      const { data, response } = await answer;
      expect(data.choices[0]?.message.content).toBeTruthy();
      expect(response.status).toBe(200);
      // At least one 429 first, then the 200: the SDK retried on its own.
      expect(statuses[0]).toBe(429);
      expect(statuses.at(-1)).toBe(200);
    } finally {
      gw.simulator?.setChunkDelay(0);
    }
  });

  it('gives free-tier accounts the stricter defaults: 20 requests per minute', async () => {
    const free = await newClient({ freeTokens: 200_000, creditNanoUsd: 0 });
    startOfAMinute();
    for (let i = 0; i < 20; i++) await ask(free, i);
    const err = (await ask(free, 20).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(429);
    expect(err.headers?.get('x-ratelimit-limit-requests')).toBe('20');
  });
});

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { untilSettled } from '../support/ledger';

/**
 * Money under concurrency, through the whole path (the official SDK, real HTTP, DynamoDB Local, the
 * simulator): a hold reserves the most a request can cost before any upstream call, so an account
 * holding credit (or free tokens) for about 10 requests, hit by 100 at once, never goes below zero,
 * every refused request is a 402 that never reached an upstream, and the ledger sums to the debit.
 */

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `money-${process.pid}` });
});

afterAll(async () => {
  await gw?.close();
});

const sim = () => {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
};

async function newAccount(opts: { freeTokens: number; creditNanoUsd: number }) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount(opts);
  const key = await createKey(account.accountId, 'test');
  return { client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }), accountId: account.accountId };
}

/** Samples the account every 20 ms until stopped; the lowest available balances seen. */
function watchBalance(accountId: string) {
  let lowestCredit = Number.POSITIVE_INFINITY;
  let lowestFree = Number.POSITIVE_INFINITY;
  let running = true;
  const loop = (async () => {
    const { getAccount } = await import('../../functions/shared/accounts/account-store');
    while (running) {
      const a = await getAccount(accountId, { consistent: true }).catch(() => undefined);
      if (a === undefined) continue;
      lowestCredit = Math.min(lowestCredit, a?.creditNanoUsd ?? 0);
      lowestFree = Math.min(lowestFree, a?.freeTokens ?? 0);
      // Kept: the sampler's pace while the requests run (it waits for no condition; it samples until stopped).
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return { stop: async () => ((running = false), await loop, { lowestCredit, lowestFree }) };
}

/** Waits (≤ 20 s) until no hold of the account is left, then returns its ledger sums and the account. */
async function settled(accountId: string) {
  const { usageSummary } = await import('../../functions/shared/billing/ledger');
  const account = await untilSettled(accountId, { timeout: 20_000, interval: 50 });
  return { account, summary: await usageSummary(accountId) };
}

/**
 * The prompts (`<tag> request <i>`) the simulator received since `from`, sorted and without repeats: a
 * slow machine may hedge or retry an answered request, so its prompt can arrive twice, but a refused
 * request's prompt must never arrive.
 */
function promptsSeenSince(from: number, tag: string): string[] {
  const seen = sim()
    .requests.slice(from)
    .flatMap((r) => JSON.stringify(r.body).match(new RegExp(`${tag} request \\d+`, 'g')) ?? []);
  return [...new Set(seen)].sort();
}

/** The prompts of the answered requests, sorted. */
function answered(ok: { i: number }[], tag: string): string[] {
  return ok.map((r) => `${tag} request ${r.i}`).sort();
}

/**
 * 100 streams at once, each taking ~1 s (the simulator paces its chunks), so they really overlap
 * whatever the machine's speed: half buffered-style readers would finish before others start.
 */
async function hundredAtOnce(client: OpenAI, tag: string) {
  sim().setChunkDelay(60);
  try {
    return await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        try {
          const s = await client.chat.completions.create({
            model: 'gpt-4o-mini',
            max_tokens: 500,
            stream: true,
            stream_options: { include_usage: true },
            messages: [{ role: 'user', content: `${tag} request ${i}` }],
          });
          let usage: OpenAI.CompletionUsage | undefined;
          for await (const c of s) usage = c.usage ?? usage;
          return { ok: true as const, i, usage };
        } catch (e) {
          return { ok: false as const, error: e as InstanceType<typeof OpenAI.APIError> };
        }
      }),
    );
  } finally {
    sim().setChunkDelay(0);
  }
}

describe('holds under concurrency', () => {
  it('100 concurrent requests on credit for about 10: never below zero, refused ones are 402 with no upstream call, ledger == debit', async () => {
    // gpt-4o-mini's plan may fall back to claude-haiku-4-5 ($5 / 1M output, $5.275 displayed): a hold
    // of 500 output tokens is ~$0.0027, so $0.027 covers about 10 at once.
    const { client, accountId } = await newAccount({ freeTokens: 0, creditNanoUsd: 27_000_000 });
    const upstreamBefore = sim().requests.length;
    const watch = watchBalance(accountId);
    const results = await hundredAtOnce(client, 'credit');
    const { lowestCredit } = await watch.stop();
    const ok = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    expect(ok.length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThan(20);
    for (const r of refused) {
      expect(r.error.status).toBe(402);
      // What was asked and what is affordable — or, once nothing is left, that even the prompt is not.
      expect(r.error.message).toMatch(
        /requested up to 500 output tokens, can afford [\d,]+; lower max_tokens|the prompt alone \(up to \d+ tokens\) costs more/,
      );
    }
    // The upstreams saw exactly the answered requests: no refused request reached one.
    expect(promptsSeenSince(upstreamBefore, 'credit')).toEqual(answered(ok, 'credit'));
    expect(lowestCredit).toBeGreaterThanOrEqual(0);
    const { account, summary } = await settled(accountId);
    expect(summary.requests).toBe(ok.length);
    expect(27_000_000 - account.creditNanoUsd).toBe(summary.costNanoUsd);
    expect(account.usedNanoUsd).toBe(summary.costNanoUsd);
    expect(account.creditNanoUsd).toBeGreaterThanOrEqual(0);
    // usage.cost in each answer is what its ledger entry charged.
    const costs = ok.map((r) => Math.round((r.usage as { cost?: number }).cost! * 1e9));
    expect(costs.reduce((a, b) => a + b, 0)).toBe(summary.costNanoUsd);
  });

  it('the same with free tokens only: never below zero, 402s never reach an upstream, tokens add up', async () => {
    const { client, accountId } = await newAccount({ freeTokens: 5_400, creditNanoUsd: 0 });
    const upstreamBefore = sim().requests.length;
    const watch = watchBalance(accountId);
    const results = await hundredAtOnce(client, 'free');
    const { lowestFree } = await watch.stop();
    const ok = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    expect(ok.length).toBeGreaterThanOrEqual(5);
    for (const r of refused) expect(r.error.status).toBe(402);
    expect(promptsSeenSince(upstreamBefore, 'free')).toEqual(answered(ok, 'free'));
    expect(lowestFree).toBeGreaterThanOrEqual(0);
    const { account, summary } = await settled(accountId);
    expect(summary.requests).toBe(ok.length);
    expect(5_400 - account.freeTokens).toBe(summary.freeTokensUsed);
    expect(summary.costNanoUsd).toBe(0);
    expect(account.creditNanoUsd).toBe(0);
    const billed = ok.reduce((s, r) => s + (r.usage?.prompt_tokens ?? 0) + (r.usage?.completion_tokens ?? 0), 0);
    expect(summary.freeTokensUsed).toBe(billed);
  });

  it('sends the held output limit upstream when the client set none, and says what was asked and what is affordable', async () => {
    const { client } = await newAccount({ freeTokens: 1_000, creditNanoUsd: 0 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'no max_tokens' }] }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((err as Error).message).toMatch(/requested up to 16,384 output tokens, can afford [\d,]+; lower max_tokens/);
    const rich = await newAccount({ freeTokens: 200_000, creditNanoUsd: 0 });
    const before = sim().requests.length;
    await rich.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'no max_tokens' }] });
    const sent = sim()
      .requests.slice(before)
      .find((r) => r.model === 'gpt-4o');
    expect((sent?.body as { max_tokens?: number }).max_tokens).toBe(16_384);
  });
});

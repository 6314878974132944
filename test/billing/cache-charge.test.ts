import { describe, expect, it } from 'vitest';
import { chatDemand } from '../../functions/shared/billing/hold-demand';
import { computeCharge, type ChargeInput } from '../../functions/shared/money/price';
import { CATALOGUE, getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { planAttempts, type Attempt } from '../../functions/shared/routing/attempt-plan';
import { usageEntry } from '../../functions/shared/app/settle-request';
import { chargeFor } from '../../functions/shared/billing/settle';
import { tokenUsage } from '../../functions/shared/usage/token-usage';

/**
 * The per-bucket charge (money/price.ts), free tokens counted by value, the BYOK fee per bucket, and
 * the hold's worst case under `cache_control` (billing/hold-demand.ts). Prices are the catalogue's own.
 */

const sonnetEntry = getModel('claude-sonnet-4-6', 'chat');
const sonnet = sonnetEntry.targets[0]!;
const plan = planAttempts(sonnetEntry, CATALOGUE, { ANTHROPIC_API_KEY: 'k' });
const ceilDiv1000 = (n: bigint) => Number((n + 999n) / 1000n);

describe('the charge, bucket by bucket', () => {
  const p = sonnet.displayedPrice;
  const cache = (read: number, w5: number, w1: number) => ({
    readTokens: read,
    write5mTokens: w5,
    write1hTokens: w1,
    readPrice: p.cachedInput,
    write5mPrice: p.cacheWrite5m,
    write1hPrice: p.cacheWrite1h,
  });

  it('is Σ bucket × displayed price, rounded up once, for the Sonnet example (before: every prompt token at the input price)', () => {
    const after = computeCharge({
      promptTokens: 18_642,
      completionTokens: 1,
      freeTokensAvailable: 0,
      inputPrice: p.input,
      outputPrice: p.output,
      cache: cache(18_639, 0, 0),
    });
    const before = computeCharge({ promptTokens: 18_642, completionTokens: 1, freeTokensAvailable: 0, inputPrice: p.input, outputPrice: p.output });
    expect(after.costNanoUsd).toBe(5_924_564);
    expect(before.costNanoUsd).toBe(59_017_755);
    const write = computeCharge({
      promptTokens: 18_642,
      completionTokens: 1,
      freeTokensAvailable: 0,
      inputPrice: p.input,
      outputPrice: p.output,
      cache: cache(0, 18_639, 0),
    });
    expect(write.costNanoUsd).toBe(ceilDiv1000(3n * BigInt(p.input) + 18_639n * BigInt(p.cacheWrite5m) + BigInt(p.output)));
    // Upstream for the write: 3 × $3 + 18,639 × $3.75 + 1 × $15 per 1M = $0.06992025; charged upstream × 1.055, rounded up once.
    expect(write.costNanoUsd).toBe(ceilDiv1000((69_920_250_000n * 1_055n) / 1_000n));
    expect(write.costNanoUsd).toBe(73_765_864);
  });

  it('refuses buckets larger than the prompt', () => {
    expect(() =>
      computeCharge({ promptTokens: 10, completionTokens: 0, freeTokensAvailable: 0, inputPrice: 1, outputPrice: 1, cache: cache(8, 3, 0) }),
    ).toThrow(RangeError);
  });

  it('counts a cached token against free tokens by value: a cache read weighs 0.1 of a free token on Claude, a write one', () => {
    // 10 uncached + 1,000 read = 10 + 100 free tokens; 5 completion tokens: 115 in all, nothing charged.
    const c = computeCharge({
      promptTokens: 1_010,
      completionTokens: 5,
      freeTokensAvailable: 2_000,
      inputPrice: p.input,
      outputPrice: p.output,
      cache: cache(1_000, 0, 0),
    });
    expect(c).toEqual({ freeTokensUsed: 115, freePromptTokens: 110, freeCompletionTokens: 5, costNanoUsd: 0 });
    const w = computeCharge({
      promptTokens: 1_010,
      completionTokens: 0,
      freeTokensAvailable: 2_000,
      inputPrice: p.input,
      outputPrice: p.output,
      cache: cache(0, 0, 1_000),
    });
    expect(w.freeTokensUsed).toBe(1_010);
    // Half the prompt's weight covered: every bucket pays half its value.
    const half = computeCharge({
      promptTokens: 1_010,
      completionTokens: 0,
      freeTokensAvailable: 55,
      inputPrice: p.input,
      outputPrice: p.output,
      cache: cache(1_000, 0, 0),
    });
    expect(half.freePromptTokens).toBe(55);
    expect(half.costNanoUsd).toBe(ceilDiv1000((10n * BigInt(p.input) + 1_000n * BigInt(p.cachedInput)) / 2n));
  });

  it('never exceeds, in credit or free tokens, a hold that priced every prompt token at the highest bucket price', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % (n + 1));
    for (let i = 0; i < 2_000; i++) {
      const prompt = rnd(50_000);
      const read = rnd(prompt);
      const w5 = rnd(prompt - read);
      const w1 = rnd(prompt - read - w5);
      const completion = rnd(4_000);
      const maxOut = completion + rnd(1_000);
      const free = rnd(120_000);
      const top = Math.max(p.input, p.cacheWrite5m, p.cacheWrite1h);
      const hold = computeCharge({ promptTokens: prompt, completionTokens: maxOut, freeTokensAvailable: free, inputPrice: top, outputPrice: p.output });
      const input: ChargeInput = {
        promptTokens: prompt,
        completionTokens: completion,
        freeTokensAvailable: hold.freeTokensUsed,
        inputPrice: p.input,
        outputPrice: p.output,
        cache: cache(read, w5, w1),
      };
      const bill = computeCharge(input);
      expect(bill.costNanoUsd).toBeLessThanOrEqual(hold.costNanoUsd);
      expect(bill.freeTokensUsed).toBeLessThanOrEqual(hold.freeTokensUsed);
    }
  });
});

describe('the ledger entry of a cached answer', () => {
  const tokens = tokenUsage({ prompt: 18_642, cachedRead: 18_000, cacheWrite5m: 500, cacheWrite1h: 100, completion: 40, reasoning: 12 });
  const record = { publicModel: 'claude-sonnet-4-6', provider: 'anthropic', upstreamModel: 'claude-sonnet-4-6', outcome: 'ok', status: 200, ms: 5 } as never;

  it('stores every bucket with its displayed price', () => {
    const entry = usageEntry({
      requestedModel: 'claude-sonnet-4-6',
      attempt: plan[0]!,
      attempts: [record],
      usage: { tokens, estimated: false },
      status: 'complete',
    });
    const d = sonnet.displayedPrice;
    expect(entry).toMatchObject({
      promptTokens: 18_642,
      completionTokens: 40,
      cachedTokens: 18_000,
      cachedInputPrice: d.cachedInput,
      cacheWrite5mTokens: 500,
      cacheWrite5mPrice: d.cacheWrite5m,
      cacheWrite1hTokens: 100,
      cacheWrite1hPrice: d.cacheWrite1h,
      reasoningTokens: 12,
    });
    expect(chargeFor({ holdFreeTokens: 0, holdNanoUsd: Number.MAX_SAFE_INTEGER }, entry).costNanoUsd).toBe(
      ceilDiv1000(
        42n * BigInt(d.input) + 18_000n * BigInt(d.cachedInput) + 500n * BigInt(d.cacheWrite5m) + 100n * BigInt(d.cacheWrite1h) + 40n * BigInt(d.output),
      ),
    );
  });

  it('charges BYOK the platform fee on each bucket (displayed − upstream)', () => {
    const byok: Attempt = { ...plan[0]!, byok: { apiKey: 'sk-user', allowFallback: false } as never };
    const entry = usageEntry({
      requestedModel: 'claude-sonnet-4-6',
      attempt: byok,
      attempts: [record],
      usage: { tokens, estimated: false },
      status: 'complete',
    });
    const fee = (k: 'input' | 'cachedInput' | 'cacheWrite5m' | 'cacheWrite1h' | 'output') => BigInt(sonnet.displayedPrice[k] - sonnet.upstreamPrice[k]);
    expect(entry).toMatchObject({
      byok: true,
      inputPrice: Number(fee('input')),
      cachedInputPrice: Number(fee('cachedInput')),
      cacheWrite5mPrice: Number(fee('cacheWrite5m')),
      cacheWrite1hPrice: Number(fee('cacheWrite1h')),
    });
    expect(fee('cachedInput') * 10_000n).toBe(BigInt(sonnet.upstreamPrice.cachedInput) * 550n);
    expect(chargeFor({ holdFreeTokens: 0, holdNanoUsd: Number.MAX_SAFE_INTEGER }, entry).costNanoUsd).toBe(
      ceilDiv1000(42n * fee('input') + 18_000n * fee('cachedInput') + 500n * fee('cacheWrite5m') + 100n * fee('cacheWrite1h') + 40n * fee('output')),
    );
  });
});

describe('the hold under cache_control', () => {
  const body = (cacheControl?: Record<string, unknown>) =>
    chatCompletionRequest.parse({
      model: 'claude-sonnet-4-6',
      max_tokens: 16,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello', ...(cacheControl ? { cache_control: cacheControl } : {}) }] }],
    });

  it('prices the whole prompt at the highest write price the request can trigger', () => {
    const d = sonnet.displayedPrice;
    expect(chatDemand(body(), sonnetEntry, plan).demand.inputPrice).toBe(d.input);
    expect(chatDemand(body({ type: 'ephemeral' }), sonnetEntry, plan).demand.inputPrice).toBe(d.cacheWrite5m);
    expect(chatDemand(body({ type: 'ephemeral', ttl: '1h' }), sonnetEntry, plan).demand.inputPrice).toBe(d.cacheWrite1h);
    expect(d.cacheWrite1h).toBe(2 * d.input);
    const top = chatCompletionRequest.parse({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }], cache_control: { type: 'ephemeral' } });
    expect(chatDemand(top, sonnetEntry, plan).demand.inputPrice).toBe(d.cacheWrite5m);
  });
});

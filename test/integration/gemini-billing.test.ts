import { ApiError, GoogleGenAI, type GenerateContentParameters, type GenerateContentResponse, type UsageMetadata } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE, type TokenPrices } from '../../functions/shared/catalogue/catalogue';
import type { InvocationRecord } from '../../local/function-url';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { costSum, ledgerEntries, pollLedgerEntry, type StoredItem } from '../support/ledger';
import { holdsReturned } from '../support/settle-queue';

/**
 * The money tests through the Gemini API surface (docs/providers.md §10), with the real `@google/genai`
 * SDK against the real handlers, DynamoDB Local and the upstream simulator: one ledger entry per
 * request, costing the catalogue price × the tokens the client saw in `usageMetadata`, to the
 * nano-dollar; free tokens; a refusal before any upstream call, in Google's body and status (402
 * RESOURCE_EXHAUSTED, which Google's clients do not retry); a key's spend limit under a burst of
 * streams; a stream the upstream cuts mid-way.
 */

let gw: RunningGateway;
let origin: string;
/** Every Function URL invocation (the gateway's `onInvocation`): how many requests a client really sent. */
const invocations: InvocationRecord[] = [];

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `gemini-billing-${process.pid}`, onInvocation: (r) => invocations.push(r) });
  origin = gw.baseUrl.replace(/\/v1$/, '');
});

afterAll(async () => {
  await gw?.close();
});

beforeEach(() => {
  sim().clearFaults();
  sim().setChunkDelay(0);
});

const sim = () => {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
};

interface Opts {
  freeTokens: number;
  creditNanoUsd: number;
}

/** A new account and key, and the SDK on it (no retries unless `retry` says how many attempts). */
async function newClient(opts: Opts, keyOpts: { limitNanoUsd?: number } = {}, retry?: number) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount(opts);
  const key = await createKey(account.accountId, 'gemini-billing', keyOpts);
  const retryOptions = retry === undefined ? undefined : { attempts: retry, initialDelay: 0.01, maxDelay: 0.05 };
  const ai = new GoogleGenAI({ apiKey: key.key, httpOptions: { baseUrl: origin, ...(retryOptions ? { retryOptions } : {}) } });
  return { ai, accountId: account.accountId, key: key.key, keyHash: key.keyHash };
}

/** The displayed prices of a public model's first target (µUSD per 1M tokens). */
const prices = (model: string): TokenPrices => CATALOGUE.get(model)!.targets[0]!.displayedPrice;

/**
 * ceil(Σ tokens × µUSD/MTok / 1000): the charge in nano-USD of what the client saw, written out
 * independently of money/price.ts — uncached prompt at the input price, cached at the cached price,
 * output (candidates and thoughts: `totalTokenCount − promptTokenCount`) at the output price.
 */
function chargeOf(usage: UsageMetadata, p: TokenPrices): number {
  const prompt = usage.promptTokenCount ?? 0;
  const cached = usage.cachedContentTokenCount ?? 0;
  const output = (usage.totalTokenCount ?? 0) - prompt;
  const sum = BigInt(prompt - cached) * BigInt(p.input) + BigInt(cached) * BigInt(p.cachedInput) + BigInt(output) * BigInt(p.output);
  return Number((sum + 999n) / 1000n);
}

/** The account once nothing is held on it: this process's credit leases returned at once (as at shutdown). */
async function settled(accountId: string) {
  const { getAccount } = await import('../../functions/shared/accounts/account-store');
  await holdsReturned(accountId);
  const account = await getAccount(accountId, { consistent: true });
  if (account === undefined) throw new Error(`no account ${accountId}`);
  return account;
}

/** The account's request entries (its settled or partial requests; no credits, holds or lease items). */
async function requestEntries(accountId: string): Promise<StoredItem[]> {
  return (await ledgerEntries(accountId)).filter((e) => typeof e.servedModel === 'string' && e.status !== 'held');
}

/** A streamed generateContent read to its end: the chunks, the text, the last usage, the response id. */
async function streamed(ai: GoogleGenAI, params: GenerateContentParameters) {
  const chunks: GenerateContentResponse[] = [];
  let error: unknown;
  try {
    for await (const c of await ai.models.generateContentStream(params)) chunks.push(c);
  } catch (e) {
    error = e;
  }
  const usage = chunks.findLast((c) => c.usageMetadata !== undefined)?.usageMetadata;
  return { chunks, text: chunks.map((c) => c.text ?? '').join(''), usage, responseId: chunks[0]?.responseId, error };
}

/** The prompts (`<tag> <i>`) the simulator received since `from`, without repeats (a hedge may send one twice). */
function promptsSeenSince(from: number, tag: string): string[] {
  const seen = sim()
    .requests.slice(from)
    .flatMap((r) => JSON.stringify(r.body).match(new RegExp(`${tag} \\d+`, 'g')) ?? []);
  return [...new Set(seen)].sort();
}

describe.each(['gemini-2.5-flash', 'claude-sonnet-4-6'])('one ledger entry per request, at the price of the tokens in usageMetadata, on %s', (model) => {
  it('buffered generateContent', async () => {
    const { ai, accountId } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    const r = await ai.models.generateContent({ model, contents: 'bill this buffered answer', config: { maxOutputTokens: 64 } });
    expect(r.text).toMatch(/bill this buffered answer/);
    const usage = r.usageMetadata!;
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    const entry = await pollLedgerEntry(accountId, r.responseId ?? null);
    expect(entry).toMatchObject({
      servedModel: model,
      status: 'complete',
      usageEstimated: false,
      promptTokens: usage.promptTokenCount,
      completionTokens: (usage.totalTokenCount ?? 0) - (usage.promptTokenCount ?? 0),
      inputPrice: prices(model).input,
      outputPrice: prices(model).output,
      costNanoUsd: chargeOf(usage, prices(model)),
      freeTokensUsed: 0,
    });
    expect(await requestEntries(accountId)).toHaveLength(1);
    const account = await settled(accountId);
    expect(account.creditNanoUsd).toBe(1_000_000_000 - chargeOf(usage, prices(model)));
  });

  it('a prompt-cache read (`[cached]`: 3/4 of the prompt) is shown as cachedContentTokenCount and billed at the cached price', async () => {
    const { ai, accountId } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    const r = await ai.models.generateContent({ model, contents: '[cached] bill this cached prompt', config: { maxOutputTokens: 64 } });
    const usage = r.usageMetadata!;
    expect(usage.cachedContentTokenCount).toBe(Math.floor(((usage.promptTokenCount ?? 0) * 3) / 4));
    expect(usage.cachedContentTokenCount).toBeGreaterThan(0);
    const entry = await pollLedgerEntry(accountId, r.responseId ?? null);
    expect(entry).toMatchObject({
      promptTokens: usage.promptTokenCount,
      cachedTokens: usage.cachedContentTokenCount,
      cachedInputPrice: prices(model).cachedInput,
      costNanoUsd: chargeOf(usage, prices(model)),
    });
  });

  it('streamed generateContent, thinking on: thoughts are billed as output, as usageMetadata counts them', async () => {
    const { ai, accountId } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    const s = await streamed(ai, {
      model,
      contents: 'bill this streamed answer',
      config: { maxOutputTokens: 2_048, thinkingConfig: { includeThoughts: true, thinkingBudget: 1_024 } },
    });
    expect(s.error).toBeUndefined();
    expect(s.text).toMatch(/bill this streamed answer/);
    const usage = s.usage!;
    expect(s.chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    const entry = await pollLedgerEntry(accountId, s.responseId ?? null);
    expect(entry).toMatchObject({
      servedModel: model,
      status: 'complete',
      promptTokens: usage.promptTokenCount,
      completionTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
      costNanoUsd: chargeOf(usage, prices(model)),
    });
    expect(await requestEntries(accountId)).toHaveLength(1);
    const account = await settled(accountId);
    expect(account.creditNanoUsd).toBe(1_000_000_000 - chargeOf(usage, prices(model)));
  });
});

describe.each([
  ['claude-sonnet-4-6', 'anthropic'],
  ['gpt-4o', 'openai'],
] as const)('an answer that fills its output limit, on %s', (model, provider) => {
  it('100 of 200 words, streamed a word or two a piece: neither cut nor billed past its usage', async () => {
    const { ai, accountId } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    // An honest, long generation: 200 words, kept to the 100-token limit, a piece every 5 ms (one read each).
    sim().setFault({ provider, model }, { kind: 'paced', everyMs: 5, words: 200 }, { times: 1 });
    const s = await streamed(ai, { model, contents: 'fill the limit', config: { maxOutputTokens: 100 } });
    expect(s.error).toBeUndefined();
    expect(s.text.split(/\s+/).filter((w) => w !== '')).toHaveLength(100);
    const usage = s.usage!;
    expect(usage.candidatesTokenCount).toBe(100);
    const entry = await pollLedgerEntry(accountId, s.responseId ?? null);
    expect(entry).toMatchObject({
      usageEstimated: false,
      completionTokens: 100,
      promptTokens: usage.promptTokenCount,
      costNanoUsd: chargeOf(usage, prices(model)),
    });
  });
});

describe('free tokens only', () => {
  it('a buffered and a streamed request spend free tokens equal to usageMetadata.totalTokenCount, and no credit', async () => {
    const { ai, accountId } = await newClient({ freeTokens: 200_000, creditNanoUsd: 0 });
    const b = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'free buffered', config: { maxOutputTokens: 64 } });
    const s = await streamed(ai, { model: 'gemini-2.5-flash', contents: 'free streamed', config: { maxOutputTokens: 64 } });
    expect(s.error).toBeUndefined();
    for (const [id, usage] of [
      [b.responseId, b.usageMetadata],
      [s.responseId, s.usage],
    ] as const) {
      const entry = await pollLedgerEntry(accountId, id ?? null);
      expect(entry).toMatchObject({ costNanoUsd: 0, freeTokensUsed: usage?.totalTokenCount, promptTokens: usage?.promptTokenCount });
    }
    const account = await settled(accountId);
    expect(account.freeTokens).toBe(200_000 - (b.usageMetadata?.totalTokenCount ?? 0) - (s.usage?.totalTokenCount ?? 0));
    expect(account.creditNanoUsd).toBe(0);
    expect(await requestEntries(accountId)).toHaveLength(2);
  });
});

describe('a nearly empty account', () => {
  it("is refused before any upstream call with 402 RESOURCE_EXHAUSTED in Google's body, which a retrying SDK sends once; nothing is billed", async () => {
    // $0.000001: less than any hold. The SDK retries 408, 429 and 5xx when given retryOptions, as Gemini CLI retries 429.
    const { ai, accountId, key } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000 }, {}, 4);
    const upstreamBefore = sim().requests.length;
    const sentBefore = invocations.length;
    const buffered = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'refused buffered' }).catch((e: unknown) => e);
    const stream = await streamed(ai, { model: 'gemini-2.5-flash', contents: 'refused streamed' });
    for (const err of [buffered, stream.error]) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(402);
      expect((err as ApiError).message).toMatch(/RESOURCE_EXHAUSTED/);
    }
    expect(stream.chunks).toHaveLength(0);
    expect(invocations.slice(sentBefore).map((r) => r.statusCode)).toEqual([402, 402]);
    const res = await fetch(`${origin}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'refused raw' }] }] }),
    });
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ error: { code: 402, status: 'RESOURCE_EXHAUSTED', message: expect.stringMatching(/\S/) } });
    expect(sim().requests.length).toBe(upstreamBefore);
    expect(await requestEntries(accountId)).toHaveLength(0);
    expect((await settled(accountId)).creditNanoUsd).toBe(1_000);
  });
});

describe("a key's spend limit under a burst of streams", () => {
  it('20 concurrent streamed requests never spend past it; the refused ones are 402 and never reach an upstream', async () => {
    const LIMIT = 1_000_000; // $0.001: about 5 holds of gemini-2.5-flash with 64 output tokens
    const { ai, accountId, keyHash } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 }, { limitNanoUsd: LIMIT });
    const before = sim().requests.length;
    // Paced chunks, so the streams overlap whatever the machine's speed.
    sim().setChunkDelay(40);
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => ({
        i,
        ...(await streamed(ai, { model: 'gemini-2.5-flash', contents: `limited ${i}`, config: { maxOutputTokens: 64 } })),
      })),
    );
    sim().setChunkDelay(0);
    const ok = results.filter((r) => r.error === undefined);
    const refused = results.filter((r) => r.error !== undefined);
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect((r.error as ApiError).status).toBe(402);
      expect((r.error as ApiError).message).toMatch(/spend limit/);
      expect(r.chunks).toHaveLength(0);
    }
    expect(promptsSeenSince(before, 'limited')).toEqual(ok.map((r) => `limited ${r.i}`).sort());
    await settled(accountId);
    const entries = await requestEntries(accountId);
    expect(entries).toHaveLength(ok.length);
    const spent = costSum(entries);
    expect(spent).toBeLessThanOrEqual(LIMIT);
    expect(spent).toBe(ok.reduce((n, r) => n + chargeOf(r.usage!, prices('gemini-2.5-flash')), 0));
    const { readState } = await import('../../functions/shared/billing/account-state');
    const keyEntry = (await readState(accountId, { consistent: true })).keys?.[keyHash.slice(0, 16)];
    expect(keyEntry).toMatchObject({ heldNanoUsd: 0, leftNanoUsd: LIMIT - spent });
  });
});

describe('a stream the upstream cuts mid-way', () => {
  it.each<[string, 'gemini' | 'anthropic', Opts]>([
    ['gemini-2.5-flash', 'gemini', { freeTokens: 0, creditNanoUsd: 1_000_000_000 }],
    ['claude-sonnet-4-6', 'anthropic', { freeTokens: 0, creditNanoUsd: 1_000_000_000 }],
    ['gemini-2.5-flash', 'gemini', { freeTokens: 200_000, creditNanoUsd: 0 }],
  ])('%s (%s upstream, %o): the delivered tokens are billed, never 0 and never past the hold', async (model, provider, opts) => {
    const { ai, accountId } = await newClient(opts);
    const before = sim().requests.length;
    sim().setFault({ provider, model }, { kind: 'reset-after-chunks', chunks: 3 }, { times: 1 });
    const s = await streamed(ai, {
      model,
      contents: 'cut this stream',
      config: { maxOutputTokens: 64, thinkingConfig: { includeThoughts: true, thinkingBudget: 1_024 } },
    });
    // What reached the client: Gemini's first parts are thoughts (`thought: true`), Claude's the answer.
    const delivered = s.chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).map((p) => p.text ?? '');
    const words = delivered
      .join('')
      .split(/\s+/)
      .filter((w) => w !== '').length;
    expect(words).toBeGreaterThan(0);
    // The stream ends with Google's error frame, which the SDK throws.
    expect((s.error as ApiError).message).toMatch(/INTERNAL.*failed mid-stream/);
    // No fallback once output went out: one upstream call.
    expect(sim().requests.length - before).toBe(1);
    const entry = await pollLedgerEntry(accountId, s.responseId ?? null);
    expect(entry).toMatchObject({ servedModel: model, status: 'partial', usageEstimated: true });
    const e = entry as StoredItem;
    expect(e.completionTokens).toBeGreaterThanOrEqual(words);
    expect(e.promptTokens).toBeGreaterThan(0);
    const p = prices(model);
    const charge = chargeOf({ promptTokenCount: e.promptTokens, totalTokenCount: e.promptTokens + e.completionTokens }, p);
    if (opts.creditNanoUsd > 0) {
      expect(e.costNanoUsd).toBe(charge);
      expect(e.costNanoUsd).toBeGreaterThan(0);
      expect(e.costNanoUsd).toBeLessThanOrEqual(e.holdNanoUsd);
    } else {
      expect(e.freeTokensUsed).toBe(e.promptTokens + e.completionTokens);
      expect(e.freeTokensUsed).toBeLessThanOrEqual(e.holdFreeTokens);
    }
    expect(await requestEntries(accountId)).toHaveLength(1);
    const account = await settled(accountId);
    expect(account.creditNanoUsd).toBe(opts.creditNanoUsd - e.costNanoUsd);
    expect(account.freeTokens).toBe(opts.freeTokens - e.freeTokensUsed);
  });
});

describe('a runaway upstream (it ignores the output limit)', () => {
  it.each<[string, number, string, string]>([
    ['cut by the upstream after 12 chunks', 12, 'partial', 'INTERNAL'],
    ['ended by the gateway at the limit, before the upstream cuts it after 60', 60, 'complete', 'MAX_TOKENS'],
  ])('%s: billed no more than its hold, and not nothing', async (_name, chunks, status, end) => {
    const { ai, accountId } = await newClient({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    // `[runaway]`: the simulator ignores the output limit (16 here) and writes 5,000 words.
    sim().setFault({ provider: 'anthropic', model: 'claude-sonnet-4-6' }, { kind: 'reset-after-chunks', chunks }, { times: 1 });
    const s = await streamed(ai, { model: 'claude-sonnet-4-6', contents: `[runaway] ${chunks} chunks`, config: { maxOutputTokens: 16 } });
    expect(s.text).toMatch(/^Echo:/);
    if (end === 'INTERNAL') expect((s.error as ApiError).message).toMatch(/INTERNAL.*failed mid-stream/);
    else expect([s.error, s.chunks.at(-1)?.candidates?.[0]?.finishReason]).toEqual([undefined, 'MAX_TOKENS']);
    const e = (await pollLedgerEntry(accountId, s.responseId ?? null)) as StoredItem;
    expect(e).toMatchObject({ status, maxCompletionTokens: 16, usageEstimated: true });
    expect(e.costNanoUsd).toBeGreaterThan(0);
    expect(e.costNanoUsd).toBeLessThanOrEqual(e.holdNanoUsd);
    const account = await settled(accountId);
    expect(account.creditNanoUsd).toBe(1_000_000_000 - e.costNanoUsd);
  });
});

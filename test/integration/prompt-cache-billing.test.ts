import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE, type TokenPrices } from '../../functions/shared/catalogue/catalogue';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * Prompt caching billed per bucket, through the whole path (the official SDK, the real handlers, DynamoDB
 * Local): an upstream replays recorded-shape answers carrying each provider's own cache fields (Anthropic
 * `cache_read_input_tokens` / `cache_creation.ephemeral_5m|1h_input_tokens`, Gemini
 * `cachedContentTokenCount`, DeepSeek `prompt_cache_hit_tokens`, OpenAI `cached_tokens`), streamed and
 * buffered. The charge must equal Σ bucket × displayed price, rounded up once, to the nano-dollar; the
 * answer's `usage` must show the cached and written tokens and `usage.cost` the same charge.
 *
 * The replay server stands in for the providers (their `<NAME>_BASE_URL`): it answers every request with
 * the next fixture, whatever was asked, as a lying-but-bounded upstream would. Each prompt sent is large
 * enough that its hold covers the replayed usage, so the bill is the exact charge.
 */

const FIXTURES = new URL('../fixtures/cache/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
/** A recorded streamed answer (`<name>.sse`): every chat request goes upstream streamed. */
const answer = (name: string) => ({ sse: fixture(`${name}.sse`) });

let replay: Server;
/** The next answer. */
let next: { sse: string } | undefined;
let lastUpstreamBody: Record<string, unknown> | undefined;
let gw: RunningGateway;
let client: OpenAI;
let accountId: string;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  replay = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      lastUpstreamBody = JSON.parse(raw || '{}') as Record<string, unknown>;
      const wantsSse = lastUpstreamBody.stream === true || (req.url ?? '').includes('streamGenerateContent?alt=sse');
      if (next === undefined || !wantsSse) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(`{"error":{"message":"${wantsSse ? 'no fixture queued' : 'a buffered upstream request'}"}}`);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(next.sse);
    });
  });
  await new Promise<void>((r) => replay.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(replay.address() as AddressInfo).port}`;
  for (const name of ['ANTHROPIC', 'GEMINI', 'DEEPSEEK', 'OPENAI', 'MINIMAX']) {
    for (const v of [`${name}_API_KEY`, `${name}_BASE_URL`]) saved[v] = process.env[v];
    process.env[`${name}_API_KEY`] = 'replay-key';
    process.env[`${name}_BASE_URL`] = base;
  }
  gw = await startGateway({ tablePrefix: `cache-${process.pid}` });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount({ freeTokens: 0, creditNanoUsd: 10_000_000_000 });
  accountId = account.accountId;
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(accountId, 'cache')).key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await new Promise<void>((r) => replay?.close(() => r()));
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

/** The displayed prices of a public model's first target. */
const prices = (model: string): TokenPrices => CATALOGUE.get(model)!.targets[0]!.displayedPrice;

/** ceil(Σ tokens × µUSD/MTok / 1000): the expected charge in nano-USD, written out independently of money/price.ts. */
function expectedNano(buckets: Array<[tokens: number, price: number]>): number {
  const sum = buckets.reduce((s, [n, p]) => s + BigInt(n) * BigInt(p), 0n);
  return Number((sum + 999n) / 1000n);
}

/** A user prompt of about `tokens` tokens (one token per "hello "). */
const prompt = (tokens: number) => [{ role: 'user' as const, content: 'hello '.repeat(tokens) }];

async function buffered(model: string, reply: NonNullable<typeof next>, tokens: number, extra: Record<string, unknown> = {}) {
  next = reply;
  const { data, response } = await client.chat.completions.create({ model, messages: prompt(tokens), max_tokens: 16, ...extra } as never).withResponse();
  return {
    usage: data.usage as OpenAI.CompletionUsage & { cost: number; prompt_tokens_details: { cache_write_tokens: number } },
    entry: await pollLedgerEntry(accountId, response.headers.get('x-request-id')),
  };
}

async function streamed(model: string, reply: NonNullable<typeof next>, tokens: number, extra: Record<string, unknown> = {}) {
  next = reply;
  const { data: stream, response } = await client.chat.completions
    .create({ model, messages: prompt(tokens), max_tokens: 16, stream: true, stream_options: { include_usage: true }, ...extra } as never)
    .withResponse();
  let usage: (OpenAI.CompletionUsage & { cost: number; prompt_tokens_details: { cache_write_tokens: number } }) | undefined;
  for await (const c of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) if (c.usage) usage = c.usage as typeof usage;
  return { usage: usage!, entry: await pollLedgerEntry(accountId, response.headers.get('x-request-id')) };
}

describe('prompt caching, priced per bucket', () => {
  const sonnet = prices('claude-sonnet-4-6');

  it('Anthropic cache read (3 input + 18,639 read + 1 output on Sonnet 4.6): buffered and streamed bill the same exact charge', async () => {
    const want = expectedNano([
      [3, sonnet.input],
      [18_639, sonnet.cachedInput],
      [1, sonnet.output],
    ]);
    expect(want).toBe(5_924_564); // $0.005924564 = $0.0056157 upstream × 1.055, rounded up once (was $0.059017755)
    for (const run of [
      () => buffered('claude-sonnet-4-6', answer('anthropic-cache-read'), 19_000),
      () => streamed('claude-sonnet-4-6', answer('anthropic-cache-read'), 19_000),
    ]) {
      const { usage, entry } = await run();
      expect(usage).toMatchObject({
        prompt_tokens: 18_642,
        completion_tokens: 1,
        total_tokens: 18_643,
        prompt_tokens_details: { cached_tokens: 18_639, cache_write_tokens: 0 },
      });
      expect(usage.cost).toBe(want / 1e9);
      expect(entry).toMatchObject({
        promptTokens: 18_642,
        completionTokens: 1,
        cachedTokens: 18_639,
        cachedInputPrice: sonnet.cachedInput,
        inputPrice: sonnet.input,
        costNanoUsd: want,
        usageEstimated: false,
      });
      expect(entry?.cacheWrite5mTokens).toBeUndefined();
    }
  });

  it('Anthropic 5-minute cache write of 18,639 tokens: billed at the write price, not below cost', async () => {
    const want = expectedNano([
      [3, sonnet.input],
      [18_639, sonnet.cacheWrite5m],
      [1, sonnet.output],
    ]);
    expect(want).toBe(73_765_864); // $0.073765864 (was $0.059017755: less than the upstream's $0.06992025)
    for (const run of [
      () => buffered('claude-sonnet-4-6', answer('anthropic-cache-write'), 19_000),
      () => streamed('claude-sonnet-4-6', answer('anthropic-cache-write'), 19_000),
    ]) {
      const { usage, entry } = await run();
      expect(usage.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 18_639 });
      expect(usage.cost).toBe(want / 1e9);
      expect(entry).toMatchObject({ promptTokens: 18_642, cacheWrite5mTokens: 18_639, cacheWrite5mPrice: sonnet.cacheWrite5m, costNanoUsd: want });
    }
  });

  it('a 1-hour cache write is held in full before the call (cache_control ttl 1h) and billed at 2× input', async () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hello '.repeat(3_000), cache_control: { type: 'ephemeral', ttl: '1h' } }] }] };
    const { usage, entry } = await streamed('claude-sonnet-4-6', answer('anthropic-write-1h'), 0, body);
    const want = expectedNano([
      [5, sonnet.input],
      [3_000, sonnet.cacheWrite1h],
      [1, sonnet.output],
    ]);
    expect(sonnet.cacheWrite1h).toBe(2 * sonnet.input);
    expect(usage.prompt_tokens_details.cache_write_tokens).toBe(3_000);
    expect(entry).toMatchObject({ cacheWrite1hTokens: 3_000, cacheWrite1hPrice: sonnet.cacheWrite1h, costNanoUsd: want });
    // The hold priced the whole prompt at the 1-hour write price: it covers the bill.
    expect(entry?.holdInputPrice).toBe(sonnet.cacheWrite1h);
    expect(Number(entry?.holdNanoUsd)).toBeGreaterThanOrEqual(want);
    // The breakpoint reached Anthropic as Anthropic spells it.
    expect(JSON.stringify(lastUpstreamBody)).toContain('"cache_control":{"type":"ephemeral","ttl":"1h"}');
  });

  it('Gemini implicit caching (11,243 of 12,013 prompt tokens cached): the cached share at the cached price', async () => {
    const lite = prices('gemini-2.5-flash-lite');
    const want = expectedNano([
      [12_013 - 11_243, lite.input],
      [11_243, lite.cachedInput],
      [9, lite.output],
    ]);
    for (const run of [
      () => buffered('gemini-2.5-flash-lite', answer('gemini-implicit-cache'), 12_500),
      () => streamed('gemini-2.5-flash-lite', answer('gemini-implicit-cache'), 12_500),
    ]) {
      const { usage, entry } = await run();
      expect(usage).toMatchObject({ prompt_tokens: 12_013, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 11_243, cache_write_tokens: 0 } });
      expect(entry).toMatchObject({ promptTokens: 12_013, cachedTokens: 11_243, cachedInputPrice: lite.cachedInput, costNanoUsd: want });
      expect(usage.cost).toBe(want / 1e9);
    }
  });

  it('DeepSeek disk-cache hits (320 of 339) at the hit price; OpenAI cached_tokens at the cached price', async () => {
    const ds = prices('deepseek-v3');
    const d = await buffered('deepseek-v3', answer('deepseek-cache-hit'), 400);
    expect(d.entry).toMatchObject({
      promptTokens: 339,
      cachedTokens: 320,
      cachedInputPrice: ds.cachedInput,
      costNanoUsd: expectedNano([
        [19, ds.input],
        [320, ds.cachedInput],
        [2, ds.output],
      ]),
    });
    expect(d.usage.prompt_tokens_details).toEqual({ cached_tokens: 320, cache_write_tokens: 0 });
    const mini = prices('gpt-4o-mini');
    const o = await streamed('gpt-4o-mini', answer('openai-cached'), 2_100);
    expect(o.entry).toMatchObject({
      promptTokens: 2_048,
      cachedTokens: 1_920,
      costNanoUsd: expectedNano([
        [128, mini.input],
        [1_920, mini.cachedInput],
        [1, mini.output],
      ]),
    });
    expect(o.usage.cost).toBe(Number(o.entry?.costNanoUsd) / 1e9);
  });

  it('MiniMax automatic caching (5,632 of 6,213 prompt tokens cached, reasoning apart): the cached share at the cached price, buffered and streamed', async () => {
    // MiniMax's OpenAI-compatible usage (docs/prices.md): `prompt_tokens_details.cached_tokens`, a subset
    // of `prompt_tokens`; its passive cache bills no write premium (new input at the input price).
    const m27 = prices('minimax');
    expect(m27.cachedInput).toBeLessThan(m27.input);
    expect(m27.cacheWrite5m).toBe(m27.input);
    const want = expectedNano([
      [6_213 - 5_632, m27.input],
      [5_632, m27.cachedInput],
      [41, m27.output],
    ]);
    for (const run of [() => buffered('minimax', answer('minimax-cache-read'), 6_300), () => streamed('minimax', answer('minimax-cache-read'), 6_300)]) {
      const { usage, entry } = await run();
      expect(usage).toMatchObject({
        prompt_tokens: 6_213,
        completion_tokens: 41,
        prompt_tokens_details: { cached_tokens: 5_632, cache_write_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 17 },
      });
      expect(entry).toMatchObject({
        provider: 'minimax',
        promptTokens: 6_213,
        completionTokens: 41,
        cachedTokens: 5_632,
        cachedInputPrice: m27.cachedInput,
        reasoningTokens: 17,
        costNanoUsd: want,
        usageEstimated: false,
      });
      expect(entry?.cacheWrite5mTokens).toBeUndefined();
      expect(usage.cost).toBe(want / 1e9);
    }
    // MiniMax's OpenAI-compatible API takes no cache_control: a breakpoint never reaches it.
    await buffered('minimax', answer('minimax-cache-read'), 0, {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello '.repeat(6_300), cache_control: { type: 'ephemeral' } }] }],
    });
    expect(JSON.stringify(lastUpstreamBody)).not.toContain('cache_control');
  });

  it('a Gemini prompt blocked for safety (promptFeedback.blockReason, no candidates) bills the same streamed and buffered for the same upstream bytes', async () => {
    const lite = prices('gemini-2.5-flash-lite');
    const blocked = answer('gemini-safety-block');
    const runs = [await buffered('gemini-2.5-flash-lite', blocked, 40), await streamed('gemini-2.5-flash-lite', blocked, 40)];
    for (const { usage, entry } of runs) {
      // The upstream's own count: 23 prompt tokens, nothing generated (the issue saw 23+0 and 23+1).
      expect(usage).toMatchObject({ prompt_tokens: 23, completion_tokens: 0, total_tokens: 23 });
      expect(entry).toMatchObject({
        promptTokens: 23,
        completionTokens: 0,
        usageEstimated: false,
        finishReason: 'content_filter',
        costNanoUsd: expectedNano([[23, lite.input]]),
      });
    }
    // Without usageMetadata both are estimated, by the same rules, to the same bill.
    const { usageMetadata: _dropped, ...rest } = JSON.parse(blocked.sse.replace(/^data: /, '')) as Record<string, unknown>;
    const bare = { sse: `data: ${JSON.stringify(rest)}\n\n` };
    const estimated = [await buffered('gemini-2.5-flash-lite', bare, 40), await streamed('gemini-2.5-flash-lite', bare, 40)];
    const [b, st] = estimated.map(({ entry }) => entry!);
    expect(b).toMatchObject({ usageEstimated: true, completionTokens: 0 });
    expect([st!.promptTokens, st!.completionTokens, st!.costNanoUsd, st!.usageEstimated]).toEqual([
      b!.promptTokens,
      b!.completionTokens,
      b!.costNanoUsd,
      b!.usageEstimated,
    ]);
  });

  it("Gemini context caches: google.cached_content (or Google's extra_body.google shape) reaches Gemini as cachedContent, holds the context window, bills the cached share", async () => {
    const lite = prices('gemini-2.5-flash-lite');
    const name = 'cachedContents/a1b2c3d4e5';
    const want = expectedNano([
      [12_013 - 11_243, lite.input],
      [11_243, lite.cachedInput],
      [9, lite.output],
    ]);
    // The OpenAI SDK sends an unknown parameter as a body field: `extra_body` literally (Google's wire
    // shape, providers.md §3.9), or `google` (Python's extra_body={"google": …}).
    for (const [run, extra] of [
      [buffered, { extra_body: { google: { cached_content: name } } }],
      [streamed, { google: { cached_content: name } }],
    ] as const) {
      const { usage, entry } = await run('gemini-2.5-flash-lite', answer('gemini-implicit-cache'), 100, extra);
      expect(lastUpstreamBody).toMatchObject({ cachedContent: name });
      expect(lastUpstreamBody).not.toHaveProperty('google');
      expect(lastUpstreamBody).not.toHaveProperty('extra_body');
      expect(usage.prompt_tokens_details.cached_tokens).toBe(11_243);
      expect(entry).toMatchObject({ cachedTokens: 11_243, costNanoUsd: want });
      // The cache's size is unknown before the call: the whole context window was held as prompt.
      expect(Number(entry?.holdNanoUsd)).toBeGreaterThanOrEqual(expectedNano([[1_048_576, lite.input]]));
    }
  });

  it('a named context cache never reaches a provider that cannot read it: a clear 400 before any call', async () => {
    lastUpstreamBody = undefined;
    const refusal = (model: string, extra: Record<string, unknown>) =>
      client.chat.completions.create({ model, messages: prompt(10), max_tokens: 16, ...extra } as never).then(
        () => undefined,
        (e: InstanceType<typeof OpenAI.APIError>) => ({ status: e.status, param: e.param, code: e.code, message: e.message }),
      );
    // Served by OpenAI (and its equivalents): no target can read a Gemini cache.
    expect(await refusal('gpt-4o-mini', { google: { cached_content: 'cachedContents/abc' } })).toMatchObject({
      status: 400,
      param: 'google',
      code: 'unsupported_capability',
    });
    // Not a cache name; another Gemini option; two different caches.
    expect(await refusal('gemini-2.5-flash-lite', { google: { cached_content: 'projects/x/cachedContents/abc' } })).toMatchObject({ status: 400 });
    expect(await refusal('gemini-2.5-flash-lite', { google: { thinking_config: { thinking_budget: 0 } } })).toMatchObject({ status: 400 });
    expect(
      await refusal('gemini-2.5-flash-lite', {
        google: { cached_content: 'cachedContents/a' },
        extra_body: { google: { cached_content: 'cachedContents/b' } },
      }),
    ).toMatchObject({ status: 400 });
    expect(lastUpstreamBody).toBeUndefined();
  });

  it("shows every bucket price on GET /v1/models in OpenRouter's pricing names (USD per token)", async () => {
    const res = await fetch(`${gw.baseUrl}/models/claude-sonnet-4-6`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    const model = (await res.json()) as { pricing: Record<string, string> };
    expect(model.pricing).toMatchObject({
      prompt: '0.000003165',
      completion: '0.000015825',
      input_cache_read: '0.0000003165',
      input_cache_write: '0.00000395625',
      input_cache_write_1h: '0.00000633',
    });
  });
});

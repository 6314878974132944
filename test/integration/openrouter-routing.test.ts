import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reloadConfig } from '../../functions/shared/config/env';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * OpenRouter's conventions through the whole gateway with the official openai SDK: OpenRouter's model names (slugs,
 * dated ids, retired OpenAI names), its `provider` preferences and `:nitro` / `:floor` suffixes (each
 * decision read from `x-modelmux-provider`), the x-ratelimit-* headers on 200s, OpenAI's 400s for
 * max_tokens and dimensions, and `GET /v1/generation` agreeing with the ledger.
 */

let gw: RunningGateway;
let client: OpenAI;
/** A paid account (credit, no free tokens: every request has a cost; the paid rate limits). */
let accountId: string;
let apiKey: string;

beforeAll(async () => {
  // The default paid limit (the test workers turn rate limits off unless a file sets them).
  process.env.RATE_LIMIT_RPM = '600';
  reloadConfig();
  gw = await startGateway({ tablePrefix: `openrouter-${process.pid}` });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  accountId = (await createAccount({ freeTokens: 0, creditNanoUsd: 50_000_000_000 })).accountId;
  apiKey = (await createKey(accountId, 'test')).key;
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(async () => {
  sim().reset();
  (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
  (await import('../../functions/shared/routing/target-speed')).resetSpeeds();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

/** OpenRouter's request fields, which the SDK's types lack (sent as given). */
type Routed = OpenAI.ChatCompletionCreateParamsNonStreaming & { provider?: Record<string, unknown>; models?: string[] };

const ask = (params: Partial<Routed>) =>
  client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }], ...params } as Routed).withResponse();

async function refusal(params: Partial<Routed>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await ask(params).catch((e: unknown) => e);
  if (!(err instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${JSON.stringify(err)}`);
  return err;
}

describe('model names', () => {
  it.each([
    ['openai/gpt-4o', 'gpt-4o', 'openai', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o', 'openai', 'gpt-4o'],
    ['anthropic/claude-3.5-sonnet', 'claude-3-5-sonnet', 'anthropic', 'claude-sonnet-4-6'],
    ['google/gemini-2.5-flash', 'gemini-2.5-flash', 'gemini', 'gemini-2.5-flash'],
    ['gpt-3.5-turbo', 'gpt-4o-mini', 'openai', 'gpt-4o-mini'],
    ['gpt-4-turbo', 'gpt-4o', 'openai', 'gpt-4o'],
  ])('%s is served by %s (x-modelmux-model says so) and the body echoes the name asked', async (name, served, provider, upstream) => {
    const { data, response } = await ask({ model: name });
    expect(response.headers.get('x-modelmux-model')).toBe(served);
    expect(response.headers.get('x-modelmux-provider')).toBe(provider);
    expect(data.model).toBe(name);
    expect(sim().requests.map((r) => r.model)).toEqual([upstream]);
  });

  it('GET /v1/models lists aliases on their model; GET /v1/models/{alias} answers the model', async () => {
    const list = (await client.models.list()).data as unknown as Array<{ id: string; aliases: Array<{ id: string; kind: string }> }>;
    const gpt4o = list.find((m) => m.id === 'gpt-4o');
    expect(gpt4o?.aliases).toEqual(
      expect.arrayContaining([
        { id: 'openai/gpt-4o', kind: 'slug' },
        { id: 'gpt-4o-2024-08-06', kind: 'dated' },
        { id: 'gpt-4', kind: 'deprecated' },
      ]),
    );
    expect(list.some((m) => m.id === 'openai/gpt-4o')).toBe(false);
    const one = await client.models.retrieve('anthropic/claude-3.5-sonnet');
    expect(one.id).toBe('claude-3-5-sonnet');
  });

  it('an alias works in `models` too, and an unknown name is still a 404', async () => {
    sim().setFault({ provider: 'openai', model: 'gpt-4o' }, { kind: 'status', status: 503 });
    const { response } = await ask({ models: ['meta-llama/llama-3-70b-instruct'] });
    expect(response.headers.get('x-modelmux-model')).toBe('llama-3-70b');
    const err = await refusal({ model: 'openai/gpt-9' });
    expect(err.status).toBe(404);
  });
});

describe('provider preferences', () => {
  it('order puts a provider first; ignore skips one; :floor and sort=price pick the cheapest', async () => {
    expect((await ask({ model: 'llama-3-70b' })).response.headers.get('x-modelmux-provider')).toBe('together');
    expect((await ask({ model: 'llama-3-70b', provider: { order: ['DeepInfra'] } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    expect((await ask({ model: 'llama-3-70b', provider: { ignore: ['together'] } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    const floor = await ask({ model: 'llama-3-70b:floor' });
    expect(floor.response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    expect(floor.data.model).toBe('llama-3-70b:floor');
    expect((await ask({ model: 'llama-3-70b', provider: { sort: 'price' } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    // Nothing of the preferences reaches an upstream.
    for (const r of sim().requests) expect(r.body).not.toHaveProperty('provider');
  });

  it(':nitro follows the measured throughput of this container', async () => {
    const { recordSpeed } = await import('../../functions/shared/routing/target-speed');
    recordSpeed('together:meta-llama/Llama-3.3-70B-Instruct-Turbo', 400, 100, 2_000); // 50 tokens/s
    recordSpeed('deepinfra:meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo', 300, 400, 2_000); // 200 tokens/s
    expect((await ask({ model: 'llama-3-70b:nitro' })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    expect((await ask({ model: 'llama-3-70b', provider: { sort: 'latency' } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
  });

  it('zdr and max_price filter targets; a data policy no target meets is a 404 naming it, never another model', async () => {
    expect((await ask({ model: 'llama-3-70b', provider: { zdr: true } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    expect((await ask({ model: 'llama-3-70b', provider: { max_price: { prompt: 0.5 } } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
    const denied = await refusal({ model: 'deepseek-v3', provider: { data_collection: 'deny' } });
    expect(denied.status).toBe(404);
    expect(denied.code).toBe('no_endpoints_found');
    expect(denied.message).toContain('data_collection');
    sim().reset();
    const only = await refusal({ model: 'gpt-4o', provider: { only: ['anthropic'] } });
    expect(only.status).toBe(404);
    expect(sim().requests).toHaveLength(0);
  });

  it('allow_fallbacks: false keeps to the ordered providers (no other provider, no equivalent model)', async () => {
    sim().setFault({ provider: 'together' }, { kind: 'status', status: 503 });
    const err = await refusal({ model: 'llama-3-70b', provider: { order: ['together'], allow_fallbacks: false } });
    expect(err.status).toBeGreaterThanOrEqual(500);
    expect(new Set(sim().requests.map((r) => r.provider))).toEqual(new Set(['together']));
    sim().reset();
    sim().setFault({ provider: 'together' }, { kind: 'status', status: 503 });
    expect((await ask({ model: 'llama-3-70b', provider: { order: ['together'] } })).response.headers.get('x-modelmux-provider')).toBe('deepinfra');
  });

  it('require_parameters drops targets that cannot honour a parameter; none left is a 404', async () => {
    const err = await refusal({ model: 'claude-3-5-sonnet', logprobs: true, provider: { require_parameters: true } });
    expect(err.status).toBe(404);
    expect(err.message).toContain('logprobs');
    expect(sim().requests).toHaveLength(0);
    // The client's own `models` may serve; a catalogue equivalent never stands in silently.
    const { response } = await ask({ model: 'claude-3-5-sonnet', logprobs: true, models: ['gpt-4o'], provider: { require_parameters: true } });
    expect(response.headers.get('x-modelmux-provider')).toBe('openai');
    expect(response.headers.get('x-modelmux-model')).toBe('gpt-4o');
  });

  it('an unknown provider or preference field is a 400', async () => {
    expect((await refusal({ provider: { order: ['nosuch'] } })).status).toBe(400);
    expect((await refusal({ provider: { quantizations: ['int4'] } })).status).toBe(400);
  });
});

describe("OpenAI's limits", () => {
  it("max_tokens above the model's output limit is lowered to it, with a header (opencode's and Claude Code's 32,000)", async () => {
    const { response } = await ask({ model: 'gpt-4o', max_tokens: 32_000 });
    expect(response.headers.get('x-modelmux-max-tokens-clamped')).toBe('32000->16384');
    expect((sim().requests.at(-1)?.body as { max_tokens?: number }).max_tokens).toBe(16_384);
    const { response: c } = await ask({ model: 'gpt-4o', max_completion_tokens: 1_000_000 } as Partial<Routed>);
    expect(c.headers.get('x-modelmux-max-tokens-clamped')).toBe('1000000->16384');
    expect((await refusal({ model: 'gpt-4o', max_tokens: -1 })).status).toBe(400);
    expect((await refusal({ model: 'gpt-4o', max_tokens: 1.5 })).status).toBe(400);
  });

  it('drops reasoning_effort on a model without reasoning, with a header, and keeps it where it reasons', async () => {
    const { response } = await ask({ model: 'gpt-4o', reasoning_effort: 'low' } as Partial<Routed>);
    expect(response.headers.get('x-modelmux-dropped-params')).toBe('reasoning_effort');
    const { response: o } = await ask({ model: 'o3-mini', reasoning_effort: 'low' } as Partial<Routed>);
    expect(o.headers.get('x-modelmux-dropped-params')).toBeNull();
    expect((sim().requests.at(-1)?.body as { reasoning_effort?: string }).reasoning_effort).toBe('low');
  });

  it('dimensions on text-embedding-ada-002 is a 400; on text-embedding-3-small it is honoured', async () => {
    const err = await client.embeddings.create({ model: 'text-embedding-ada-002', input: 'x', dimensions: 256 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ param: 'dimensions', code: 'unsupported_parameter' });
    const ok = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'x', dimensions: 256 }).withResponse();
    expect(ok.data.data[0]?.embedding).toHaveLength(256);
    expect(ok.response.headers.get('x-ratelimit-limit-requests')).toBe('600');
  });
});

describe('x-ratelimit-* on every answer', () => {
  it('buffered and streamed 200s carry the limit, what is left this minute, and the reset', async () => {
    const first = await ask({});
    const h = first.response.headers;
    expect(h.get('x-ratelimit-limit-requests')).toBe('600');
    const left = Number(h.get('x-ratelimit-remaining-requests'));
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left).toBeLessThan(600);
    expect(h.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?s$|^\d+ms$/);
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    for await (const _ of stream) void _;
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('600');
    const after = Number(response.headers.get('x-ratelimit-remaining-requests'));
    // The counter is the store's: one more request this minute (unless the minute turned).
    if (h.get('x-ratelimit-reset-requests') !== '0ms') expect(after === left - 1 || after === 599).toBe(true);
  });
});

describe('GET /v1/generation', () => {
  async function lookup(id: string, key = apiKey): Promise<{ status: number; body: { data?: Record<string, unknown>; error?: { code: string } } }> {
    const res = await fetch(`${gw.baseUrl}/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown> } };
  }

  it('agrees with the ledger to the nano-dollar, with the fallback path, timings and finish reason', async () => {
    sim().setFault({ provider: 'openai', model: 'gpt-4o' }, { kind: 'status', status: 503 });
    const { data, response } = await ask({ models: ['llama-3-70b'] });
    const requestId = response.headers.get('x-request-id') as string;
    const entry = (await pollLedgerEntry(accountId, requestId)) as Record<string, unknown>;
    const { status, body } = await lookup(data.id);
    expect(status).toBe(200);
    const g = body.data as Record<string, unknown>;
    expect(g).toMatchObject({
      id: requestId,
      model: 'gpt-4o',
      served_model: 'llama-3-70b',
      provider_name: 'together',
      upstream_model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
      tokens_prompt: entry.promptTokens,
      tokens_completion: entry.completionTokens,
      cost_nano_usd: entry.costNanoUsd,
      finish_reason: 'stop',
      status: 'complete',
    });
    expect(g.total_cost).toBe((data.usage as unknown as { cost: number }).cost);
    expect(g.cost_nano_usd).toBeGreaterThan(0);
    expect((g.fallback_path as Array<{ provider: string; outcome: string }>).map((a) => a.provider)).toEqual(['openai', 'openai', 'together']);
    expect(g.attempts).toBe(3);
    expect(g.time_to_first_token).toEqual(expect.any(Number));
    expect(g.latency as number).toBeGreaterThanOrEqual(g.time_to_first_token as number);
  });

  it('answers only the key that made the request (another key of the account gets 404)', async () => {
    const { response } = await ask({});
    const requestId = response.headers.get('x-request-id') as string;
    await pollLedgerEntry(accountId, requestId);
    const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
    const other = await createKey(accountId, 'other');
    expect((await lookup(requestId, other.key)).status).toBe(404);
    expect((await lookup(requestId)).status).toBe(200);
    expect((await lookup('req_0000000000000_0000000000000000')).status).toBe(404);
    expect((await lookup('')).status).toBe(400);
  });
});

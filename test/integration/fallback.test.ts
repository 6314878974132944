import OpenAI from 'openai';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import type { Fault } from '../../local/simulator';
import type { ProviderName } from '../../functions/shared/providers/manifest';
import { invocationLog } from '../support/invocations';
import { pollLedgerEntry } from '../support/ledger';

/**
 * Fault injection on the upstream simulator, through the whole gateway, for each fault streamed and
 * buffered: what the client gets, which upstream targets were called and how often, and the ledger
 * entry. Timeouts are shortened (UPSTREAM_TIMEOUTS_MS) so a hang or stall costs well under a second.
 *
 * Plans used: gpt-4o → openai:gpt-4o, then claude-3-5-sonnet (anthropic sonnet-4-6, sonnet-4-5),
 * then gemini-2.5-pro. One retry of the same target for retryable failures, none after timeouts.
 */

let gw: RunningGateway;
let client: OpenAI;
/** Raw response bodies seen by {@link client}, by x-request-id (what the SDK parses, byte for byte). */
const rawBodies = new Map<string, Promise<string>>();
/** The gateway's ended invocations: a test waits for its request's to end, not for a fixed time. */
const invocations = invocationLog();

/** Fetch that hands the SDK the response and keeps a copy of its bytes (observing, not changing them). */
const tappingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (res.body === null) return res;
  const [forSdk, copy] = res.body.tee();
  rawBodies.set(
    res.headers.get('x-request-id') ?? '',
    new Response(copy).text().catch(() => ''),
  );
  return new Response(forSdk, { status: res.status, statusText: res.statusText, headers: res.headers });
};

beforeAll(async () => {
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({
    stream: { connectMs: 1000, headersMs: 700, firstTokenMs: 700, idleMs: 500 },
    buffered: { connectMs: 1000, headersMs: 700, idleMs: 500 },
  });
  gw = await startGateway({
    tablePrefix: `fallback-${process.pid}`,
    devFreeTokens: 100_000_000,
    signalClientDisconnect: true,
    onInvocation: invocations.onInvocation,
  });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0, fetch: tappingFetch });
});

afterAll(async () => {
  await gw?.close();
});

beforeEach(async () => {
  sim().reset();
  sim().setChunkDelay(0);
  const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
  breaker.reset();
});

afterEach(() => {
  vi.restoreAllMocks();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

const calls = (provider: ProviderName) => sim().requests.filter((r) => r.provider === provider);
const ask = (tag: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content: `fault test ${tag}` }];

interface LedgerItem {
  servedModel: string;
  publicModel: string;
  provider: string;
  fallbackPath: string[];
  usageEstimated: boolean;
  status: string;
  promptTokens: number;
  completionTokens: number;
  inputPrice: number;
  outputPrice: number;
  costNanoUsd: number;
  freeTokensUsed: number;
}

/** The ledger entry of a request (written after the response; polled). */
async function ledger(requestId: string | null, accountId = gw.accountId): Promise<LedgerItem> {
  const item = await pollLedgerEntry(accountId, requestId);
  if (item === undefined) throw new Error(`no ledger entry for ${requestId}`);
  return item as unknown as LedgerItem;
}

/** How many ledger entries the dev account has. */
async function ledgerCount(): Promise<number> {
  const { documentClient } = await import('../../functions/shared/store/dynamo');
  const { tableNames } = await import('../../functions/shared/store/tables');
  const out = await documentClient().send(
    new QueryCommand({
      TableName: tableNames().ledger,
      KeyConditionExpression: 'accountId = :a',
      ExpressionAttributeValues: { ':a': gw.accountId },
      Select: 'COUNT',
    }),
  );
  return out.Count ?? 0;
}

async function buffered(model: string, tag: string, via: OpenAI = client, accountId = gw.accountId) {
  const { data, response } = await via.chat.completions.create({ model, messages: ask(tag) }).withResponse();
  return { data, headers: response.headers, entry: await ledger(response.headers.get('x-request-id'), accountId) };
}

async function streamed(model: string, tag: string, via: OpenAI = client, accountId = gw.accountId) {
  const { data: stream, response } = await via.chat.completions.create({ model, messages: ask(tag), stream: true }).withResponse();
  let text = '';
  let error: unknown;
  try {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  } catch (e) {
    error = e;
  }
  const requestId = response.headers.get('x-request-id');
  return { text, error, headers: response.headers, entry: await ledger(requestId, accountId), raw: (await rawBodies.get(requestId ?? '')) ?? '' };
}

/** The `data:` payloads of a raw SSE body, in order. */
const dataEvents = (raw: string) =>
  raw
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));

describe.each(['buffered', 'streamed'] as const)('%s: failures before the answer fall back to an equivalent', (mode) => {
  const run = (model: string, tag: string) => (mode === 'buffered' ? buffered(model, tag) : streamed(model, tag));

  async function expectServedBy(model: string, tag: string, servedModel: string, servedProvider: string) {
    const r = await run(model, tag);
    expect(r.headers.get('x-modelmux-model')).toBe(servedModel);
    expect(r.headers.get('x-modelmux-provider')).toBe(servedProvider);
    if ('text' in r) {
      expect(r.error).toBeUndefined();
      expect(r.text).toContain(`Echo: fault test ${tag}`);
    } else {
      expect(r.data.model).toBe(model);
      expect(r.data.choices[0]?.message.content).toContain(`Echo: fault test ${tag}`);
    }
    expect(r.entry).toMatchObject({ publicModel: model, servedModel, provider: servedProvider, usageEstimated: false, status: 'complete' });
    return r;
  }

  // `malformed` with chunks 0 cuts the first content event: before any token, streamed or buffered.
  const beforeAnswer: Array<[string, Fault, number]> = [
    ['HTTP 500', { kind: 'status', status: 500 }, 2],
    ['HTTP 408 (retried once, like the other retryable statuses)', { kind: 'status', status: 408 }, 2],
    ['connection reset before headers', { kind: 'reset-before-headers' }, 2],
    ['a hang before headers (timeout: no retry of the same target)', { kind: 'hang' }, 1],
    ['slow headers over the limit (timeout: no retry)', { kind: 'slow-headers', delayMs: 1_500 }, 1],
    ['a stall before the first token (timeout: no retry)', { kind: 'stall-after-chunks', chunks: 0 }, 1],
    ['malformed JSON before the first token', { kind: 'malformed', chunks: 0 }, 2],
  ];
  it.each(beforeAnswer)('%s on openai: served by claude-3-5-sonnet', async (_name, fault, openaiCalls) => {
    sim().setFault({ provider: 'openai' }, fault);
    const r = await expectServedBy('gpt-4o', `${fault.kind}-${mode}`, 'claude-3-5-sonnet', 'anthropic');
    expect(calls('openai')).toHaveLength(openaiCalls);
    expect(calls('anthropic')).toHaveLength(1);
    expect(r.headers.get('x-modelmux-attempts')).toBe(String(openaiCalls + 1));
    expect(r.entry.fallbackPath).toHaveLength(openaiCalls + 1);
    // Our timers abort the attempt: the upstream sees the connection closed, nothing left running.
    if (fault.kind === 'hang' || fault.kind === 'slow-headers' || fault.kind === 'stall-after-chunks') {
      expect(calls('openai')[0]?.aborted).toBe(true);
      expect(r.entry.fallbackPath[0]).toMatch(/:timeout$/);
    }
  });

  it('429 with retry-after: waits as told, retries once, then falls back', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterSeconds: 1 });
    await expectServedBy('gpt-4o', `429-${mode}`, 'claude-3-5-sonnet', 'anthropic');
    const [a, b] = calls('openai');
    expect(calls('openai')).toHaveLength(2);
    expect((b?.receivedAt ?? 0) - (a?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('429 with retry-after-ms: waits that many ms (not the 200-300 ms backoff), retries once, then falls back', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterMs: 600 });
    await expectServedBy('gpt-4o', `429ms-${mode}`, 'claude-3-5-sonnet', 'anthropic');
    const [a, b] = calls('openai');
    expect(calls('openai')).toHaveLength(2);
    const gap = (b?.receivedAt ?? 0) - (a?.receivedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(590);
    expect(gap).toBeLessThan(1_000);
  });

  it('429 with a retry-after over the cap (5 s): moves on to the equivalent at once', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterSeconds: 10 });
    await expectServedBy('gpt-4o', `429cap-${mode}`, 'claude-3-5-sonnet', 'anthropic');
    expect(calls('openai')).toHaveLength(1);
    expect((calls('anthropic')[0]?.receivedAt ?? 0) - (calls('openai')[0]?.receivedAt ?? 0)).toBeLessThan(500);
  });

  it('Anthropic 529 overloaded: the Claude target tried twice, then gpt-4o', async () => {
    sim().setFault({ provider: 'anthropic' }, { kind: 'status', status: 529 });
    await expectServedBy('claude-3-5-sonnet', `529-${mode}`, 'gpt-4o', 'openai');
    expect(calls('anthropic').map((c) => c.model)).toEqual(['claude-sonnet-4-6', 'claude-sonnet-4-6']);
    expect(calls('openai')).toHaveLength(1);
  });

  it('Gemini 503 UNAVAILABLE: retried once, then gpt-4o-mini', async () => {
    sim().setFault({ provider: 'gemini' }, { kind: 'status', status: 503 });
    await expectServedBy('gemini-2.0-flash', `503-${mode}`, 'gpt-4o-mini', 'openai');
    expect(calls('gemini')).toHaveLength(2);
  });

  it('slow headers within the limit: the primary still serves', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 200 });
    await expectServedBy('gpt-4o', `slow-${mode}`, 'gpt-4o', 'openai');
    expect(calls('anthropic')).toHaveLength(0);
  });

  it("Gemini API_KEY_INVALID is our misconfiguration, not the client's 400: falls back", async () => {
    sim().setFault({ provider: 'gemini' }, { kind: 'api-key-invalid' });
    await expectServedBy('gemini-2.0-flash', `badkey-${mode}`, 'gpt-4o-mini', 'openai');
    expect(calls('gemini')).toHaveLength(1);
  });

  it("a fallback answer is billed at the served model's own displayed price, not the requested one's", async () => {
    const { createAccount } = await import('../../functions/shared/accounts/account-store');
    const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
    const { CATALOGUE } = await import('../../functions/shared/catalogue/catalogue');
    const account = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    const paying = new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(account.accountId, 'paying')).key, maxRetries: 0 });
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 500 });
    const r =
      mode === 'buffered'
        ? await buffered('gpt-4o', `price-${mode}`, paying, account.accountId)
        : await streamed('gpt-4o', `price-${mode}`, paying, account.accountId);
    expect(r.entry).toMatchObject({ publicModel: 'gpt-4o', servedModel: 'claude-3-5-sonnet', provider: 'anthropic', freeTokensUsed: 0 });
    const served = CATALOGUE.get('claude-3-5-sonnet')?.targets[0];
    const requested = CATALOGUE.get('gpt-4o')?.targets[0];
    // Claude Sonnet 4.6: $3 / $15 per 1M tokens upstream, × 1.055 displayed, in µUSD per 1M tokens.
    expect(served?.displayedPrice).toMatchObject({ input: 3_165_000, output: 15_825_000 });
    expect(r.entry.inputPrice).toBe(served?.displayedPrice.input);
    expect(r.entry.outputPrice).toBe(served?.displayedPrice.output);
    expect(r.entry.inputPrice).not.toBe(requested?.displayedPrice.input);
    // tokens × µUSD/MTok = 1/1000 nano-USD, rounded up once per request.
    const thousandths = BigInt(r.entry.promptTokens) * 3_165_000n + BigInt(r.entry.completionTokens) * 15_825_000n;
    expect(r.entry.costNanoUsd).toBe(Number((thousandths + 999n) / 1000n));
    expect(r.entry.costNanoUsd).toBeGreaterThan(0);
  });

  it('answers 503 with a clear message when every target is down, with no silent success', async () => {
    for (const p of ['openai', 'anthropic', 'gemini'] as const) sim().setFault({ provider: p }, { kind: 'status', status: 503 });
    const err = await (
      mode === 'buffered'
        ? client.chat.completions.create({ model: 'gpt-4o', messages: ask('all-down') })
        : client.chat.completions.create({ model: 'gpt-4o', messages: ask('all-down'), stream: true })
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as Error).message).toMatch(/unavailable or overloaded/);
    // Every target of the plan, each tried twice (one retry), and nothing after.
    expect(sim().requests.map((q) => `${q.provider}/${q.model}`)).toEqual([
      'openai/gpt-4o',
      'openai/gpt-4o',
      'anthropic/claude-sonnet-4-6',
      'anthropic/claude-sonnet-4-6',
      'gemini/gemini-2.5-pro',
      'gemini/gemini-2.5-pro',
    ]);
    // Nothing answered, so nothing is billed.
    const requestId = (err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-request-id') ?? null;
    expect(requestId).toMatch(/^req_/);
    expect(await pollLedgerEntry(gw.accountId, requestId, 10)).toBeUndefined();
  });
});

describe('a keep-alive wait that never ends (DeepSeek under load, providers.md §4.5)', () => {
  it('buffered: blank lines after 200 headers do not count as the answer; past headersMs deepseek-v3 falls back to llama-3-70b', async () => {
    sim().setFault({ provider: 'deepseek' }, { kind: 'keep-alive', everyMs: 50 });
    const started = Date.now();
    const r = await buffered('deepseek-v3', 'keep-alive');
    expect(r.headers.get('x-modelmux-model')).toBe('llama-3-70b');
    expect(r.headers.get('x-modelmux-provider')).toBe('together');
    expect(calls('deepseek')).toHaveLength(1); // a timeout: no retry of the same target
    expect(calls('deepseek')[0]?.aborted).toBe(true);
    // A beat every 50 ms, yet the attempt did not outlive its 700 ms headers limit by much.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(r.entry).toMatchObject({ servedModel: 'llama-3-70b', status: 'complete', usageEstimated: false });
    expect(r.entry.fallbackPath).toEqual([expect.stringMatching(/^deepseek-v3@deepseek\/.*:timeout$/), expect.stringMatching(/^llama-3-70b@together\/.*:ok$/)]);
  });

  // The same beats as SSE comments, from the OpenAI host (every host's stream is read alike).
  it('streamed: `: keep-alive` comments are not a first token; past firstTokenMs gpt-4o falls back to claude-3-5-sonnet', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'keep-alive', everyMs: 50 });
    const started = Date.now();
    const r = await streamed('gpt-4o', 'keep-alive');
    expect(r.error).toBeUndefined();
    expect(r.text).toContain('Echo: fault test keep-alive');
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(calls('openai')).toHaveLength(1);
    expect(calls('openai')[0]?.aborted).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(r.entry).toMatchObject({ servedModel: 'claude-3-5-sonnet', status: 'complete', usageEstimated: false });
    expect(r.entry.fallbackPath[0]).toMatch(/^gpt-4o@openai\/gpt-4o:timeout$/);
  });
});

describe.each(['buffered', 'streamed'] as const)('%s: a prompt over the context window', (mode) => {
  it('goes only to a larger window: gpt-4o (128K) → claude-3-5-sonnet (200K), no retry of the small one', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'context-length', limit: 128_000, tokens: 150_000 });
    const r = mode === 'buffered' ? await buffered('gpt-4o', 'long') : await streamed('gpt-4o', 'long');
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(calls('openai')).toHaveLength(1);
    expect(r.entry).toMatchObject({ servedModel: 'claude-3-5-sonnet', status: 'complete' });
    expect(r.entry.fallbackPath[0]).toMatch(/^gpt-4o@openai\/gpt-4o:context-length$/);
  });

  it("over every window: OpenAI's 400 context_length_exceeded, nothing billed", async () => {
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      sim().setFault({ provider }, { kind: 'context-length', limit: 100_000, tokens: 2_000_000 });
    }
    const entriesBefore = await ledgerCount();
    const sent = Date.now();
    const err = await client.chat.completions
      .create({ model: 'gpt-4o', messages: ask(`too-long-${mode}`), stream: mode === 'streamed' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).type).toBe('invalid_request_error');
    expect(calls('openai')).toHaveLength(1);
    await invocations.endedSince(sent); // anything billed would be written by now
    expect(await ledgerCount()).toBe(entriesBefore);
  });
});

describe('streamed: a stall before the first token', () => {
  it('is given firstTokenMs (700), not the shorter idleMs (500), before the fallback', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'stall-after-chunks', chunks: 0 });
    const r = await streamed('gpt-4o', 'stall-first');
    expect(r.error).toBeUndefined();
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    const waited = (calls('anthropic')[0]?.receivedAt ?? 0) - (calls('openai')[0]?.receivedAt ?? 0);
    expect(waited).toBeGreaterThanOrEqual(650);
    expect(calls('openai')[0]?.aborted).toBe(true);
  });
});

describe('streamed: failures after the first token end the stream with an error event, and are billed', () => {
  it.each<[string, Fault]>([
    ['reset after 3 chunks', { kind: 'reset-after-chunks', chunks: 3 }],
    ['idle stall after 3 chunks', { kind: 'stall-after-chunks', chunks: 3 }],
    ['malformed event after the first chunk', { kind: 'malformed' }],
    ['upstream error event after 3 chunks', { kind: 'error-event-after-chunks', chunks: 3 }],
  ])('%s', async (_name, fault) => {
    sim().setFault({ provider: 'openai' }, fault);
    const r = await streamed('gpt-4o', `mid-${fault.kind}`);
    expect(r.text.length).toBeGreaterThan(0);
    expect(r.error).toBeInstanceOf(OpenAI.APIError);
    expect((r.error as Error).message).toMatch(/failed mid-stream/);
    expect(calls('anthropic')).toHaveLength(0);
    expect(calls('openai')).toHaveLength(1); // no retry once output has gone out
    if (fault.kind === 'stall-after-chunks') expect(calls('openai')[0]?.aborted).toBe(true);
    // On the wire: the error event is the last event, and no [DONE] follows half an answer.
    const events = dataEvents(r.raw);
    expect(events.length).toBeGreaterThan(1);
    expect(JSON.parse(events.at(-1) ?? '{}')).toMatchObject({ error: { message: expect.stringMatching(/failed mid-stream/) } });
    expect(r.raw).not.toContain('[DONE]');
    expect(r.entry).toMatchObject({ servedModel: 'gpt-4o', status: 'partial', usageEstimated: true });
    expect(r.entry.completionTokens).toBeGreaterThan(0);
    expect(r.entry.promptTokens).toBeGreaterThan(0);
  });

  it.each<[string, string, ProviderName, Fault]>([
    ['Anthropic: an overloaded `event: error` mid-stream', 'claude-3-5-sonnet', 'anthropic', { kind: 'error-event-after-chunks', chunks: 3 }],
    ['Gemini: an error event mid-stream', 'gemini-2.0-flash', 'gemini', { kind: 'error-event-after-chunks', chunks: 3 }],
    ['Gemini: a reset mid-stream', 'gemini-2.0-flash', 'gemini', { kind: 'reset-after-chunks', chunks: 2 }],
  ])('%s', async (_name, model, provider, fault) => {
    sim().setFault({ provider }, fault);
    const r = await streamed(model, `mid-${provider}-${fault.kind}`);
    expect(r.text).toContain('Echo:');
    expect(r.error).toBeInstanceOf(OpenAI.APIError);
    expect((r.error as Error).message).toMatch(/failed mid-stream/);
    expect(calls(provider)).toHaveLength(1);
    expect(sim().requests).toHaveLength(1); // no fallback after the first token
    expect(r.raw).not.toContain('[DONE]');
    expect(JSON.parse(dataEvents(r.raw).at(-1) ?? '{}')).toHaveProperty('error');
    expect(r.entry).toMatchObject({ publicModel: model, servedModel: model, provider, status: 'partial' });
    expect(r.entry.completionTokens).toBeGreaterThan(0);
  });

  it('the same faults at chunk 0 happen before the first token, so they fall back', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'error-event-after-chunks', chunks: 0 }, { times: 1 });
    sim().setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 0 }, { times: 1 });
    const r = await streamed('gpt-4o', 'chunk0');
    expect(r.error).toBeUndefined();
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(r.entry.fallbackPath.map((p) => p.split(':').pop())).toEqual(['server', 'connection', 'ok']);
  });
});

describe('buffered: failures mid-body are retried and fall back', () => {
  it.each<[string, Fault, number]>([
    ['reset mid-body', { kind: 'reset-after-chunks', chunks: 3 }, 2],
    ['stall mid-body (idle timeout: no retry)', { kind: 'stall-after-chunks', chunks: 3 }, 1],
    ['error status for an error event', { kind: 'error-event-after-chunks', chunks: 3 }, 2],
  ])('%s', async (_name, fault, openaiCalls) => {
    sim().setFault({ provider: 'openai' }, fault);
    const r = await buffered('gpt-4o', `body-${fault.kind}`);
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(calls('openai')).toHaveLength(openaiCalls);
    expect(r.entry).toMatchObject({ servedModel: 'claude-3-5-sonnet', status: 'complete', usageEstimated: false });
  });
});

describe('circuit breaker', () => {
  it('skips a dead target after 3 consecutive failures, so later requests do not wait on it', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'reset-before-headers' });
    await buffered('gpt-4o', 'breaker-1'); // openai fails twice
    await buffered('gpt-4o', 'breaker-2'); // third failure opens the breaker
    const before = calls('openai').length;
    expect(before).toBeGreaterThanOrEqual(3);
    const r = await buffered('gpt-4o', 'breaker-3');
    expect(calls('openai')).toHaveLength(before);
    expect(r.headers.get('x-modelmux-attempts')).toBe('1');
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
  });

  it('counts streams a target breaks off after the first token: 3 in a row and it is skipped', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 3 });
    for (let i = 0; i < 3; i++) {
      const r = await streamed('gpt-4o', `mid-breaker-${i}`);
      expect(r.headers.get('x-modelmux-model')).toBe('gpt-4o');
      expect(r.error).toBeInstanceOf(OpenAI.APIError);
    }
    expect(calls('openai')).toHaveLength(3);
    const r = await streamed('gpt-4o', 'mid-breaker-open');
    expect(r.error).toBeUndefined();
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(r.headers.get('x-modelmux-attempts')).toBe('1');
    expect(calls('openai')).toHaveLength(3);
  });
});

describe('our misconfiguration is logged at error level, and falls back', () => {
  it.each<[string, Fault]>([
    ['401: our key refused', { kind: 'api-key-invalid' }],
    ['403: our account not allowed', { kind: 'status', status: 403 }],
  ])('%s', async (_name, fault) => {
    const { logger } = await import('../../functions/shared/observability/logger');
    const error = vi.spyOn(logger, 'error');
    sim().setFault({ provider: 'openai' }, fault);
    const r = await buffered('gpt-4o', `misconfig-${fault.kind}`);
    expect(r.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    expect(calls('openai')).toHaveLength(1); // not retried: retrying cannot fix our key
    expect(error).toHaveBeenCalledWith(
      'upstream rejected our credentials; check the provider key',
      expect.objectContaining({ requestId: r.headers.get('x-request-id'), target: 'openai:gpt-4o', kind: 'auth-config' }),
    );
  });
});

describe('client aborts', () => {
  it('a client that disconnects mid-stream aborts the upstream request, and what was produced is billed', async () => {
    sim().setChunkDelay(60);
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: ask('abort'), stream: true }, { signal: controller.signal });
    let chunks = 0;
    const requestId = await (async () => {
      try {
        for await (const chunk of stream) {
          if (++chunks === 3) {
            controller.abort();
            return chunk.id.replace(/^chatcmpl-/, '');
          }
        }
      } catch {
        /* the SDK reports the abort */
      }
      return undefined;
    })();
    expect(requestId).toBeDefined();
    await expect.poll(() => calls('openai')[0]?.aborted, { timeout: 1_000, interval: 20 }).toBe(true);
    expect(calls('openai')[0]?.completed).toBe(false);
    const entry = await ledger(requestId ?? null);
    expect(entry).toMatchObject({ servedModel: 'gpt-4o', status: 'aborted', usageEstimated: true });
    expect(entry.completionTokens).toBeGreaterThan(0);
  });

  it.each(['buffered', 'streamed'] as const)(
    '%s: a client that leaves before the first byte stops the upstream at once; nothing is billed, nothing crashes',
    async (mode) => {
      sim().setFault({ provider: 'openai' }, { kind: 'hang' });
      const entriesBefore = await ledgerCount();
      const controller = new AbortController();
      const sent = Date.now();
      setTimeout(() => controller.abort(), 200);
      const err = await client.chat.completions
        .create({ model: 'gpt-4o', messages: ask(`leave-early-${mode}`), stream: mode === 'streamed' }, { signal: controller.signal })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIUserAbortError);
      await vi.waitFor(() => expect(calls('openai')[0]?.aborted).toBe(true), { timeout: 500, interval: 5 });
      const abortedAt = Date.now();
      expect(calls('openai')).toHaveLength(1);
      expect(calls('openai')[0]?.aborted).toBe(true);
      // Stopped by the client leaving (~200 ms in), not by the 700 ms headers timeout; and the router
      // did not go on to the equivalent for nobody.
      expect(abortedAt - (calls('openai')[0]?.receivedAt ?? 0)).toBeLessThan(550);
      await invocations.endedSince(sent); // the router has stopped: nothing more can be called or billed
      expect(calls('anthropic')).toHaveLength(0);
      expect(await ledgerCount()).toBe(entriesBefore);
      // The gateway is still up.
      sim().clearFaults();
      expect((await buffered('gpt-4o', `after-leave-${mode}`)).headers.get('x-modelmux-model')).toBe('gpt-4o');
    },
  );

  it("an upstream 400 about the request is the client's: returned at once, without retry or fallback", async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 400 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: ask('client-400') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(calls('openai')).toHaveLength(1);
    expect(calls('anthropic')).toHaveLength(0);
  });
});

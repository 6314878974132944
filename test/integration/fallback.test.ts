import OpenAI from 'openai';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import type { Fault, SimProvider } from '../../local/simulator';

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

beforeAll(async () => {
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({
    stream: { connectMs: 1000, headersMs: 700, firstTokenMs: 700, idleMs: 500 },
    buffered: { connectMs: 1000, headersMs: 700, idleMs: 500 },
  });
  gw = await startGateway({ tablePrefix: `fallback-${process.pid}`, devFreeTokens: 100_000_000, signalClientDisconnect: true });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
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

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

const calls = (provider: SimProvider) => sim().requests.filter((r) => r.provider === provider);
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
}

/** The ledger entry of a request (written after the response; polled). */
async function ledger(requestId: string | null): Promise<LedgerItem> {
  const { documentClient } = await import('../../functions/shared/store/dynamo');
  const { tableNames } = await import('../../functions/shared/store/tables');
  for (let i = 0; i < 100; i++) {
    const out = await documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId: gw.accountId, requestId } }));
    if (out.Item) return out.Item as LedgerItem;
    await new Promise((r) => setTimeout(r, 30));
  }
  throw new Error(`no ledger entry for ${requestId}`);
}

async function buffered(model: string, tag: string) {
  const { data, response } = await client.chat.completions.create({ model, messages: ask(tag) }).withResponse();
  return { data, headers: response.headers, entry: await ledger(response.headers.get('x-request-id')) };
}

async function streamed(model: string, tag: string) {
  const { data: stream, response } = await client.chat.completions.create({ model, messages: ask(tag), stream: true }).withResponse();
  let text = '';
  let error: unknown;
  try {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  } catch (e) {
    error = e;
  }
  return { text, error, headers: response.headers, entry: await ledger(response.headers.get('x-request-id')) };
}

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

  it.each<[string, Fault, number]>([
    ['HTTP 500', { kind: 'status', status: 500 }, 2],
    ['connection reset before headers', { kind: 'reset-before-headers' }, 2],
    ['a hang before headers (timeout: no retry of the same target)', { kind: 'hang' }, 1],
    ['malformed JSON', { kind: 'malformed' }, mode === 'buffered' ? 2 : 1],
  ])('%s on openai: served by claude-3-5-sonnet', async (_name, fault, openaiCalls) => {
    if (mode === 'streamed' && fault.kind === 'malformed') return; // streamed malformed is mid-stream: below
    sim().setFault({ provider: 'openai' }, fault);
    const r = await expectServedBy('gpt-4o', `${fault.kind}-${mode}`, 'claude-3-5-sonnet', 'anthropic');
    expect(calls('openai')).toHaveLength(openaiCalls);
    expect(calls('anthropic')).toHaveLength(1);
    expect(r.headers.get('x-modelmux-attempts')).toBe(String(openaiCalls + 1));
    expect(r.entry.fallbackPath).toHaveLength(openaiCalls + 1);
    if (fault.kind === 'hang') expect(calls('openai')[0]?.aborted).toBe(true);
  });

  it('429 with retry-after: waits as told, retries once, then falls back', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterSeconds: 1 });
    await expectServedBy('gpt-4o', `429-${mode}`, 'claude-3-5-sonnet', 'anthropic');
    const [a, b] = calls('openai');
    expect(calls('openai')).toHaveLength(2);
    expect((b?.receivedAt ?? 0) - (a?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('Anthropic 529 overloaded: both Claude targets tried twice, then gpt-4o', async () => {
    sim().setFault({ provider: 'anthropic' }, { kind: 'status', status: 529 });
    await expectServedBy('claude-3-5-sonnet', `529-${mode}`, 'gpt-4o', 'openai');
    expect(calls('anthropic').map((c) => c.model)).toEqual(['claude-sonnet-4-6', 'claude-sonnet-4-6', 'claude-sonnet-4-5', 'claude-sonnet-4-5']);
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

  it('Gemini API_KEY_INVALID is our misconfiguration, not the client\'s 400: falls back', async () => {
    sim().setFault({ provider: 'gemini' }, { kind: 'api-key-invalid' });
    await expectServedBy('gemini-2.0-flash', `badkey-${mode}`, 'gpt-4o-mini', 'openai');
    expect(calls('gemini')).toHaveLength(1);
  });

  it('answers 503 with a clear message when every target is down, with no silent success', async () => {
    for (const p of ['openai', 'anthropic', 'gemini'] as const) sim().setFault({ provider: p }, { kind: 'status', status: 503 });
    const err = await (mode === 'buffered'
      ? client.chat.completions.create({ model: 'gpt-4o', messages: ask('all-down') })
      : client.chat.completions.create({ model: 'gpt-4o', messages: ask('all-down'), stream: true })
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as Error).message).toMatch(/unavailable or overloaded/);
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
    expect(r.entry).toMatchObject({ servedModel: 'gpt-4o', status: 'partial', usageEstimated: true });
    expect(r.entry.completionTokens).toBeGreaterThan(0);
    expect(r.entry.promptTokens).toBeGreaterThan(0);
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
});

describe('client aborts', () => {
  it('a client that disconnects mid-stream aborts the upstream request, and what was produced is billed', async () => {
    sim().setChunkDelay(60);
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o', messages: ask('abort'), stream: true },
      { signal: controller.signal },
    );
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
    for (let i = 0; i < 50 && !calls('openai')[0]?.aborted; i++) await new Promise((r) => setTimeout(r, 20));
    expect(calls('openai')[0]?.aborted).toBe(true);
    expect(calls('openai')[0]?.completed).toBe(false);
    const entry = await ledger(requestId ?? null);
    expect(entry).toMatchObject({ servedModel: 'gpt-4o', status: 'aborted', usageEstimated: true });
    expect(entry.completionTokens).toBeGreaterThan(0);
  });

  it('an upstream 400 about the request is the client\'s: returned at once, without retry or fallback', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 400 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: ask('client-400') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(calls('openai')).toHaveLength(1);
    expect(calls('anthropic')).toHaveLength(0);
  });
});

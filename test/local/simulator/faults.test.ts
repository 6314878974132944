/**
 * Every fault kind, observed with plain fetch and a real SSE parser: what the gateway's fallback
 * logic will see on the wire, and what the request log records.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../../../local/simulator/index.js';
import type { ProviderName } from '../../../functions/shared/providers/manifest.js';
import { jsonOf, readRawFor, readSse, readUntilThenListen } from './sse-reader.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => {
  sim.reset();
  sim.setChunkDelay(0);
});
afterAll(() => sim.close());

const PROMPT = 'Hello simulator, how are you today?';

/** A request in each provider's own dialect. */
function request(provider: ProviderName, opts: { stream?: boolean; model?: string; signal?: AbortSignal } = {}): Promise<Response> {
  const stream = opts.stream ?? false;
  if (provider === 'anthropic') {
    return fetch(`${sim.urls.anthropic}/v1/messages`, {
      method: 'POST',
      signal: opts.signal,
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: opts.model ?? 'claude-haiku-4-5', max_tokens: 100, stream, messages: [{ role: 'user', content: PROMPT }] }),
    });
  }
  if (provider === 'gemini') {
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return fetch(`${sim.urls.gemini}/models/${opts.model ?? 'gemini-2.5-flash-lite'}:${method}`, {
      method: 'POST',
      signal: opts.signal,
      headers: { 'x-goog-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: PROMPT }] }] }),
    });
  }
  return fetch(`${sim.urls[provider]}/chat/completions`, {
    method: 'POST',
    signal: opts.signal,
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: JSON.stringify({ model: opts.model ?? 'm', stream, messages: [{ role: 'user', content: PROMPT }] }),
  });
}

/** Events that carry generated text, in any of the three dialects. */
function isContent(data: unknown): boolean {
  const d = data as { choices?: { delta?: { content?: string } }[]; delta?: { type?: string }; candidates?: unknown[] } | undefined;
  return Boolean(d?.choices?.[0]?.delta?.content || d?.delta?.type === 'text_delta' || d?.candidates);
}

describe('status faults', () => {
  it('renders 429 in the OpenAI shape with retry-after and retry-after-ms headers', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterSeconds: 2, retryAfterMs: 1500 });
    const res = await request('openai');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('retry-after-ms')).toBe('1500');
    expect(await res.json()).toEqual({ error: { message: expect.any(String), type: 'requests', param: null, code: 'rate_limit_exceeded' } });
    expect(sim.requests[0]?.fault).toBe('status:429');
  });

  it('renders 529 as Anthropic overloaded_error and 503 as Gemini UNAVAILABLE', async () => {
    sim.setFault({ provider: 'anthropic' }, { kind: 'status', status: 529 });
    sim.setFault({ provider: 'gemini' }, { kind: 'status', status: 503 });
    const a = await request('anthropic');
    expect(a.status).toBe(529);
    expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: expect.any(String) });
    const g = await request('gemini', { stream: true });
    expect(g.status).toBe(503);
    expect(g.headers.get('content-type')).toContain('application/json');
    expect(await g.json()).toEqual({ error: { code: 503, status: 'UNAVAILABLE', message: expect.any(String) } });
  });

  it('renders a Gemini 429 with RetryInfo, and a MiniMax 429 as HTTP 200 with base_resp 1002', async () => {
    sim.setFault({ provider: 'gemini' }, { kind: 'status', status: 429, retryAfterSeconds: 3 });
    sim.setFault({ provider: 'minimax' }, { kind: 'status', status: 429 });
    const g = await request('gemini');
    expect(g.headers.get('retry-after')).toBe('3');
    expect(await g.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ retryDelay: '3s' }] } });
    const m = await request('minimax', { stream: true });
    expect(m.status).toBe(200);
    expect(await m.json()).toMatchObject({ choices: null, base_resp: { status_code: 1002 } });
  });

  it('applies only to matching provider/model and only `times` times', async () => {
    sim.setFault({ provider: 'together', model: 'flaky' }, { kind: 'status', status: 500 }, { times: 2 });
    expect((await request('together', { model: 'steady' })).status).toBe(200);
    expect((await request('deepinfra', { model: 'flaky' })).status).toBe(200);
    expect((await request('together', { model: 'flaky' })).status).toBe(500);
    expect((await request('together', { model: 'flaky' })).status).toBe(500);
    expect((await request('together', { model: 'flaky' })).status).toBe(200);
  });
});

describe('connection faults', () => {
  it('hang: no headers until the client aborts, and the log records the abort', async () => {
    sim.setFault({}, { kind: 'hang' });
    const controller = new AbortController();
    const pending = request('openai', { signal: controller.signal });
    await vi.waitFor(() => expect(sim.requests).toHaveLength(1));
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toThrow();
    await vi.waitFor(() => expect(sim.requests[0]).toMatchObject({ aborted: true, completed: false, fault: 'hang' }));
  });

  it('slow-headers: delays the headers, then replies normally', async () => {
    sim.setFault({ provider: 'deepinfra' }, { kind: 'slow-headers', delayMs: 150 });
    const started = Date.now();
    const res = await request('deepinfra');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ object: 'chat.completion' });
  });

  it('reset-before-headers: fetch rejects; the reset is not recorded as a client abort', async () => {
    sim.setFault({ provider: 'deepinfra' }, { kind: 'reset-before-headers' });
    await expect(request('deepinfra')).rejects.toThrow();
    expect(sim.requests[0]).toMatchObject({ aborted: false, completed: false, fault: 'reset-before-headers' });
  });

  it('reset-after-chunks: K content events arrive, then reading the body fails', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 3 });
    const res = await request('openai', { stream: true });
    expect(res.status).toBe(200);
    const read = await readSse(res);
    expect(read.error).toBeDefined();
    expect(read.events.map(jsonOf).filter(isContent)).toHaveLength(3);
    expect(read.events.some((e) => e.data === '[DONE]')).toBe(false);
  });

  it('stall-after-chunks: K content events, then silence with the socket open, until the client aborts', async () => {
    sim.setFault({ provider: 'anthropic' }, { kind: 'stall-after-chunks', chunks: 2 });
    const controller = new AbortController();
    const res = await request('anthropic', { stream: true, signal: controller.signal });
    const { events, bytesAfter } = await readUntilThenListen(res, (ev) => ev.map(jsonOf).filter(isContent).length >= 2, 250);
    expect(bytesAfter).toBe(0);
    expect(events.map((e) => e.event)).toContain('message_start');
    controller.abort();
    await vi.waitFor(() => expect(sim.requests[0]).toMatchObject({ aborted: true, completed: false }));
  });

  it('stall on a buffered request: headers and half a body, then silence', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'stall-after-chunks', chunks: 0 });
    const controller = new AbortController();
    const res = await request('openai', { signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^\{"id":"chatcmpl-/);
    controller.abort();
    await vi.waitFor(() => expect(sim.requests[0]?.aborted).toBe(true));
  });
});

describe('malformed and mid-stream error faults', () => {
  it('malformed buffered: 200 with a body that is not valid JSON', async () => {
    sim.setFault({ provider: 'gemini' }, { kind: 'malformed' });
    const res = await request('gemini');
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
  });

  it('malformed stream: after the first content event, an event whose JSON is invalid', async () => {
    sim.setFault({ provider: 'deepseek' }, { kind: 'malformed' });
    const read = await readSse(await request('deepseek', { stream: true }));
    const parsed = read.events.map(jsonOf);
    expect(parsed.filter(isContent)).toHaveLength(1);
    expect(parsed[parsed.length - 1]).toBeUndefined();
    expect(read.events[read.events.length - 1]?.data).toMatch(/^\{/);
  });

  it('malformed with chunks: 0 cuts the FIRST content event: preamble events go out whole, no content parses', async () => {
    sim.setFault({}, { kind: 'malformed', chunks: 0 });
    const openai = (await readSse(await request('openai', { stream: true }))).events;
    expect(openai).toHaveLength(2);
    expect(jsonOf(openai[0]!)).toMatchObject({ object: 'chat.completion.chunk', choices: [{ delta: { role: 'assistant', content: '' } }] });
    expect(jsonOf(openai[1]!)).toBeUndefined();
    expect(openai[1]?.data).toMatch(/^\{"id":"chatcmpl-/);

    const anthropic = (await readSse(await request('anthropic', { stream: true }))).events;
    expect(anthropic.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta']);
    expect(jsonOf(anthropic[3]!)).toBeUndefined();

    // Every Gemini chunk is a candidate chunk: the first one is the cut one.
    const gemini = (await readSse(await request('gemini', { stream: true }))).events;
    expect(gemini).toHaveLength(1);
    expect(jsonOf(gemini[0]!)).toBeUndefined();
    expect(sim.requests.map((r) => r.fault)).toEqual(['malformed:0', 'malformed:0', 'malformed:0']);
  });

  it('malformed with chunks: K sends K good content events before the cut one', async () => {
    sim.setFault({ provider: 'deepinfra' }, { kind: 'malformed', chunks: 3 });
    const parsed = (await readSse(await request('deepinfra', { stream: true }))).events.map(jsonOf);
    expect(parsed.filter(isContent)).toHaveLength(3);
    expect(parsed.at(-1)).toBeUndefined();
  });

  it('error-event-after-chunks speaks each dialect', async () => {
    sim.setFault({}, { kind: 'error-event-after-chunks', chunks: 2 });
    const openai = (await readSse(await request('openai', { stream: true }))).events;
    expect(jsonOf(openai[openai.length - 1]!)).toEqual({ error: { message: expect.any(String), type: 'server_error', param: null, code: null } });
    expect(openai.map(jsonOf).filter(isContent)).toHaveLength(2);

    const anthropic = (await readSse(await request('anthropic', { stream: true }))).events;
    expect(anthropic[anthropic.length - 1]).toMatchObject({ event: 'error' });
    expect(jsonOf(anthropic[anthropic.length - 1]!)).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });

    const gemini = (await readSse(await request('gemini', { stream: true }))).events;
    expect(jsonOf(gemini[gemini.length - 1]!)).toEqual({ error: { code: 503, status: 'UNAVAILABLE', message: expect.any(String) } });

    // A buffered request cannot carry an event: it fails up front with the provider's overload status.
    expect((await request('anthropic')).status).toBe(529);
  });

  it('api-key-invalid: Gemini 400 API_KEY_INVALID, others 401', async () => {
    sim.setFault({}, { kind: 'api-key-invalid' });
    const g = await request('gemini');
    expect(g.status).toBe(400);
    expect(await g.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', details: [{ reason: 'API_KEY_INVALID' }] } });
    const a = await request('anthropic');
    expect(a.status).toBe(401);
    expect(await a.json()).toMatchObject({ error: { type: 'authentication_error' } });
    expect((await request('together')).status).toBe(401);
  });
});

describe("context-length fault: each provider's own 400 for a prompt over the window", () => {
  const openAIWords =
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 150000 tokens. Please reduce the length of the messages.";

  it('OpenAI-shaped hosts: context_length_exceeded on messages; DeepSeek and MiniMax in their own shapes', async () => {
    sim.setFault({}, { kind: 'context-length', limit: 128_000, tokens: 150_000 });
    const openAIError = { error: { message: openAIWords, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } };
    for (const p of ['openai', 'together', 'deepinfra'] as const) {
      const res = await request(p, { stream: true });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(openAIError);
    }
    const deepseek = await request('deepseek');
    expect(deepseek.status).toBe(400);
    expect(await deepseek.json()).toEqual({
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, you requested 150000 tokens (150000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    });
    const minimax = await request('minimax');
    expect(minimax.status).toBe(400);
    expect(await minimax.json()).toEqual({ ...openAIError, base_resp: { status_code: 2013, status_msg: openAIWords } });
    expect(new Set(sim.requests.map((r) => r.fault))).toEqual(new Set(['context-length']));
  });

  it('Anthropic: 400 invalid_request_error "prompt is too long"; Gemini: 400 INVALID_ARGUMENT; by default each names its usual window', async () => {
    sim.setFault({}, { kind: 'context-length' });
    const a = await request('anthropic', { stream: true });
    expect(a.status).toBe(400);
    expect(a.headers.get('content-type')).toContain('application/json');
    expect(await a.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 200001 tokens > 200000 maximum' },
      request_id: a.headers.get('request-id'),
    });
    const g = await request('gemini', { stream: true });
    expect(g.status).toBe(400);
    expect(await g.json()).toEqual({
      error: { code: 400, status: 'INVALID_ARGUMENT', message: 'The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).' },
    });
    expect((await (await request('openai')).json()) as unknown).toMatchObject({
      error: { message: expect.stringMatching(/^This model's maximum context length is 128000 tokens\. However, your messages resulted in 128001 tokens\./) },
    });
  });
});

describe('keep-alive fault: headers, then only keep-alives, never an answer', () => {
  it('stream: `: keep-alive` comments every everyMs until the client leaves, which the log records', async () => {
    sim.setFault({ provider: 'deepseek' }, { kind: 'keep-alive', everyMs: 20 });
    const res = await request('deepseek', { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await readRawFor(res, 200);
    expect(text).toMatch(/^(: keep-alive\n\n)+$/);
    expect(text.split('\n\n').length - 1).toBeGreaterThanOrEqual(4);
    await vi.waitFor(() => expect(sim.requests[0]).toMatchObject({ aborted: true, completed: false, fault: 'keep-alive:20' }));
  });

  it('buffered: blank lines (legal before a JSON text) every everyMs, never a body, on any provider', async () => {
    sim.setFault({ provider: 'gemini' }, { kind: 'keep-alive', everyMs: 20 });
    const res = await request('gemini');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await readRawFor(res, 200);
    expect(text).toMatch(/^\n{4,}$/);
    await vi.waitFor(() => expect(sim.requests[0]).toMatchObject({ aborted: true, completed: false }));
  });
});

describe('pacing', () => {
  it('spaces streamed events by chunkDelayMs', async () => {
    sim.setChunkDelay(15);
    const started = Date.now();
    const read = await readSse(await request('deepinfra', { stream: true }));
    expect(read.events.length).toBeGreaterThan(8);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15 * (read.events.length - 1) - 5);
  });

  it('a paced fault gives the matching request its own rhythm and length, and leaves the others alone', async () => {
    sim.setFault({ provider: 'openai', model: 'slow' }, { kind: 'paced', everyMs: 30, words: 24 });
    const started = Date.now();
    const [slow, fast] = await Promise.all([
      readSse(await request('openai', { stream: true, model: 'slow' })).then((r) => ({ r, ms: Date.now() - started })),
      readSse(await request('openai', { stream: true, model: 'fast' })).then((r) => ({ r, ms: Date.now() - started })),
    ]);
    const text = (r: Awaited<ReturnType<typeof readSse>>) =>
      r.events
        .map((e) => jsonOf(e) as { choices?: { delta?: { content?: string } }[] })
        .map((d) => d?.choices?.[0]?.delta?.content ?? '')
        .join('');
    expect(text(slow.r).split(' ')).toHaveLength(24);
    expect(text(fast.r).split(' ')).toHaveLength(12);
    expect(slow.ms).toBeGreaterThanOrEqual(30 * (slow.r.events.length - 1) - 5);
    expect(fast.ms).toBeLessThan(slow.ms);
    expect(sim.requests.find((q) => q.model === 'slow')?.fault).toBe('paced:30x24');
  });

  it('a paced buffered request answers after as long as its stream would take', async () => {
    sim.setFault({ provider: 'anthropic' }, { kind: 'paced', everyMs: 20, words: 15 });
    const started = Date.now();
    const res = await request('anthropic');
    const body = (await res.json()) as { content: Array<{ text: string }> };
    expect(Date.now() - started).toBeGreaterThanOrEqual(20 * 10 - 5);
    expect(body.content[0]?.text.split(' ')).toHaveLength(15);
  });
});

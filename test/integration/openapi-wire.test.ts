import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { responseEventSchema, schemaErrors } from '../support/openapi/validator';

/**
 * Wire exactness: what modelmux really sends, byte for byte off the wire (raw HTTP, no SDK in
 * between), validated against OpenAI's published OpenAPI description (vendored, see
 * test/fixtures/openai/openapi/README.md) — for every provider family behind the gateway (OpenAI,
 * Anthropic, Gemini, DeepSeek chat and reasoner, MiniMax, the Llama hosts, the o-series): chat
 * completions, their chunks, embeddings, the model list and a model, error bodies of each status,
 * and the Responses API's objects and events. Extensions (`reasoning_content`, `extra_content`,
 * `usage.cost`, the models' pricing) are properties the description leaves open; nothing may be null
 * where it allows only a value or absence, and every required field must be there.
 */

let gw: RunningGateway;

beforeAll(async () => {
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({
    stream: { connectMs: 1000, headersMs: 700, firstTokenMs: 700, idleMs: 500 },
    buffered: { connectMs: 1000, headersMs: 700, idleMs: 500 },
  });
  gw = await startGateway({ tablePrefix: `wire-${process.pid}`, devFreeTokens: 100_000_000 });
});

afterAll(async () => {
  await gw?.close();
  delete process.env.UPSTREAM_TIMEOUTS_MS;
});

beforeEach(async () => {
  gw.simulator?.reset();
  const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
  breaker.reset();
});

/** One provider family per model (the catalogue's first target of each). */
const FAMILIES = [
  'gpt-4o',
  'o3-mini',
  'claude-3-5-sonnet',
  'gemini-2.0-flash',
  'gemini-2.5-pro',
  'deepseek-v3',
  'deepseek-r1',
  'minimax',
  'llama-3-70b',
  'llama-3-8b',
];

const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

async function call(method: string, path: string, body?: unknown, key: string | null = gw.apiKey): Promise<{ status: number; text: string; type: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(gw.baseUrl + path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
}

/** The data payloads of an SSE body, parsed (with their `event:` name when there is one). */
function sseEvents(text: string): Array<{ event: string | undefined; data: string }> {
  const out: Array<{ event: string | undefined; data: string }> = [];
  const parser = createParser({ onEvent: (e) => out.push({ event: e.event, data: e.data }) });
  parser.feed(text);
  return out;
}

function valid(schema: string, value: unknown, what: string): void {
  expect(schemaErrors(schema, value), `${what}: ${JSON.stringify(value).slice(0, 400)}`).toEqual([]);
}

/** A Responses event against its own branch of `ResponseStreamEvent`, and against the union. */
function validEvent(event: { type: string }, what: string): void {
  valid(responseEventSchema(event.type), event, what);
  valid('ResponseStreamEvent', event, what);
}

describe('the checks themselves', () => {
  it("refuse what OpenAI's description refuses: a null system_fingerprint, a missing logprobs, an event without sequence_number", () => {
    const completion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
    expect(schemaErrors('CreateChatCompletionResponse', completion)).toEqual([]);
    expect(schemaErrors('CreateChatCompletionResponse', { ...completion, system_fingerprint: null })).toEqual([
      '/system_fingerprint must be string {"type":"string"}',
    ]);
    expect(
      schemaErrors('CreateChatCompletionResponse', { ...completion, choices: [{ index: 0, message: completion.choices[0]?.message, finish_reason: 'stop' }] }),
    ).not.toEqual([]);
    const delta = { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'a', logprobs: [], sequence_number: 3 };
    expect(schemaErrors(responseEventSchema(delta.type), delta)).toEqual([]);
    const { sequence_number: _dropped, ...unnumbered } = delta;
    expect(schemaErrors(responseEventSchema(delta.type), unnumbered)).toEqual([
      `(root) must have required property 'sequence_number' {"missingProperty":"sequence_number"}`,
    ]);
  });
});

describe('chat completions', () => {
  it.each(FAMILIES)('%s: a buffered completion, with and without a tool call', async (model) => {
    for (const body of [
      { model, messages: [{ role: 'user', content: 'hello wire' }] },
      { model, messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] },
    ]) {
      const r = await call('POST', '/chat/completions', body);
      expect(r.status).toBe(200);
      const json = JSON.parse(r.text) as Record<string, unknown>;
      valid('CreateChatCompletionResponse', json, model);
      expect(json).not.toHaveProperty('system_fingerprint', null);
    }
  });

  it.each(FAMILIES)('%s: every streamed chunk, the usage chunk included', async (model) => {
    const r = await call('POST', '/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'stream wire' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(r.type).toMatch(/^text\/event-stream/);
    const events = sseEvents(r.text);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data) as unknown);
    expect(chunks.length).toBeGreaterThan(2);
    chunks.forEach((c, i) => valid('CreateChatCompletionStreamResponse', c, `${model} chunk ${i}`));
  });

  it('OpenAI extras: logprobs, several choices, a refusal-capable message', async () => {
    const lp = await call('POST', '/chat/completions', {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'log me' }],
      logprobs: true,
      top_logprobs: 2,
      n: 2,
    });
    valid('CreateChatCompletionResponse', JSON.parse(lp.text), 'logprobs n=2');
    const streamed = await call('POST', '/chat/completions', {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'log me' }],
      logprobs: true,
      stream: true,
    });
    sseEvents(streamed.text)
      .slice(0, -1)
      .forEach((e, i) => valid('CreateChatCompletionStreamResponse', JSON.parse(e.data), `logprob chunk ${i}`));
    const gemini = await call('POST', '/chat/completions', { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'two please' }], n: 2 });
    valid('CreateChatCompletionResponse', JSON.parse(gemini.text), 'gemini n=2');
  });

  it("a stream that fails mid-answer ends with an error event in OpenAI's error shape", async () => {
    gw.simulator?.setFault({ provider: 'anthropic' }, { kind: 'error-event-after-chunks', chunks: 3 });
    const r = await call('POST', '/chat/completions', { model: 'claude-3-5-sonnet', messages: [{ role: 'user', content: 'fail me' }], stream: true });
    const last = JSON.parse(sseEvents(r.text).at(-1)?.data ?? '{}') as unknown;
    valid('ErrorResponse', last, 'mid-stream error');
  });
});

describe('embeddings, images and models', () => {
  it.each(['deepseek-embed', 'text-embedding-3-small', 'gemini-embedding-001'])('%s: an embeddings response', async (model) => {
    const r = await call('POST', '/embeddings', { model, input: ['one', 'two'] });
    expect(r.status).toBe(200);
    valid('CreateEmbeddingResponse', JSON.parse(r.text), model);
  });

  it.each(['gpt-image-1', 'gemini-2.5-flash-image'])('%s: an image generation response', async (model) => {
    const r = await call('POST', '/images/generations', { model, prompt: 'a small boat', size: '1024x1024' });
    expect(r.status).toBe(200);
    valid('ImagesResponse', JSON.parse(r.text), model);
  });

  it('the model list and every model in it', async () => {
    const list = JSON.parse((await call('GET', '/models')).text) as { data: Array<{ id: string }> };
    valid('ListModelsResponse', list, 'models');
    for (const m of list.data) valid('Model', JSON.parse((await call('GET', `/models/${encodeURIComponent(m.id)}`)).text), m.id);
  });
});

describe('errors', () => {
  it.each([
    ['400 bad JSON', () => call('POST', '/chat/completions', '{not json'), 400],
    ['400 unknown argument', () => call('POST', '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], top_k: 3 }), 400],
    [
      '400 unsupported parameter',
      () => call('POST', '/chat/completions', { model: 'claude-3-5-sonnet', messages: [{ role: 'user', content: 'x' }], logprobs: true }),
      400,
    ],
    ['401 no key', () => call('POST', '/chat/completions', { model: 'gpt-4o', messages: [] }, null), 401],
    ['401 unknown key', () => call('GET', '/models', undefined, 'sk-mux-unknown'), 401],
    ['404 unknown model', () => call('POST', '/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }), 404],
    ['404 unknown path', () => call('GET', '/nowhere'), 404],
    ['405 wrong method', () => call('GET', '/chat/completions'), 405],
    ['400 Responses unknown parameter', () => call('POST', '/responses', { model: 'gpt-4o', input: 'x', foo: 1 }), 400],
  ] as const)('%s', async (_label, request, status) => {
    const r = await request();
    expect(r.status).toBe(status);
    valid('ErrorResponse', JSON.parse(r.text), `${status}`);
  });

  it('503 when no upstream can answer', async () => {
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) gw.simulator?.setFault({ provider }, { kind: 'status', status: 503 });
    const r = await call('POST', '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).toBe(503);
    valid('ErrorResponse', JSON.parse(r.text), '503');
  });
});

describe('the Responses API', () => {
  it.each(FAMILIES)('%s: a response object, plain and with a function call', async (model) => {
    for (const body of [
      { model, input: 'hello responses', instructions: 'Be brief.' },
      { model, input: 'weather?', tools: [{ type: 'function', name: 'get_weather', parameters: weatherTool.function.parameters, strict: false }] },
    ]) {
      const r = await call('POST', '/responses', body);
      expect(r.status).toBe(200);
      valid('Response', JSON.parse(r.text), model);
    }
  });

  it.each(FAMILIES)('%s: every streamed event, each under its own event name', async (model) => {
    for (const body of [
      { model, input: 'stream responses', stream: true },
      {
        model,
        input: 'weather?',
        stream: true,
        tools: [{ type: 'function', name: 'get_weather', parameters: weatherTool.function.parameters, strict: false }],
      },
    ]) {
      const r = await call('POST', '/responses', body);
      expect(r.type).toMatch(/^text\/event-stream/);
      const events = sseEvents(r.text);
      expect(events.length).toBeGreaterThan(4);
      for (const e of events) {
        const json = JSON.parse(e.data) as { type: string };
        expect(e.event).toBe(json.type);
        validEvent(json, `${model} ${json.type}`);
      }
      expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({ type: 'response.completed' });
    }
  });

  it('a reasoning summary validates, buffered and streamed (the response.reasoning_summary_* events)', async () => {
    const body = { model: 'deepseek-r1', input: 'think, then answer', reasoning: { summary: 'auto' } };
    const buffered = JSON.parse((await call('POST', '/responses', body)).text) as { output: Array<{ type: string; summary?: unknown[] }> };
    valid('Response', buffered, 'buffered');
    expect(buffered.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text' }], content: [] });
    const events = sseEvents((await call('POST', '/responses', { ...body, stream: true })).text).map((e) => JSON.parse(e.data) as { type: string });
    events.forEach((e) => validEvent(e, e.type));
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_part.done']),
    );
    expect(events.some((e) => e.type.startsWith('response.reasoning_text'))).toBe(false);
  });

  it('incomplete, failed and error events validate too', async () => {
    const cut = await call('POST', '/responses', { model: 'gpt-4o-mini', input: 'cut me short please', max_output_tokens: 2, stream: true });
    const cutEvents = sseEvents(cut.text).map((e) => JSON.parse(e.data) as { type: string });
    expect(cutEvents.at(-1)?.type).toBe('response.incomplete');
    cutEvents.forEach((e) => validEvent(e, e.type));
    valid(
      'Response',
      JSON.parse((await call('POST', '/responses', { model: 'gpt-4o-mini', input: 'cut me short please', max_output_tokens: 2 })).text),
      'incomplete',
    );
    gw.simulator?.setFault({ provider: 'openai' }, { kind: 'error-event-after-chunks', chunks: 2 });
    const failed = sseEvents((await call('POST', '/responses', { model: 'gpt-4o', input: 'fail me', stream: true })).text).map(
      (e) => JSON.parse(e.data) as { type: string },
    );
    expect(failed.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    failed.forEach((e) => validEvent(e, e.type));
  });
});

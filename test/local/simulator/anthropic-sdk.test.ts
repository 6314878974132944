/**
 * The official `@anthropic-ai/sdk` pointed at the simulator's native Messages route: buffered
 * messages, tools, the event stream (text, tool input, thinking), errors and mid-stream error events.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../local/simulator/index.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const client = (opts: { apiKey?: string; maxRetries?: number } = {}): Anthropic =>
  new Anthropic({ apiKey: opts.apiKey ?? 'sk-ant-test', baseURL: sim.urls.anthropic, maxRetries: opts.maxRetries ?? 0 });

const PROMPT = 'Hello simulator, how are you today?';
const EXPECTED = 'Echo: Hello simulator, how are you today? alpha beta gamma delta epsilon';
const weatherTool: Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city', 'unit'] },
};

describe('anthropic SDK against the native route', () => {
  it('creates a message with the echo text, end_turn and input/output token usage', async () => {
    const msg = await client().messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(msg.type).toBe('message');
    expect(msg.model).toBe('claude-haiku-4-5');
    expect(msg.content).toEqual([{ type: 'text', text: EXPECTED }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage).toMatchObject({ input_tokens: 4 + 2 + 4 + 6, output_tokens: 12 });
    // @anthropic-ai/sdk 1.x sends the API key as a Bearer token; x-api-key is accepted too (see the raw fetch below).
    expect(sim.requests[0]?.headers['authorization']).toBe('Bearer sk-ant-test');
    expect(sim.requests[0]?.headers['anthropic-version']).toBeTruthy();
  });

  it('answers a tool-bearing request with a tool_use block, then reads the tool_result back', async () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const msg = await client().messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages, tools: [weatherTool] });
    expect(msg.stop_reason).toBe('tool_use');
    const block = msg.content.find((b) => b.type === 'tool_use');
    expect(block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris', unit: 'c' } });
    messages.push({ role: 'assistant', content: msg.content });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: block!.type === 'tool_use' ? block!.id : '', content: [{ type: 'text', text: 'sunny,   21C' }] }],
    });
    const next = await client().messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages, tools: [weatherTool] });
    expect(next.content).toEqual([{ type: 'text', text: 'Tool said: sunny, 21C' }]);
  });

  it('streams text whose finalMessage matches the buffered reply, with cumulative usage', async () => {
    const stream = client().messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(texts.length).toBeGreaterThan(5);
    expect(texts.join('')).toBe(EXPECTED);
    expect(final.content).toMatchObject([{ type: 'text', text: EXPECTED }]);
    expect(final.usage).toMatchObject({ input_tokens: 10, output_tokens: 12 });
    expect(final.stop_reason).toBe('end_turn');
    expect(sim.requests[0]).toMatchObject({ stream: true, completed: true });
  });

  it('streams tool input as input_json_delta fragments the SDK assembles into the input object', async () => {
    const stream = client().messages.stream({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'both [parallel]' }],
      tools: [weatherTool, { name: 'noop', input_schema: { type: 'object' } }],
    });
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const final = await stream.finalMessage();
    expect(partials.length).toBeGreaterThanOrEqual(4);
    expect(final.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : b.type))).toEqual([
      ['get_weather', { city: 'Paris', unit: 'c' }],
      ['noop', {}],
    ]);
    expect(final.stop_reason).toBe('tool_use');
  });

  it('streams a thinking block with a signature when thinking is enabled', async () => {
    const final = await client()
      .messages.stream({
        model: 'claude-haiku-4-5',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: PROMPT }],
      })
      .finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'thinking', thinking: expect.stringMatching(/^Thinking: /), signature: expect.any(String) });
    expect(final.content[1]).toMatchObject({ type: 'text', text: EXPECTED });
    const thinkingWords = final.content[0]!.type === 'thinking' ? final.content[0]!.thinking.split(/\s+/).length : 0;
    expect(final.usage.output_tokens).toBe(12 + thinkingWords);
  });

  it('reports stop_sequence and max_tokens stops', async () => {
    const stopped = await client().messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      stop_sequences: ['how'],
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'how', content: [{ text: 'Echo: Hello simulator, ' }] });
    const cut = await client().messages.create({ model: 'claude-haiku-4-5', max_tokens: 2, messages: [{ role: 'user', content: PROMPT }] });
    expect(cut).toMatchObject({ stop_reason: 'max_tokens', content: [{ text: 'Echo: Hello' }], usage: { output_tokens: 2 } });
  });

  it('counts image blocks in the reply prefix', async () => {
    const msg = await client().messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'text', text: 'describe' },
          ],
        },
      ],
    });
    expect(msg.content[0]).toMatchObject({ text: expect.stringMatching(/^I see 1 image\. Echo: describe /) });
  });

  it('raises OverloadedError (529) for a status fault, and succeeds on the SDK retry when the fault is used up', async () => {
    sim.setFault({ provider: 'anthropic' }, { kind: 'status', status: 529 }, { times: 1 });
    const err = await client()
      .messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.OverloadedError);
    expect(err).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });

    sim.setFault({ provider: 'anthropic' }, { kind: 'status', status: 529, retryAfterMs: 1 }, { times: 1 });
    const ok = await client({ maxRetries: 2 }).messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(ok.content[0]).toMatchObject({ type: 'text' });
    expect(sim.requests.slice(-2).map((r) => r.fault)).toEqual(['status:529', undefined]);
  });

  it('makes the SDK stream throw on an error-event-after-chunks fault', async () => {
    sim.setFault({ provider: 'anthropic' }, { kind: 'error-event-after-chunks', chunks: 2 });
    const stream = client().messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    await expect(stream.finalMessage()).rejects.toMatchObject({ error: { type: 'error', error: { type: 'overloaded_error' } } });
    expect(texts).toHaveLength(2);
  });

  it('rejects a bad key (401), a missing max_tokens and a temperature above 1 (400), and a retired model (404)', async () => {
    await expect(
      client({ apiKey: 'bad-key' }).messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    // SDK 1.x dropped `temperature` from its types (deprecated for new models), but the API still takes it.
    const hot: MessageCreateParamsNonStreaming & { temperature: number } = {
      model: 'claude-haiku-4-5',
      max_tokens: 10,
      temperature: 1.5,
      messages: [{ role: 'user', content: 'x' }],
    };
    await expect(client().messages.create(hot)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(
      client().messages.create({ model: 'claude-3-5-sonnet-retired', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const raw = await fetch(`${sim.urls.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
      request_id: expect.any(String),
    });
    expect(raw.headers.get('request-id')).toMatch(/^req_sim_/);
  });
});

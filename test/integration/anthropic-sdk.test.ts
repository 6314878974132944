import Anthropic, { APIError, AuthenticationError, BadRequestError, NotFoundError, OverloadedError } from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * The Anthropic Messages API on modelmux, through the official `@anthropic-ai/sdk` changed only in
 * base URL and key, against the real handlers, DynamoDB Local and the upstream simulator: Claude
 * models passed through natively (the simulator checks the thinking signatures it issued), other
 * models translated both ways, billed by the chat core.
 */

let gw: RunningGateway;
let client: Anthropic;
let origin: string;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `anthropic-sdk-${process.pid}`, devFreeTokens: 2_000_000 });
  origin = gw.baseUrl.replace(/\/v1$/, '');
  client = new Anthropic({ baseURL: origin, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

beforeEach(() => {
  gw.simulator?.reset();
});

const sim = () => {
  if (gw.simulator === undefined) throw new Error('no simulator');
  return gw.simulator;
};

const weather: Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const textOf = (m: Anthropic.Message): string => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

describe('messages.create through the Anthropic SDK', () => {
  it('answers a Claude model natively: the body reaches Anthropic as sent, headers forwarded, usage in Anthropic shape, billed', async () => {
    const { data: msg, response } = await client.messages
      .create(
        {
          model: 'claude-sonnet-4-6',
          max_tokens: 300,
          system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
          messages: [{ role: 'user', content: 'Hello Messages API' }],
          stop_sequences: ['never-said'],
          metadata: { user_id: 'user-42' },
          // Not in this SDK version's types, still in the API: passed through like any field.
          ...({ top_k: 5 } as object),
        },
        { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31,claude-code-20250219', 'anthropic-version': '2023-06-01' } },
      )
      .withResponse();
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', stop_reason: 'end_turn', stop_sequence: null });
    expect(msg.id).toBe(`msg_${response.headers.get('x-request-id')}`);
    expect(textOf(msg)).toMatch(/^Echo: Hello Messages API/);
    expect(msg.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));

    const upstream = sim().requests.find((r) => r.provider === 'anthropic');
    expect(upstream?.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,claude-code-20250219');
    expect(upstream?.headers['anthropic-version']).toBe('2023-06-01');
    expect(upstream?.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 300,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      top_k: 5,
      stop_sequences: ['never-said'],
      metadata: { user_id: 'user-42' },
      stream: true,
    });

    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({
      publicModel: 'claude-sonnet-4-6',
      provider: 'anthropic',
      status: 'complete',
      promptTokens: msg.usage.input_tokens,
      completionTokens: msg.usage.output_tokens,
      usageEstimated: false,
    });
  });

  for (const model of ['claude-haiku-4-5', 'gpt-4o', 'gemini-2.0-flash']) {
    it(`${model}: streams Anthropic's event sequence, finalMessage() equal to the buffered answer`, async () => {
      const params = { model, max_tokens: 200, messages: [{ role: 'user' as const, content: 'Stream me something please' }] };
      const buffered = await client.messages.create(params);
      const stream = client.messages.stream(params);
      const types: string[] = [];
      stream.on('streamEvent', (e) => types.push(e.type));
      const final = await stream.finalMessage();
      expect(textOf(final)).toBe(textOf(buffered));
      expect(textOf(final)).toMatch(/^Echo: Stream me something please/);
      expect(final).toMatchObject({ model, stop_reason: 'end_turn' });
      expect(final.usage.output_tokens).toBe(buffered.usage.output_tokens);
      expect(final.usage.input_tokens).toBe(buffered.usage.input_tokens);
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
      expect(types).toContain('content_block_start');
      expect(types).toContain('content_block_delta');
      expect(types).toContain('content_block_stop');
    });

    it(`${model}: a tool round trip (tool_use, then tool_result answered)`, async () => {
      const first = await client.messages.create({
        model,
        max_tokens: 300,
        tools: [weather],
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      });
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      expect(call).toMatchObject({ name: 'get_weather', input: { city: expect.any(String) } });
      const history: MessageParam[] = [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id ?? '', content: '{"temp_c": 21}' }] },
      ];
      const stream = client.messages.stream({ model, max_tokens: 300, tools: [weather], messages: history });
      const second = await stream.finalMessage();
      expect(second.stop_reason).toBe('end_turn');
      expect(textOf(second)).toContain('21');
    });
  }

  it('streams a tool call as tool_use with input_json_delta pieces (gpt-4o, translated)', async () => {
    const stream = client.messages.stream({ model: 'gpt-4o', max_tokens: 300, tools: [weather], messages: [{ role: 'user', content: 'Weather in Oslo?' }] });
    const deltas: string[] = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') deltas.push(e.delta.partial_json);
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(deltas.length).toBeGreaterThan(0);
    expect(final.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: JSON.parse(deltas.join('')) })]);
  });
});

describe('extended thinking on a Claude model', () => {
  it('round-trips thinking with its signature unchanged through a tool loop, streamed and buffered', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      thinking,
      tools: [weather],
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
    });
    const first = await stream.finalMessage();
    const block = first.content.find((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
    expect(block?.thinking).toMatch(/^Thinking: /);
    expect(block?.signature).toMatch(/^[A-Za-z0-9+/=]{8,}$/);
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    const history: MessageParam[] = [
      { role: 'user', content: 'Weather in Rome?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id ?? '', content: 'sunny' }] },
    ];
    const second = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, thinking, tools: [weather], messages: history });
    expect(textOf(second)).toContain('sunny');
    const sent = sim()
      .requests.filter((r) => r.provider === 'anthropic')
      .at(-1)?.body as { messages: Array<{ content: unknown }> };
    expect(sent.messages[1]?.content).toEqual(JSON.parse(JSON.stringify(first.content)));

    // A signature changed on the way is refused by Anthropic (the simulator checks as the API does).
    const forged = [
      { ...block, signature: Buffer.from('forged').toString('base64') },
      ...first.content.filter((b) => b.type !== 'thinking'),
    ] as Anthropic.ContentBlockParam[];
    const refused = await client.messages
      .create({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        thinking,
        tools: [weather],
        messages: [history[0]!, { role: 'assistant', content: forged }, history[2]!],
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as BadRequestError).error as unknown).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/signature/) },
    });
  });
});

describe('count_tokens, models, errors, auth', () => {
  it("counts a Claude prompt with Anthropic's own endpoint and other models with the gateway tokenizer, unbilled", async () => {
    const params = { messages: [{ role: 'user' as const, content: 'one two three four five' }], system: 'six seven' };
    const claude = await client.messages.countTokens({ model: 'claude-haiku-4-5-20251001', ...params });
    // The simulator's rule: 4 + words per message, the system prompt as one message.
    expect(claude.input_tokens).toBe(4 + 2 + 4 + 5);
    expect(sim().requests.at(-1)?.path).toBe('/anthropic/v1/messages/count_tokens');
    const gpt = await client.messages.countTokens({ model: 'gpt-4o', ...params, tools: [weather] });
    const gptNoTools = await client.messages.countTokens({ model: 'gpt-4o', ...params });
    expect(gptNoTools.input_tokens).toBeGreaterThan(5);
    expect(gpt.input_tokens).toBeGreaterThan(gptNoTools.input_tokens);
  });

  it("lists models in Anthropic's shape for an Anthropic client, OpenAI's without anthropic-version", async () => {
    const page = await client.models.list({ limit: 1000 });
    const ids = page.data.map((m) => m.id);
    expect(ids).toContain('claude-sonnet-4-5');
    expect(page.data[0]).toEqual({
      type: 'model',
      id: expect.any(String),
      display_name: expect.any(String),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(page.data.find((m) => m.id === 'claude-3-5-sonnet')?.display_name).toBe('Claude 3.5 Sonnet');
    const first = await client.models.list({ limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const openai = (await (await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${gw.apiKey}` } })).json()) as { object: string };
    expect(openai.object).toBe('list');
    expect((await client.models.retrieve('claude-haiku-4-5-20251001')).id).toBe('claude-haiku-4-5');
  });

  it("answers typed errors in Anthropic's shape: 404 unknown model, 401 bad key, 400 bad body, 529 when every upstream is overloaded", async () => {
    const unknown = await client.messages.create({ model: 'claude-2.1', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect((unknown as NotFoundError).error as unknown).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error', message: expect.stringContaining('claude-2.1') },
      request_id: expect.any(String),
    });

    const badKey = new Anthropic({ baseURL: origin, apiKey: 'sk-mux-wrong', maxRetries: 0 });
    const auth = await badKey.messages.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect((auth as AuthenticationError).error as unknown).toMatchObject({ error: { type: 'authentication_error' } });

    const bad = await client.messages
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).error as unknown).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') },
    });

    // Every target of the plan (Claude, then its equivalents) overloaded: Anthropic's 529.
    sim().setFault({}, { kind: 'status', status: 503 });
    const overloaded = await client.messages
      .create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(OverloadedError);
    expect((overloaded as APIError).status).toBe(529);
    expect((overloaded as APIError).error).toMatchObject({ error: { type: 'overloaded_error' } });
    sim().clearFaults();
  });

  it('ends a stream that fails after its first byte with an error event the SDK throws', async () => {
    sim().setFault({ provider: 'anthropic' }, { kind: 'error-event-after-chunks', chunks: 2 });
    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 200, messages: [{ role: 'user', content: 'long answer please' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const failure = await stream.finalMessage().catch((e: unknown) => e);
    expect(texts.length).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(APIError);
    expect(JSON.stringify((failure as APIError).error)).toMatch(/overloaded_error|api_error/);
  });

  it('takes the key as Authorization: Bearer (ANTHROPIC_AUTH_TOKEN) and tolerates ?beta=true', async () => {
    const bearer = new Anthropic({ baseURL: origin, authToken: gw.apiKey, apiKey: null, maxRetries: 0 });
    const msg = await bearer.messages.create({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'bearer key' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Echo: bearer key/) });
    // Claude Code's own request line: POST /v1/messages?beta=true with x-api-key.
    const res = await fetch(`${origin}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': gw.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'beta route' }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: expect.stringMatching(/^Echo: beta route/) }] });
  });
});

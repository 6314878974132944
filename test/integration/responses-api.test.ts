import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import type { ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * `POST /v1/responses` through the official openai SDK (`client.responses.create`, buffered and
 * streamed), the real handlers, DynamoDB Local and the simulator: answers, typed events, function
 * calls, structured output, reasoning, limits, refusals — and that it is routed, fallen back and
 * billed by the same core as chat completions (the ledger entry, the fallback path).
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({
    stream: { connectMs: 1000, headersMs: 700, firstTokenMs: 700, idleMs: 500 },
    buffered: { connectMs: 1000, headersMs: 700, idleMs: 500 },
  });
  gw = await startGateway({ tablePrefix: `responses-${process.pid}`, devFreeTokens: 100_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  delete process.env.UPSTREAM_TIMEOUTS_MS;
});

beforeEach(async () => {
  sim().reset();
  const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
  breaker.reset();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

async function events(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const out: ResponseStreamEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('responses.create, buffered', () => {
  it('answers with a response object: output message, output_text, usage in the Responses shape, and bills it', async () => {
    const { data: res, response } = await client.responses
      .create({ model: 'claude-3-5-sonnet', instructions: 'Be brief.', input: 'Hello Responses API' })
      .withResponse();
    expect(res).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'claude-3-5-sonnet',
      instructions: 'Be brief.',
      error: null,
      incomplete_details: null,
    });
    expect(res.id).toMatch(/^resp_/);
    expect(res.output_text).toMatch(/^Echo: Hello Responses API/);
    expect(res.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [expect.objectContaining({ type: 'output_text', annotations: [] })],
      }),
    ]);
    const u = res.usage;
    expect(u?.input_tokens).toBeGreaterThan(0);
    expect(u?.total_tokens).toBe((u?.input_tokens ?? 0) + (u?.output_tokens ?? 0));
    expect(u?.output_tokens_details.reasoning_tokens).toBe(0);
    expect(response.headers.get('x-modelmux-provider')).toBe('anthropic');
    // Billed by the chat core's settle: one ledger entry under the request id, the same token counts.
    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({
      publicModel: 'claude-3-5-sonnet',
      servedModel: 'claude-3-5-sonnet',
      provider: 'anthropic',
      status: 'complete',
      promptTokens: u?.input_tokens,
      completionTokens: u?.output_tokens,
      usageEstimated: false,
    });
  });

  it('takes input items: messages with input_text and input_image parts, and an assistant turn', async () => {
    const res = await client.responses.create({
      model: 'gpt-4o',
      input: [
        { role: 'developer', content: 'Describe images.' },
        { role: 'user', content: [{ type: 'input_text', text: 'first question' }] },
        {
          type: 'message',
          id: 'msg_earlier',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'first answer', annotations: [] }],
        },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
          ],
        },
      ],
    });
    expect(res.output_text).toMatch(/^I see 1 image\. Echo: What is this\?/);
    const upstream = sim().requests.at(-1)?.body as { messages: unknown[] };
    expect(upstream.messages).toEqual([
      { role: 'developer', content: 'Describe images.' },
      { role: 'user', content: [{ type: 'text', text: 'first question' }] },
      { role: 'assistant', content: 'first answer' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
        ],
      },
    ]);
  });

  it('runs a function-call round trip: function_call out, function_call_output back in', async () => {
    const first = await client.responses.create({ model: 'gemini-2.0-flash', input: 'What is the weather in Paris?', tools: [weather] });
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    if (call?.type !== 'function_call') throw new Error('no call');
    const input: ResponseInputItem[] = [
      { role: 'user', content: 'What is the weather in Paris?' },
      call,
      { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":21}' },
    ];
    const second = await client.responses.create({ model: 'gemini-2.0-flash', input, tools: [weather] });
    expect(second.output_text).toBe('Tool said: {"temp_c":21}');
  });

  it('returns text.format json_schema output that parses (responses.parse with zodTextFormat)', async () => {
    const City = z.object({ city: z.string(), population: z.number().int(), capital: z.boolean() });
    for (const model of ['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3']) {
      const res = await client.responses.parse({ model, input: 'Describe Paris', text: { format: zodTextFormat(City, 'city') } });
      expect(City.safeParse(res.output_parsed).success, model).toBe(true);
      expect(res.text?.format).toMatchObject({ type: 'json_schema', name: 'city' });
    }
  });

  it('returns the reasoning of a model that exposes it as a reasoning item, counted as reasoning tokens', async () => {
    const res = await client.responses.create({ model: 'deepseek-r1', input: 'Think first' });
    expect(res.output[0]).toMatchObject({ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: expect.stringMatching(/^Thinking:/) }] });
    expect(res.output[1]).toMatchObject({ type: 'message' });
    expect(res.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('returns that reasoning as the summary when the request asks for one, and echoes the setting', async () => {
    const plain = await client.responses.create({ model: 'deepseek-r1', input: 'Think first' });
    const res = await client.responses.create({ model: 'deepseek-r1', input: 'Think first', reasoning: { summary: 'concise' } });
    const text = (plain.output[0] as { content: Array<{ text: string }> }).content[0]?.text;
    expect(res.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text }], content: [] });
    expect(res.reasoning).toMatchObject({ summary: 'concise' });
    expect(res.usage?.output_tokens_details.reasoning_tokens).toBe(plain.usage?.output_tokens_details.reasoning_tokens);
  });

  it('is incomplete (max_output_tokens) when the output limit cuts the answer', async () => {
    const res = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say many words please', max_output_tokens: 3 });
    expect(res).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 3 });
    expect(res.usage?.output_tokens).toBe(3);
  });

  it('falls back to an equivalent when the primary fails, as chat completions do', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 503 });
    const { data: res, response } = await client.responses.create({ model: 'gpt-4o', input: 'fallback please' }).withResponse();
    expect(res.output_text).toMatch(/^Echo: fallback please/);
    expect(res.model).toBe('gpt-4o');
    expect(response.headers.get('x-modelmux-model')).toBe('claude-3-5-sonnet');
    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({ publicModel: 'gpt-4o', servedModel: 'claude-3-5-sonnet' });
    expect((entry?.['fallbackPath'] as string[]).map((p) => p.split(':').pop())).toEqual(['overloaded', 'overloaded', 'ok']);
  });

  it('answers for every chat model of the catalogue', async () => {
    const chatModels = [...CATALOGUE.values()].filter((e) => e.kind === 'chat').map((e) => e.id);
    expect(chatModels.length).toBeGreaterThan(25);
    for (const model of chatModels) {
      const res = await client.responses.create({ model, input: `hi ${model}` });
      expect(res.output_text, model).toContain(`Echo: hi ${model}`);
    }
  });
});

describe('responses.create, streamed', () => {
  it('emits the typed events in order with increasing sequence numbers, and ends with response.completed and its usage', async () => {
    const buffered = await client.responses.create({ model: 'gpt-4o-mini', input: 'Stream me please' });
    const all = await events(await client.responses.create({ model: 'gpt-4o-mini', input: 'Stream me please', stream: true }));
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    const types = all.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const deltas = all.filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('')).toBe(buffered.output_text);
    const done = all.at(-1);
    if (done?.type !== 'response.completed') throw new Error('no response.completed');
    expect(done.response.status).toBe('completed');
    expect(done.response.usage?.total_tokens).toBe(buffered.usage?.total_tokens);
    expect(done.response.output[0]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: buffered.output_text }] });
  });

  it('streams a function call as function_call_arguments deltas, and the responses.stream helper assembles it', async () => {
    const all = await events(await client.responses.create({ model: 'claude-3-5-sonnet', input: 'weather in Paris?', tools: [weather], stream: true }));
    const types = all.map((e) => e.type);
    expect(types).toContain('response.function_call_arguments.delta');
    expect(all.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    const final = await client.responses.stream({ model: 'claude-3-5-sonnet', input: 'weather in Paris?', tools: [weather] }).finalResponse();
    expect(final.output.find((o) => o.type === 'function_call')).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
  });

  it('ends with response.failed (and bills what was produced) when the upstream fails mid-answer', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'error-event-after-chunks', chunks: 3 });
    const { data: stream, response } = await client.responses.create({ model: 'gpt-4o', input: 'fail midway', stream: true }).withResponse();
    const all = await events(stream);
    expect(all.some((e) => e.type === 'response.output_text.delta')).toBe(true);
    const last = all.at(-1);
    expect(last?.type).toBe('response.failed');
    if (last?.type !== 'response.failed') throw new Error('no response.failed');
    expect(last.response.error).toMatchObject({ code: 'server_error', message: expect.stringMatching(/failed mid-stream/) });
    expect(all.at(-2)).toMatchObject({ type: 'error', code: 'server_error', message: last.response.error?.message });
    expect(all.some((e) => e.type === 'response.completed')).toBe(false);
    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({ status: 'partial', servedModel: 'gpt-4o' });
  });
});

describe('namespaced function tools (Codex CLI)', () => {
  const crm = { type: 'namespace', name: 'crm', description: 'CRM tools', tools: [{ ...weather, name: 'lookup_order', defer_loading: true }] };

  it('go upstream as <namespace>__<name> and come back as {name, namespace}, buffered and streamed, and round-trip', async () => {
    const before = sim().requests.length;
    const params = { model: 'gpt-4o', input: 'Use lookup_order for order 7', tools: [weather, crm] } as never;
    const res = await client.responses.create(params);
    const sent = sim().requests.slice(before)[0]?.body as { tools: Array<{ function: { name: string } }> };
    expect(sent.tools.map((t) => t.function.name)).toEqual(['get_weather', 'crm__lookup_order']);
    const call = res.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'lookup_order', namespace: 'crm', status: 'completed' });
    const stream = (await client.responses.create({ ...(params as object), stream: true } as never)) as unknown as AsyncIterable<ResponseStreamEvent>;
    const all = await events(stream);
    expect(all.find((e) => e.type === 'response.output_item.added')).toMatchObject({ item: { name: 'lookup_order', namespace: 'crm' } });
    expect(all.find((e) => e.type === 'response.output_item.done')).toMatchObject({ item: { name: 'lookup_order', namespace: 'crm' } });
    if (call?.type !== 'function_call') throw new Error('no call');
    const mark = sim().requests.length;
    const input = [{ role: 'user', content: 'Use lookup_order for order 7' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'shipped' }];
    const second = await client.responses.create({ model: 'gpt-4o', input, tools: [weather, crm] } as never);
    expect(second.output_text).toBe('Tool said: shipped');
    const replayed = sim().requests.slice(mark)[0]?.body as { messages: Array<{ tool_calls?: Array<{ function: { name: string } }> }> };
    expect(replayed.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name)).toEqual(['crm__lookup_order']);
  });
});

describe('what the Responses API refuses', () => {
  async function refused(params: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
    const err = await client.responses.create({ model: 'gpt-4o', input: 'hi', ...params } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    return err as InstanceType<typeof OpenAI.APIError>;
  }

  it('refuses built-in tools and their tool choices, conversations and background runs, naming each', async () => {
    expect(await refused({ conversation: 'conv_1' })).toMatchObject({ param: 'conversation', code: 'unsupported_parameter' });
    expect(await refused({ tools: [{ type: 'web_search' }] })).toMatchObject({ param: 'tools[0].type', code: 'unsupported_parameter' });
    expect(await refused({ tool_choice: { type: 'file_search' } })).toMatchObject({ param: 'tool_choice' });
    expect(await refused({ background: true })).toMatchObject({ param: 'background' });
  });

  it('takes what Codex CLI sends on a model without reasoning: client_metadata, reasoning dropped with a header', async () => {
    const codex = {
      model: 'gpt-4o',
      input: 'say hi',
      reasoning: { effort: 'medium', summary: 'auto' },
      client_metadata: { 'x-codex-installation-id': 'i1' },
      include: ['reasoning.encrypted_content'],
      store: false,
      prompt_cache_key: 'sess-1',
    };
    const before = sim().requests.length;
    const { data: res, response } = await client.responses.create(codex as never).withResponse();
    expect((res as { status: string }).status).toBe('completed');
    expect(response.headers.get('x-modelmux-dropped-params')).toBe('reasoning');
    const sent = sim().requests.slice(before)[0]?.body as Record<string, unknown>;
    expect(sent).not.toHaveProperty('reasoning_effort');
    expect(sent).not.toHaveProperty('client_metadata');
    // On a model that reasons, the effort goes upstream and nothing is dropped.
    const { response: r1 } = await client.responses.create({ ...codex, model: 'o3-mini' } as never).withResponse();
    expect(r1.headers.get('x-modelmux-dropped-params')).toBeNull();
  });

  it('refuses the hosted web_search tool with a 400 that says why: no native search routing', async () => {
    for (const type of ['web_search', 'web_search_preview']) {
      const err = await refused({ tools: [weather, { type }] });
      expect(err).toMatchObject({ status: 400, param: 'tools[1].type', code: 'unsupported_parameter', type: 'invalid_request_error' });
      expect(err.message).toMatch(
        new RegExp(`'${type}' tool is not available through modelmux yet: no model here is routed to a provider's native web search`),
      );
    }
  });

  it('lowers max_output_tokens above the model cap, with a header, instead of a 400', async () => {
    const before = sim().requests.length;
    const { response } = await client.responses.create({ model: 'gpt-4o', input: 'hi', max_output_tokens: 32_000 }).withResponse();
    expect(response.headers.get('x-modelmux-max-tokens-clamped')).toBe('32000->16384');
    expect((sim().requests.slice(before)[0]?.body as { max_completion_tokens?: number; max_tokens?: number }).max_completion_tokens ?? 0).toBeLessThanOrEqual(
      16_384,
    );
  });

  it("refuses an unknown parameter at any level with OpenAI's Responses wording", async () => {
    const top = await refused({ temprature: 1 });
    expect(top).toMatchObject({ param: 'temprature', code: 'unknown_parameter', error: { message: "Unknown parameter: 'temprature'." } });
    const nested = await refused({ input: [{ role: 'user', content: 'hi', metadata: { a: 'b' } }] });
    expect(nested).toMatchObject({ param: 'input[0].metadata', code: 'unknown_parameter', error: { message: "Unknown parameter: 'input[0].metadata'." } });
  });

  it('answers 404 for an unknown model and accepts metadata and store, echoing metadata', async () => {
    const err = await client.responses.create({ model: 'no-such-model', input: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const res = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', metadata: { run: 'a1' }, store: true });
    expect(res.metadata).toEqual({ run: 'a1' });
  });
});

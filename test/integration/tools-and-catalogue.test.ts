import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';
import { buildCatalogue, CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import type { CatalogueEntryData, CatalogueTargetData } from '../../functions/shared/catalogue/schema';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { planAttempts, requiredCapabilities } from '../../functions/shared/routing/attempt-plan';

/**
 * Native translation end to end: the `openai` SDK talks to modelmux, which speaks Anthropic Messages
 * and Gemini generateContent to the simulator. Tool calls must round-trip (call → tool result →
 * final answer), streamed and buffered, and every catalogue model must answer.
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `tools-${process.pid}`, devFreeTokens: 100_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    },
  },
  {
    type: 'function',
    function: { name: 'get_time', description: 'Local time', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } },
  },
];

type ToolCall = { id: string; function: { name: string; arguments: string }; extra_content?: { google: { thought_signature: string } } };

/**
 * Collects a streamed answer: text, and tool calls assembled from their fragments by index (with a
 * Gemini thought signature, which a client must echo back like Google's own compatibility layer asks).
 */
async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<{ text: string; calls: ToolCall[]; finish: string | null }> {
  let text = '';
  let finish: string | null = null;
  const calls: ToolCall[] = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta.content ?? '';
    for (const t of choice.delta.tool_calls ?? []) {
      const call = (calls[t.index] ??= { id: '', function: { name: '', arguments: '' } });
      const extra = (t as { extra_content?: ToolCall['extra_content'] }).extra_content;
      if (extra) call.extra_content = extra;
      if (t.id) call.id = t.id;
      if (t.function?.name) call.function.name += t.function.name;
      if (t.function?.arguments) call.function.arguments += t.function.arguments;
    }
    finish = choice.finish_reason ?? finish;
  }
  return { text, calls, finish };
}

describe.each(['claude-3-5-sonnet', 'gemini-2.0-flash'])('tool calls with %s', (model) => {
  const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
  const isGemini = model.startsWith('gemini');

  /** The functionCall parts modelmux replayed to the simulated Gemini in its latest request. */
  function replayedGeminiCalls(): unknown[] {
    const last = gw.simulator?.requests.filter((r) => r.provider === 'gemini').at(-1);
    const contents = (last?.body as { contents?: Array<{ parts: Array<Record<string, unknown>> }> } | undefined)?.contents ?? [];
    return contents.flatMap((c) => c.parts.filter((p) => p['functionCall'] !== undefined));
  }

  it('round-trips buffered: tool call, tool result, final answer', async () => {
    const first = await client.chat.completions.create({ model, messages: [question], tools });
    const msg = first.choices[0]?.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const call = msg?.tool_calls?.[0] as ToolCall | undefined;
    expect(call?.function.name).toBe('get_weather');
    expect(JSON.parse(call?.function.arguments ?? 'null')).toEqual({ city: 'Paris' });

    const second = await client.chat.completions.create({
      model,
      tools,
      messages: [
        question,
        { role: 'assistant', content: msg?.content ?? null, tool_calls: msg?.tool_calls },
        { role: 'tool', tool_call_id: call?.id ?? '', content: '{"temp_c":21}' },
      ],
    });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toContain('Tool said:');
    expect(second.choices[0]?.message.content).toContain('21');
    if (isGemini) {
      // Gemini 2.5 signs its calls: the signature reaches the client and goes back upstream unchanged.
      const signature = (call as ToolCall).extra_content?.google.thought_signature;
      expect(signature).toEqual(expect.any(String));
      expect(replayedGeminiCalls()).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: signature }]);
    }
  });

  it('round-trips streamed, and the streamed arguments join into valid JSON', async () => {
    const first = await collect(await client.chat.completions.create({ model, messages: [question], tools, stream: true }));
    expect(first.finish).toBe('tool_calls');
    expect(first.calls).toHaveLength(1);
    expect(first.calls[0]?.id).not.toBe('');
    expect(JSON.parse(first.calls[0]?.function.arguments ?? '')).toEqual({ city: 'Paris' });

    const second = await collect(
      await client.chat.completions.create({
        model,
        tools,
        stream: true,
        messages: [
          question,
          {
            role: 'assistant',
            content: null,
            tool_calls: first.calls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: c.function,
              ...(c.extra_content ? { extra_content: c.extra_content } : {}),
            })),
          },
          { role: 'tool', tool_call_id: first.calls[0]?.id ?? '', content: '{"temp_c":21}' },
        ],
      }),
    );
    expect(second.finish).toBe('stop');
    expect(second.text).toContain('21');
    if (isGemini) {
      const signature = first.calls[0]?.extra_content?.google.thought_signature;
      expect(signature).toEqual(expect.any(String));
      expect(replayedGeminiCalls()).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: signature }]);
    }
  });

  it('mints distinct tool-call ids across the rounds of one conversation', async () => {
    const first = await client.chat.completions.create({ model, messages: [question], tools });
    const call = first.choices[0]?.message.tool_calls?.[0] as ToolCall;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      question,
      { role: 'assistant', content: null, tool_calls: first.choices[0]?.message.tool_calls },
      { role: 'tool', tool_call_id: call.id, content: '{"temp_c":21}' },
      { role: 'assistant', content: 'It is 21 °C in Paris.' },
      { role: 'user', content: 'And the weather in Rome?' },
    ];
    const second = await client.chat.completions.create({ model, messages, tools });
    const again = second.choices[0]?.message.tool_calls?.[0] as ToolCall | undefined;
    expect(again?.function.name).toBe('get_weather');
    expect(again?.id).not.toBe(call.id);
  });

  it('returns parallel tool calls with distinct indexes and ids', async () => {
    const res = await collect(
      await client.chat.completions.create({ model, tools, stream: true, messages: [{ role: 'user', content: 'Weather and time please [parallel]' }] }),
    );
    expect(res.calls.map((c) => c.function.name)).toEqual(['get_weather', 'get_time']);
    expect(new Set(res.calls.map((c) => c.id)).size).toBe(2);
    for (const c of res.calls) expect(() => JSON.parse(c.function.arguments)).not.toThrow();
  });

  it('passes images through and the model sees them', async () => {
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const res = await client.chat.completions.create({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe this' },
            { type: 'image_url', image_url: { url: png } },
          ],
        },
      ],
    });
    expect(res.choices[0]?.message.content).toMatch(/^I see 1 image/);
  });
});

describe('a tool conversation continued on Gemini 3', () => {
  const geminiCalls = (): unknown[] => {
    const last = gw.simulator?.requests.filter((r) => r.provider === 'gemini').at(-1);
    const contents = (last?.body as { contents?: Array<{ parts: Array<Record<string, unknown>> }> } | undefined)?.contents ?? [];
    return contents.flatMap((c) => c.parts.filter((p) => p['functionCall'] !== undefined));
  };

  it("answers a history whose tool call Claude made (no signature): Google's sentinel goes in its place", async () => {
    // Turn 1 on Claude: its tool call carries no Gemini signature.
    const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const first = await client.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [question], tools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    expect((call as ToolCall).extra_content).toBeUndefined();
    // Turn 2 on Gemini 3, which refuses an unsigned call replayed in the current turn.
    const second = await client.chat.completions.create({
      model: 'gemini-3.5-flash',
      tools,
      messages: [
        question,
        { role: 'assistant', content: null, tool_calls: call ? [call] : [] },
        { role: 'tool', tool_call_id: call?.id ?? '', content: '{"temp_c":21}' },
      ],
    });
    expect(second.choices[0]?.message.content).toContain('21');
    expect(geminiCalls()).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'skip_thought_signature_validator' }]);
  });

  it("keeps Gemini's own signature, and sends none to Gemini 2.5 for a call it did not sign", async () => {
    const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const unsigned = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const result: OpenAI.ChatCompletionMessageParam = { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' };
    await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      tools,
      messages: [question, { role: 'assistant', content: null, tool_calls: [unsigned] }, result],
    });
    expect(geminiCalls()).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }]);
    const signed = { ...unsigned, extra_content: { google: { thought_signature: 'c2lnbmVk' } } };
    await client.chat.completions.create({
      model: 'gemini-3.5-flash',
      tools,
      messages: [question, { role: 'assistant', content: null, tool_calls: [signed] }, result],
    });
    expect(geminiCalls()).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmVk' }]);
  });
});

describe('reasoning output', () => {
  it('returns MiniMax reasoning as reasoning_content, apart from the answer', async () => {
    const res = await client.chat.completions.create({ model: 'minimax', messages: [{ role: 'user', content: 'Think about it' }] });
    const message = res.choices[0]?.message as { content: string; reasoning_content?: string };
    expect(message.reasoning_content?.length ?? 0).toBeGreaterThan(0);
    expect(message.content).not.toContain('<think>');
    expect(message.content).toContain('Echo: Think about it');
  });

  it('streams DeepSeek reasoning deltas before the answer', async () => {
    const stream = await client.chat.completions.create({ model: 'deepseek-r1', messages: [{ role: 'user', content: 'Reason please' }], stream: true });
    const kinds: string[] = [];
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      if (d?.reasoning_content) kinds.push('reasoning');
      if (d?.content) kinds.push('content');
    }
    expect(kinds[0]).toBe('reasoning');
    expect(kinds.lastIndexOf('reasoning')).toBeLessThan(kinds.indexOf('content'));
  });
});

describe('capabilities', () => {
  it('refuses images to a text-only model with a 400 naming the capability', async () => {
    const err = await client.chat.completions
      .create({ model: 'deepseek-v3', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/image input/);
  });

  const pdf = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK', filename: 'a.pdf' } } as const;
  const wav = { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZF', format: 'wav' } } as const;

  it.each([
    ['file input', [{ type: 'text', text: 'Summarise' }, pdf]],
    ['audio input', [{ type: 'text', text: 'Transcribe' }, wav]],
  ] as const)('refuses %s to a model not declared to take it with a 400 naming the capability', async (label, content) => {
    const err = await client.chat.completions.create({ model: 'deepseek-v3', messages: [{ role: 'user', content: [...content] }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(label);
    expect(err).toMatchObject({ status: 400, code: 'unsupported_capability', param: 'messages' });
  });

  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.5-flash'])('takes a PDF file part on %s, which reads files', async (model) => {
    const res = await client.chat.completions.create({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise' }, pdf] }] });
    expect(res.choices[0]?.message.content).toMatch(/Echo: Summarise/);
  });

  it('refuses an http(s) image URL to a Gemini model with a 400 saying images must be data URLs', async () => {
    const err = await client.chat.completions
      .create({ model: 'gemini-2.0-flash', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/data URL/);
  });

  it('answers 404 for an unknown id on /models/{id}', async () => {
    await expect(client.models.retrieve('no-such-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('a tool call cut mid-stream', () => {
  it('is billed for the name and the argument pieces the upstream produced, counted by the tokenizer', async () => {
    const { estimateTextTokens } = await import('../../functions/shared/usage/estimate');
    gw.simulator?.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 3 }, { times: 1 });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [tools[0]!], stream: true })
      .withResponse();
    let produced = '';
    await expect(
      (async () => {
        for await (const chunk of stream)
          for (const t of chunk.choices[0]?.delta.tool_calls ?? []) produced += (t.function?.name ?? '') + (t.function?.arguments ?? '');
      })(),
    ).rejects.toThrow(/mid-stream/);
    expect(produced).toMatch(/^get_weather/);
    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({ status: 'partial', usageEstimated: true, completionTokens: await estimateTextTokens(produced) });
    // Cut before its usage chunk: the prompt is billed by the same counting rule as its hold (usage/
    // prompt-tokens.ts: the text AND the tool definitions), not the message text alone.
    const { estimateChatPromptTokens } = await import('../../functions/shared/usage/prompt-tokens');
    const body = chatCompletionRequest.parse({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [tools[0]!], stream: true });
    const counted = await estimateChatPromptTokens(body, CATALOGUE.get('gpt-4o')!.targets[0]!);
    expect(entry?.promptTokens).toBe(counted);
    expect(entry?.promptTokensEstimate).toBe(counted);
    expect(counted).toBeGreaterThan(await estimateChatPromptTokens({ ...body, tools: undefined } as typeof body, CATALOGUE.get('gpt-4o')!.targets[0]!));
  });
});

describe('every catalogue model answers through the local server', () => {
  const chatModels = [...CATALOGUE.values()].filter((e) => e.kind === 'chat').map((e) => e.id);
  const embeddingModels = [...CATALOGUE.values()].filter((e) => e.kind === 'embedding').map((e) => e.id);
  const imageModels = [...CATALOGUE.values()].filter((e) => e.kind === 'image').map((e) => e.id);

  it.each(chatModels)('%s answers a short chat request from its own first target', async (model) => {
    const { data, response } = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: `ping ${model}` }], max_tokens: 40 })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain(`Echo: ping ${model}`);
    // A model whose first target its provider has retired is served by the successor (retirements.ts).
    const first = CATALOGUE.get(model)?.targets[0];
    const retired = first?.retirement !== undefined && Date.now() >= first.retirement.atMs;
    expect(response.headers.get('x-modelmux-model')).toBe(retired ? first.retirement?.successorModel : model);
    expect(response.headers.get('x-modelmux-attempts')).toBe('1');
  });

  it.each(embeddingModels)('%s embeds a short input', async (model) => {
    const res = await client.embeddings.create({ model, input: ['ping', 'pong'] });
    expect(res.data).toHaveLength(2);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it.each(imageModels)('%s generates an image from its own first target', async (model) => {
    const { data, response } = await client.images.generate({ model, prompt: `ping ${model}`, size: '1024x1024' }).withResponse();
    expect(
      Buffer.from(data.data?.[0]?.b64_json ?? '', 'base64')
        .subarray(1, 4)
        .toString('ascii'),
    ).toBe('PNG');
    expect(data.usage?.output_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-modelmux-model')).toBe(model);
    expect(response.headers.get('x-modelmux-attempts')).toBe('1');
  });
});

describe('capability planning (synthetic catalogue entries, no server)', () => {
  const creds = { OPENAI_API_KEY: 'k' };
  const target = (upstreamModel: string, capabilities: Partial<CatalogueTargetData['capabilities']>): CatalogueTargetData => ({
    provider: 'openai',
    upstreamModel,
    contextWindow: 8_192,
    maxOutputTokens: 1_024,
    capabilities: { tools: true, vision: false, reasoning: 'none', jsonMode: true, files: false, audio: false, ...capabilities },
  });
  const entry = (id: string, targets: CatalogueTargetData[], equivalents: string[] = []): CatalogueEntryData => ({
    id,
    kind: 'chat',
    description: id,
    ownedBy: 'test',
    created: 1,
    targets,
    equivalents,
  });
  const catalogue = buildCatalogue(
    [
      entry('no-tools', [target('plain-1', { tools: false })], ['with-tools']),
      entry('with-tools', [target('tools-1', {})], ['no-tools']),
      entry('reads-files', [target('files-1', { files: true, audio: true })]),
    ],
    [],
    {
      prices: ['plain-1', 'tools-1', 'files-1'].map((m) => ({
        key: `openai:${m}`,
        rules: [{ prices: { input: 1_000_000, output: 1_000_000 } }],
        source: 'test',
        checkedOn: '2026-01-01',
        why: 'synthetic',
      })),
    },
  );
  const need = (fields: Record<string, unknown>) =>
    requiredCapabilities(chatCompletionRequest.parse({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...fields }));
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
  const plan = (id: string, n: ReturnType<typeof need>) => planAttempts(catalogue.get(id)!, catalogue, creds, n);
  const refusal = (fn: () => unknown): unknown => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return undefined;
  };

  it('reads what a request needs from its content', () => {
    expect(need({})).toEqual({ vision: false, tools: false, files: false, audio: false, contextCache: false });
    expect(
      need({
        tools,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
              { type: 'file', file: { file_data: 'JVBE' } },
              { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } },
            ],
          },
        ],
      }),
    ).toEqual({
      vision: true,
      tools: true,
      files: true,
      audio: true,
      contextCache: false,
    });
    expect(need({ extra_body: { google: { cached_content: 'cachedContents/x1' } } }).contextCache).toBe(true);
  });

  it('refuses tools to a model without tool calling with a 400 naming it, param tools', () => {
    const err = refusal(() => plan('no-tools', need({ tools })));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param: 'tools', code: 'unsupported_capability', message: 'The model `no-tools` does not support tool calling.' });
  });

  it('skips an equivalent that lacks tool calling, and keeps it for a request without tools', () => {
    expect(plan('with-tools', need({ tools })).map((a) => a.target.upstreamModel)).toEqual(['tools-1']);
    expect(plan('with-tools', need({})).map((a) => a.target.upstreamModel)).toEqual(['tools-1', 'plain-1']);
  });

  it.each([
    ['file input', { type: 'file', file: { file_data: 'JVBE', filename: 'a.pdf' } }],
    ['audio input', { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } }],
  ])('refuses %s to a model without it with a 400 naming it, and plans it for one that has it', (label, part) => {
    const n = need({ messages: [{ role: 'user', content: [part] }] });
    expect(refusal(() => plan('with-tools', n))).toMatchObject({
      status: 400,
      param: 'messages',
      message: `The model \`with-tools\` does not support ${label}.`,
    });
    expect(plan('reads-files', n).map((a) => a.target.upstreamModel)).toEqual(['files-1']);
  });
});

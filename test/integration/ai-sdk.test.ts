import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamObject, streamText, tool, type ModelMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * The Vercel AI SDK (`ai` 6 + `@ai-sdk/openai` 3, the newest that run on Node 20), changed only in
 * base URL and key: its default provider `openai('model')` speaks the Responses API, `openai.chat()`
 * Chat Completions. Both must work for generateText, streamText, generateObject and tools, across
 * provider families, with nothing modelmux-specific in the client code.
 */

let gw: RunningGateway;
let openai: OpenAIProvider;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `aisdk-${process.pid}`, devFreeTokens: 100_000_000 });
  openai = createOpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey });
});

afterAll(async () => {
  await gw?.close();
});

/** Which API the simulator's upstream saw is not the question: which path the gateway served is. */
function servedPaths(): string[] {
  return gw.simulator?.requests.map((r) => r.path) ?? [];
}

const weatherTool = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});

const Recipe = z.object({
  name: z.string(),
  servings: z.number().int().min(1),
  ingredients: z.array(z.object({ item: z.string(), grams: z.number() })).min(1),
  vegetarian: z.boolean(),
});

const API: Array<['Responses API (default provider)' | 'Chat Completions (openai.chat)', (model: string) => ReturnType<OpenAIProvider['chat']>]> = [
  ['Responses API (default provider)', (m) => openai(m)],
  ['Chat Completions (openai.chat)', (m) => openai.chat(m)],
];

describe.each(API)('AI SDK over %s', (_label, model) => {
  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3'])('generateText with %s', async (name) => {
    const { text, usage, finishReason } = await generateText({ model: model(name), prompt: `Hello from the AI SDK to ${name}` });
    expect(text).toMatch(/^Echo: Hello from the AI SDK to/);
    expect(finishReason).toBe('stop');
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
  });

  it('streamText streams the same text and reports usage', async () => {
    const { text } = await generateText({ model: model('gpt-4o-mini'), prompt: 'Stream with the AI SDK' });
    const result = streamText({ model: model('gpt-4o-mini'), prompt: 'Stream with the AI SDK' });
    const parts: string[] = [];
    for await (const delta of result.textStream) parts.push(delta);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join('')).toBe(text);
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    expect(await result.finishReason).toBe('stop');
  });

  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'minimax'])('generateObject returns a schema-valid object with %s', async (name) => {
    const { object } = await generateObject({ model: model(name), schema: Recipe, prompt: 'A pancake recipe' });
    expect(Recipe.safeParse(object).success).toBe(true);
  });

  it('streamObject ends with a schema-valid object', async () => {
    const result = streamObject({ model: model('claude-3-5-sonnet'), schema: Recipe, prompt: 'A soup recipe' });
    let partials = 0;
    for await (const _partial of result.partialObjectStream) partials++;
    expect(partials).toBeGreaterThan(0);
    expect(Recipe.safeParse(await result.object).success).toBe(true);
  });

  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash'])('runs a tool loop with %s: the call, the tool result, the final answer', async (name) => {
    const { text, steps } = await generateText({
      model: model(name),
      tools: { weather: weatherTool },
      stopWhen: stepCountIs(3),
      prompt: 'What is the weather in Paris?',
    });
    expect(steps[0]?.toolCalls).toEqual([expect.objectContaining({ toolName: 'weather', input: { city: 'Paris' } })]);
    expect(text).toBe('Tool said: {"city":"Paris","tempC":21}');
  });

  it('streams a tool loop', async () => {
    const result = streamText({ model: model('gpt-4o'), tools: { weather: weatherTool }, stopWhen: stepCountIs(3), prompt: 'Weather in Paris?' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('Tool said: {"city":"Paris","tempC":21}');
    expect((await result.steps).length).toBe(2);
  });
});

describe('reasoning through the Responses API', () => {
  // The AI SDK asks for a summary only on a model it knows reasons (o-series, gpt-5); forceReasoning
  // names any other as one, and it then reads the reasoning from the summary alone.
  const reasoning = { openai: { forceReasoning: true, reasoningSummary: 'auto', reasoningEffort: 'low' } };

  it.each(['deepseek-r1', 'claude-sonnet-4-6', 'gemini-2.5-flash'])('%s: generateText and streamText show the reasoning', async (name) => {
    const prompt = `Think about the AI SDK and ${name}`;
    const buffered = await generateText({ model: openai(name), prompt, providerOptions: reasoning });
    expect(buffered.reasoningText, name).toMatch(/\S/);
    expect(buffered.text).toMatch(/^Echo: Think about/);
    const streamed = streamText({ model: openai(name), prompt, providerOptions: reasoning });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(await streamed.reasoningText, name).toBe(buffered.reasoningText);
    expect(text).toBe(buffered.text);
  });
});

describe('conversations that replay earlier turns', () => {
  /** The default provider with a tap on its request bodies (what the SDK really sends). */
  function tapped(): { provider: OpenAIProvider; bodies: Array<{ input: Array<Record<string, unknown>>; store?: boolean }> } {
    const bodies: Array<{ input: Array<Record<string, unknown>>; store?: boolean }> = [];
    const provider = createOpenAI({
      baseURL: gw.baseUrl,
      apiKey: gw.apiKey,
      fetch: async (input, init) => {
        if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body) as (typeof bodies)[number]);
        return fetch(input, init);
      },
    });
    return { provider, bodies };
  }

  /** A stream's outcome, awaited: what generateText returns for the same call. */
  async function settled<T extends { text: PromiseLike<string>; steps: PromiseLike<unknown[]>; response: PromiseLike<{ messages: ModelMessage[] }> }>(r: T) {
    const [text, steps, response] = await Promise.all([r.text, r.steps, r.response]);
    return { text, steps, response };
  }

  const referencesIn = (body: { input: Array<Record<string, unknown>> } | undefined): string[] =>
    (body?.input ?? []).filter((i) => i['type'] === 'item_reference').map((i) => String(i['id']));

  it('the default provider (store: true) replays earlier answers as item references, and a useChat-style loop goes on for three turns', async () => {
    const { provider, bodies } = tapped();
    const messages: ModelMessage[] = [];
    for (const turn of ['first turn', 'second turn', 'third turn']) {
      messages.push({ role: 'user', content: turn });
      const result = await generateText({ model: provider('gpt-4o'), messages });
      expect(result.text).toMatch(new RegExp(`^Echo: ${turn}`));
      messages.push(...result.response.messages);
    }
    // The SDK's own replay: no store flag (OpenAI's default, true), earlier answers as their msg_ ids.
    expect(bodies[2]?.store).toBeUndefined();
    expect(referencesIn(bodies[2])).toHaveLength(2);
    expect(referencesIn(bodies[2]).every((id) => id.startsWith('msg_'))).toBe(true);
    const upstream = gw.simulator?.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(upstream.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(upstream.messages[1]?.content).toBe((messages[1] as { content: Array<{ text: string }> }).content[0]?.text);
  });

  it('streams a multi-turn conversation with item references (streamText, default provider)', async () => {
    const { provider, bodies } = tapped();
    const first = streamText({ model: provider('claude-3-5-sonnet'), prompt: 'first streamed turn' });
    const firstText = await first.text;
    const history: ModelMessage[] = [
      { role: 'user', content: 'first streamed turn' },
      ...(await first.response).messages,
      { role: 'user', content: 'second streamed turn' },
    ];
    const second = streamText({ model: provider('claude-3-5-sonnet'), messages: history });
    let text = '';
    for await (const delta of second.textStream) text += delta;
    expect(text).toMatch(/^Echo: second streamed turn/);
    expect(referencesIn(bodies.at(-1))).toHaveLength(1);
    const upstream = gw.simulator?.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(upstream.messages[1]?.content)).toContain(JSON.stringify(firstText).slice(1, -1));
  });

  it.each([false, true])(
    "runs a reasoning model's tool loop with the tool result (deepseek-r1: reasoning replayed by reference), then a next turn; streamed: %s",
    async (stream) => {
      const { provider, bodies } = tapped();
      const call = { model: provider('deepseek-r1'), tools: { weather: weatherTool }, stopWhen: stepCountIs(3), prompt: 'What is the weather in Paris?' };
      const { text, steps, response } = stream ? await settled(streamText(call)) : await generateText(call);
      expect(steps).toHaveLength(2);
      expect(text).toBe('Tool said: {"city":"Paris","tempC":21}');
      // Step 2: the stored reasoning by reference, the call and its result inline.
      const step2 = bodies[1];
      expect(referencesIn(step2)).toEqual([expect.stringMatching(/^rs_/)]);
      expect(step2?.input.map((i) => i['type'] ?? i['role'])).toEqual(['user', 'item_reference', 'function_call', 'function_call_output']);
      const next = await generateText({
        model: provider('deepseek-r1'),
        tools: { weather: weatherTool },
        toolChoice: 'none',
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }, ...response.messages, { role: 'user', content: 'thanks' }],
      });
      expect(next.text).toMatch(/Echo: thanks/);
      const upstream = gw.simulator?.requests.at(-1)?.body as { messages: Array<{ role: string; reasoning_content?: string; tool_calls?: unknown[] }> };
      expect(upstream.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
      expect(upstream.messages[1]?.tool_calls).toHaveLength(1);
    },
  );

  it('a tool loop on the default provider (gpt-4o), buffered, then a streamed one in the same conversation referencing its answer', async () => {
    const { provider, bodies } = tapped();
    const first = await generateText({
      model: provider('gpt-4o'),
      tools: { weather: weatherTool },
      stopWhen: stepCountIs(3),
      prompt: 'What is the weather in Paris?',
    });
    expect(first.text).toBe('Tool said: {"city":"Paris","tempC":21}');
    const before = bodies.length;
    const history: ModelMessage[] = [
      { role: 'user', content: 'What is the weather in Paris?' },
      ...first.response.messages,
      { role: 'user', content: 'And now, the weather?' },
    ];
    const second = streamText({ model: provider('gpt-4o'), tools: { weather: weatherTool }, stopWhen: stepCountIs(3), messages: history });
    let text = '';
    for await (const delta of second.textStream) text += delta;
    expect(text).toBe('Tool said: {"city":"Paris","tempC":21}');
    expect((await second.steps).length).toBe(2);
    // Its first step: the earlier call and result inline, the earlier answer by reference.
    expect(bodies[before]?.input.map((i) => i['type'] ?? i['role'])).toEqual(['user', 'function_call', 'function_call_output', 'item_reference', 'user']);
    expect(referencesIn(bodies[before])).toEqual([expect.stringMatching(/^msg_/)]);
    const upstream = gw.simulator?.requests.at(-2)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(upstream.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(upstream.messages[3]?.content).toBe(first.text);
  });

  it('still works with store: false (every item sent whole), on both APIs', async () => {
    const first = await generateText({ model: openai('gpt-4o'), prompt: 'first turn' });
    const history = [{ role: 'user' as const, content: 'first turn' }, ...first.response.messages, { role: 'user' as const, content: 'second turn' }];
    const viaResponses = await generateText({ model: openai('gpt-4o'), messages: history, providerOptions: { openai: { store: false } } });
    expect(viaResponses.text).toMatch(/^Echo: second turn/);
    const viaChat = await generateText({ model: openai.chat('gpt-4o'), messages: history });
    expect(viaChat.text).toMatch(/^Echo: second turn/);
    const upstream = gw.simulator?.requests.at(-2)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(upstream.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(upstream.messages[1]?.content).toBe(first.text);
  });

  it('continues with previousResponseId (the SDK then sends only the new turn)', async () => {
    const { provider, bodies } = tapped();
    const first = await generateText({ model: provider('gpt-4o'), prompt: 'remember quince' });
    const second = await generateText({
      model: provider('gpt-4o'),
      prompt: 'what did I say?',
      providerOptions: { openai: { previousResponseId: first.response.id } },
    });
    expect(second.text).toMatch(/^Echo: what did I say\?/);
    expect(bodies.at(-1)).toMatchObject({ previous_response_id: first.response.id });
    const upstream = gw.simulator?.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(upstream.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'remember quince' }] },
      { role: 'assistant', content: first.text },
      { role: 'user', content: [{ type: 'text', text: 'what did I say?' }] },
    ]);
  });
});

describe('which API each provider style used', () => {
  it('the default provider posts to /v1/responses, openai.chat() to /v1/chat/completions, both reaching the same upstream', async () => {
    const seen: string[] = [];
    const tapping = createOpenAI({
      baseURL: gw.baseUrl,
      apiKey: gw.apiKey,
      fetch: async (input, init) => {
        seen.push(new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).pathname);
        return fetch(input, init);
      },
    });
    const before = servedPaths().length;
    await generateText({ model: tapping('gpt-4o-mini'), prompt: 'one' });
    await generateText({ model: tapping.chat('gpt-4o-mini'), prompt: 'two' });
    expect(seen).toEqual(['/v1/responses', '/v1/chat/completions']);
    expect(servedPaths().slice(before)).toEqual(['/openai/v1/chat/completions', '/openai/v1/chat/completions']);
  });
});

import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamObject, streamText, tool } from 'ai';
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
    const { text, steps } = await generateText({ model: model(name), tools: { weather: weatherTool }, stopWhen: stepCountIs(3), prompt: 'What is the weather in Paris?' });
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

describe('conversations that replay earlier turns', () => {
  it('works on both APIs when the history carries the earlier answers (Responses: store false)', async () => {
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

  it('says plainly what to change when the SDK sends item references (its default store: true)', async () => {
    const first = await generateText({ model: openai('gpt-4o'), prompt: 'first turn' });
    const err = await generateText({ model: openai('gpt-4o'), messages: [{ role: 'user', content: 'first turn' }, ...first.response.messages, { role: 'user', content: 'again' }], maxRetries: 0 }).catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/modelmux stores no responses.*store = false/);
  });

  it('runs a reasoning model\'s tool loop (deepseek-r1, reasoning items replayed) with store false', async () => {
    const { text, steps } = await generateText({
      model: openai('deepseek-r1'),
      tools: { weather: weatherTool },
      stopWhen: stepCountIs(3),
      prompt: 'What is the weather in Paris?',
      providerOptions: { openai: { store: false } },
    });
    expect(steps).toHaveLength(2);
    expect(text).toBe('Tool said: {"city":"Paris","tempC":21}');
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

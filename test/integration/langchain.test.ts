import { AIMessageChunk, HumanMessage, ToolMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * LangChain (`@langchain/openai` 1.5 + `@langchain/core` 1.4, the newest that run on Node 20) changed
 * only in base URL and key: an agent's tool round trip with `bindTools` — LangChain sends `name` on
 * its tool messages, which OpenAI accepts (and modelmux once refused) — and
 * `withStructuredOutput`, over Chat Completions and over the Responses API (`useResponsesApi`).
 */

let gw: RunningGateway;
/** The JSON bodies LangChain posted, in order (observed through its fetch, unchanged). */
const sent: Array<{ path: string; body: Record<string, unknown> }> = [];

const tappingFetch: typeof fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if (typeof init?.body === 'string') sent.push({ path: url.pathname, body: JSON.parse(init.body) as Record<string, unknown> });
  return fetch(input, init);
};

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `langchain-${process.pid}`, devFreeTokens: 100_000_000 });
});

afterAll(async () => {
  await gw?.close();
});

function chat(model: string, opts: { useResponsesApi?: boolean; streaming?: boolean } = {}): ChatOpenAI {
  return new ChatOpenAI({ model, apiKey: gw.apiKey, maxRetries: 0, configuration: { baseURL: gw.baseUrl, fetch: tappingFetch }, ...opts });
}

const getWeather = tool(async ({ city }: { city: string }) => JSON.stringify({ city, tempC: 21 }), {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

/** One agent step: the model's tool calls, each run, results appended; then the model again. */
async function roundTrip(model: ChatOpenAI, streamed = false): Promise<{ history: BaseMessage[]; final: AIMessage }> {
  const withTools = model.bindTools([getWeather]);
  const ask = async (history: BaseMessage[]): Promise<AIMessage> => {
    if (!streamed) return withTools.invoke(history);
    // The streamed way an agent consumes a model: chunks as they come, joined. (`invoke` with
    // `streaming: true` would also estimate token counts with js-tiktoken, which downloads its
    // ranks from tiktoken.pages.dev: a network call outside this machine's reach.)
    let joined: AIMessageChunk | undefined;
    for await (const chunk of await withTools.stream(history)) joined = joined === undefined ? chunk : joined.concat(chunk);
    if (joined === undefined) throw new Error('empty stream');
    return joined;
  };
  const history: BaseMessage[] = [new HumanMessage('What is the weather in Paris?')];
  const ai = await ask(history);
  expect(ai.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Paris' } })]);
  history.push(ai);
  for (const call of ai.tool_calls ?? []) history.push(await getWeather.invoke(call));
  const final = await ask(history);
  return { history, final };
}

const Person = z.object({ name: z.string(), age: z.number().int(), languages: z.array(z.string()) });

describe('LangChain over Chat Completions', () => {
  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3'])(
    'runs a bindTools round trip with %s, its tool message carrying name',
    async (model) => {
      sent.length = 0;
      const { history, final } = await roundTrip(chat(model));
      expect(history.at(-1)).toBeInstanceOf(ToolMessage);
      expect(final.content).toBe('Tool said: {"city":"Paris","tempC":21}');
      // What LangChain really sent: the tool message with `name`, accepted as OpenAI accepts it.
      const messages = sent.at(-1)?.body['messages'] as Array<Record<string, unknown>>;
      expect(messages.at(-1)).toMatchObject({ role: 'tool', name: 'get_weather', tool_call_id: expect.any(String) });
    },
  );

  it.each(['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash'])('streams a round trip with %s (model.stream, chunks joined)', async (model) => {
    const { final } = await roundTrip(chat(model), true);
    expect(final.text).toBe('Tool said: {"city":"Paris","tempC":21}');
  });

  it.each([
    ['jsonSchema', 'gpt-4o'],
    ['jsonSchema', 'claude-3-5-sonnet'],
    ['jsonSchema', 'gemini-2.0-flash'],
    ['functionCalling', 'gpt-4o'],
    ['functionCalling', 'claude-3-5-sonnet'],
    ['jsonSchema', 'deepseek-v3'],
    ['jsonSchema', 'minimax'],
  ] as const)('withStructuredOutput (%s) with %s returns a schema-valid object', async (method, model) => {
    const person = await chat(model).withStructuredOutput(Person, { name: 'person', method }).invoke('Describe a person');
    expect(Person.safeParse(person).success).toBe(true);
  });
});

describe('LangChain over the Responses API (useResponsesApi)', () => {
  it('answers, runs a bindTools round trip and returns structured output', async () => {
    sent.length = 0;
    const model = chat('gpt-4o', { useResponsesApi: true });
    const hello = await model.invoke('Hello over Responses');
    expect(hello.text).toMatch(/^Echo: Hello over Responses/);
    const { final } = await roundTrip(chat('claude-3-5-sonnet', { useResponsesApi: true }));
    expect(final.text).toBe('Tool said: {"city":"Paris","tempC":21}');
    const person = await chat('gemini-2.0-flash', { useResponsesApi: true }).withStructuredOutput(Person, { name: 'person' }).invoke('Describe a person');
    expect(Person.safeParse(person).success).toBe(true);
    expect(sent.length).toBeGreaterThan(3);
    expect(sent.every((s) => s.path === '/v1/responses')).toBe(true);
  });
});

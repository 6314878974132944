import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * Structured output end to end with the openai SDK's own helpers (`chat.completions.parse` with
 * `zodResponseFormat`, and its streaming helper): `response_format` json_schema reaches every provider
 * family in its own form (OpenAI-shaped hosts as sent, Gemini `responseJsonSchema`, Anthropic's
 * JSON-mode instruction), and the simulator answers schema-valid JSON in each.
 * Also: a conversation replayed the way the SDK returned it — the assistant message with its
 * `refusal: null` and `annotations: []` — is accepted, as OpenAI accepts it.
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `structured-${process.pid}`, devFreeTokens: 100_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

const Event = z.object({
  title: z.string(),
  date: z.string(),
  attendees: z.array(z.object({ name: z.string(), email: z.string() })),
  kind: z.enum(['meeting', 'party']),
  location: z.string().nullable(),
  seats: z.number().int(),
});

const FAMILIES = ['gpt-4o', 'o3-mini', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3', 'deepseek-r1', 'minimax', 'llama-3-70b'];

describe('chat.completions.parse with zodResponseFormat', () => {
  it.each(FAMILIES)('%s answers a parsed, schema-valid object', async (model) => {
    const res = await client.chat.completions.parse({
      model,
      messages: [{ role: 'user', content: 'Plan a team meeting' }],
      response_format: zodResponseFormat(Event, 'event'),
    });
    const parsed = res.choices[0]?.message.parsed;
    expect(Event.safeParse(parsed).success).toBe(true);
    expect(res.choices[0]?.message.refusal).toBeNull();
  });

  it('the streaming helper assembles the same object', async () => {
    const stream = client.chat.completions.stream({
      model: 'claude-3-5-sonnet',
      messages: [{ role: 'user', content: 'Plan a party' }],
      response_format: zodResponseFormat(Event, 'event'),
    });
    const final = await stream.finalChatCompletion();
    expect(Event.safeParse(final.choices[0]?.message.parsed).success).toBe(true);
  });

  it('json_object mode answers one JSON object on every family', async () => {
    for (const model of ['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3']) {
      const res = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Reply in JSON' }],
        response_format: { type: 'json_object' },
      });
      expect(JSON.parse(res.choices[0]?.message.content ?? ''), model).toEqual({ reply: expect.stringMatching(/^Echo: Reply in JSON/) });
    }
  });
});

describe('a conversation replayed as the SDK returned it', () => {
  it('accepts the assistant message with refusal: null and annotations: [], as OpenAI returns and accepts it', async () => {
    const first = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'first question' }] });
    const echoed = { ...first.choices[0]?.message, annotations: [] } as OpenAI.ChatCompletionMessage;
    expect(echoed).toMatchObject({ role: 'assistant', refusal: null, annotations: [] });
    for (const model of ['gpt-4o', 'claude-3-5-sonnet', 'gemini-2.0-flash']) {
      const second = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'first question' }, echoed, { role: 'user', content: 'second question' }],
      });
      expect(second.choices[0]?.message.content, model).toMatch(/^Echo: second question/);
    }
    // The field OpenAI ignores is not sent upstream: it is no instruction a model could follow.
    const upstream = gw.simulator?.requests.find((r) => r.provider === 'openai' && JSON.stringify(r.body).includes('second question'))?.body as {
      messages: Array<Record<string, unknown>>;
    };
    expect(upstream.messages[1]).toEqual({ role: 'assistant', content: first.choices[0]?.message.content, refusal: null });
  });
});

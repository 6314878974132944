/**
 * Structured output in every wire format the adapters translate `response_format` to, through the
 * official SDKs against the simulator: OpenAI-shaped hosts' `response_format`, Anthropic's
 * `output_config.format` and the JSON-mode system prompt modelmux's Anthropic adapter sends, Gemini's
 * `responseJsonSchema` / `responseSchema`. Each answer must parse as JSON and conform to the schema
 * (checked with Ajv, a JSON Schema validator independent of the simulator).
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, Type } from '@google/genai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jsonModeInstruction } from '../../../functions/shared/providers/anthropic/json-mode';
import { startSimulator, type Simulator } from '../../../local/simulator/index.js';
import type { ProviderName } from '../../../functions/shared/providers/manifest.js';
import { valueFromSchema } from '../../../local/simulator/schema-value.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ chunkDelayMs: 0 });
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

/** A schema as zod-to-json-schema / the AI SDK emit them: $defs and $ref, nullable unions, formats, bounds, enums. */
const ORDER = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    customer: { $ref: '#/$defs/customer' },
    items: { type: 'array', minItems: 2, items: { $ref: '#/$defs/item' } },
    status: { type: 'string', enum: ['open', 'shipped'] },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    placed: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'customer', 'items', 'status', 'note', 'placed'],
  additionalProperties: false,
  $defs: {
    customer: {
      type: 'object',
      properties: { email: { type: 'string', format: 'email' }, vip: { type: 'boolean' } },
      required: ['email', 'vip'],
      additionalProperties: false,
    },
    item: {
      type: 'object',
      properties: { sku: { type: 'string', minLength: 8 }, qty: { type: 'integer', minimum: 3, maximum: 9 }, price: { type: 'number', exclusiveMinimum: 10 } },
      required: ['sku', 'qty', 'price'],
      additionalProperties: false,
    },
  },
} as const;

const ajv = new Ajv2020({ strict: false, formats: { uuid: /^[0-9a-f-]{36}$/, email: /^\S+@\S+$/, 'date-time': /^\d{4}-\d\d-\d\dT/ } });
const conforms = ajv.compile(ORDER);

function expectOrder(text: string | null | undefined): void {
  const value: unknown = JSON.parse(text ?? '');
  expect(conforms(value), JSON.stringify(conforms.errors)).toBe(true);
}

describe('a conforming value from a JSON Schema', () => {
  it('follows $ref, bounds, formats, enums, minItems and nullable unions', () => {
    const v = valueFromSchema(ORDER, { all: true });
    expect(conforms(v), JSON.stringify(conforms.errors)).toBe(true);
    expect(v).toMatchObject({ status: 'open', note: 'Paris', items: [{ qty: 3 }, { qty: 3 }] });
  });

  it('merges allOf, takes const, and keeps integers on their multipleOf', () => {
    expect(
      valueFromSchema({
        allOf: [
          { type: 'object', properties: { a: { const: 7 } }, required: ['a'] },
          { properties: { b: { type: 'integer', minimum: 5, multipleOf: 4 } }, required: ['b'] },
        ],
      }),
    ).toEqual({ a: 7, b: 8 });
  });
});

describe('OpenAI-shaped hosts: response_format', () => {
  const hosts: ProviderName[] = ['openai', 'deepseek', 'minimax', 'together', 'deepinfra'];

  it.each(hosts)('%s answers json_schema with a conforming object, buffered and streamed', async (provider) => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: sim.urls[provider], maxRetries: 0 });
    const params = {
      model: 'm-1',
      messages: [{ role: 'user' as const, content: 'Make me an order' }],
      response_format: { type: 'json_schema' as const, json_schema: { name: 'order', schema: ORDER, strict: true } },
      // MiniMax thinks inline (`<think>…</think>` before the answer) unless asked to split it out, as
      // modelmux's MiniMax adapter does (providers.md §5.2).
      ...(provider === 'minimax' ? { reasoning_split: true } : {}),
    };
    const res = await client.chat.completions.create(params);
    expectOrder(res.choices[0]?.message.content);
    let text = '';
    for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
    expectOrder(text);
  });

  it('answers json_object with one JSON object, and plain text without a response_format', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: sim.urls.openai, maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'JSON please' }],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(res.choices[0]?.message.content ?? '')).toEqual({ reply: expect.stringMatching(/^Echo: JSON please/) });
    const plain = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'text please' }],
      response_format: { type: 'text' },
    });
    expect(plain.choices[0]?.message.content).toMatch(/^Echo: text please/);
  });
});

describe('Anthropic Messages', () => {
  const anthropic = (): Anthropic => new Anthropic({ apiKey: 'sk-ant-test', baseURL: sim.urls.anthropic, maxRetries: 0 });

  it("follows modelmux's JSON-mode system prompt, with the schema on its last line", async () => {
    const system = jsonModeInstruction({ type: 'json_schema', json_schema: { name: 'order', schema: ORDER } });
    const res = await anthropic().messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      system,
      messages: [{ role: 'user', content: 'Make me an order' }],
    });
    const block = res.content[0];
    expectOrder(block?.type === 'text' ? block.text : undefined);
    const json = jsonModeInstruction({ type: 'json_object' });
    const obj = await anthropic().messages.create({ model: 'claude-sonnet-4-6', max_tokens: 1024, system: json, messages: [{ role: 'user', content: 'hi' }] });
    const first = obj.content[0];
    expect(JSON.parse(first?.type === 'text' ? first.text : '')).toMatchObject({ reply: expect.stringMatching(/^Echo: hi/) });
  });

  it('honours output_config.format json_schema, streamed', async () => {
    const stream = anthropic().messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Make me an order' }],
      output_config: { format: { type: 'json_schema', schema: ORDER } },
    } as unknown as Parameters<Anthropic['messages']['stream']>[0]);
    const final = await stream.finalMessage();
    const block = final.content[0];
    expectOrder(block?.type === 'text' ? block.text : undefined);
  });
});

describe('Gemini generateContent', () => {
  const genai = (): GoogleGenAI => new GoogleGenAI({ apiKey: 'AIza-test', httpOptions: { baseUrl: `${sim.baseUrl}/gemini` } });

  it('honours responseJsonSchema (what modelmux sends), buffered and streamed', async () => {
    const config = { responseMimeType: 'application/json', responseJsonSchema: ORDER };
    const res = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents: 'Make me an order', config });
    expectOrder(res.text);
    let text = '';
    for await (const chunk of await genai().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Make me an order', config }))
      text += chunk.text ?? '';
    expectOrder(text);
  });

  it('honours the OpenAPI-style responseSchema with upper-case types', async () => {
    const res = await genai().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'a city',
      config: {
        responseMimeType: 'application/json',
        responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING }, pop: { type: Type.INTEGER } }, required: ['city', 'pop'] },
      },
    });
    expect(JSON.parse(res.text ?? '')).toEqual({ city: 'Paris', pop: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../../functions/shared/errors/gateway-errors';
import { geminiAdapter } from '../../../functions/shared/providers/gemini/adapter';
import { BASE_URL, chatRequest, ctxFor } from './helpers';

/**
 * The exact request sent to Gemini (providers.md §3.1–3.2) for the OpenAI request a client sends.
 * Context: `gemini-2.0-flash` from the real catalogue (served by gemini-2.5-flash-lite, reasoning
 * `none`); thinking tests use `gemini-2.5-flash` (reasoning `exposed`).
 */

const build = (fields: Record<string, unknown>, model = 'gemini-2.0-flash') => geminiAdapter.buildChatRequest(chatRequest(fields), ctxFor(model));
const bodyOf = (fields: Record<string, unknown>, model = 'gemini-2.0-flash') => JSON.parse(build(fields, model).body) as Record<string, unknown>;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('Gemini request: endpoint, auth and defaults', () => {
  it('posts to :streamGenerateContent?alt=sse (a buffered client request too) with the key in x-goog-api-key and the default temperature', () => {
    for (const stream of [false, true]) {
      const built = build({ stream });
      expect(built.url).toBe(`${BASE_URL}/models/gemini-2.5-flash-lite:streamGenerateContent?alt=sse`);
      expect(built.headers).toEqual({ 'content-type': 'application/json', accept: 'text/event-stream', 'x-goog-api-key': 'gemini-test-key' });
      expect(JSON.parse(built.body)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { temperature: 0.7 } });
    }
  });
});

describe('Gemini request: messages', () => {
  it('hoists system and developer messages, in order, into systemInstruction and maps assistant to model', () => {
    const body = bodyOf({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Bonjour !' },
        { role: 'system', content: 'Never use emoji.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
      ],
    });
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }, { text: 'Never use emoji.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Bonjour !' }] },
        { role: 'user', parts: [{ text: 'Weather in Paris?' }, { text: 'And tomorrow?' }] },
      ],
      generationConfig: { temperature: 0.7 },
    });
  });

  it('sends data-URL images, audio and files inline', () => {
    const body = bodyOf({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'a.pdf' } },
            { type: 'image_url', image_url: { url: 'data:image/svg+xml,%3Csvg%2F%3E' } },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Compare these.' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0x' } },
          { inlineData: { mimeType: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } },
        ],
      },
    ]);
  });

  it.each([
    'https://example.com/photos/cat.WEBP?size=large#top',
    'http://example.com/render?id=7',
    'https://generativelanguage.googleapis.com/v1beta/files/abc',
  ])('refuses an http(s) image URL (%s) with a 400 saying Gemini models take images as data URLs, before any upstream call', (url) => {
    const err = thrown(() =>
      build({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      }),
    );
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param: 'messages[0].content[1].image_url.url', code: 'unsupported_image_url' });
    expect((err as InvalidRequestError).message).toMatch(/not supported for Gemini models.*data URL/);
  });

  it.each([
    [{ type: 'file', file: { file_id: 'file-abc' } }, 'messages[0].content[0].file.file_id'],
    [{ type: 'image_url', image_url: { url: 'ftp://example.com/cat.png' } }, 'messages[0].content[0].image_url.url'],
    [{ type: 'image_url', image_url: { url: 'data:image/png;base64' } }, 'messages[0].content[0].image_url.url'],
  ])('rejects a part Gemini cannot take with a 400 naming it (%o)', (part, param) => {
    const err = thrown(() => build({ messages: [{ role: 'user', content: [part] }] }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).param).toBe(param);
  });

  it('replays a full tool round trip: tool_calls as functionCall parts, results as one user turn of functionResponse parts named from the call ids', () => {
    const body = bodyOf({
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temp_c":21,"sky":"clear"}' },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '14:05' }] },
        { role: 'assistant', content: '21 °C and clear; it is 14:05.' },
        { role: 'user', content: 'And in Tokyo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_forecast', arguments: '{"city":"Tokyo"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '[1,2,3]' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      {
        role: 'model',
        parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp_c: 21, sky: 'clear' } } },
          { functionResponse: { name: 'get_time', response: { result: '14:05' } } },
        ],
      },
      { role: 'model', parts: [{ text: '21 °C and clear; it is 14:05.' }] },
      { role: 'user', parts: [{ text: 'And in Tokyo?' }] },
      // A history may repeat an id (older modelmux replies restarted at call_0): the latest call wins.
      { role: 'model', parts: [{ functionCall: { name: 'get_forecast', args: { city: 'Tokyo' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_forecast', response: { result: [1, 2, 3] } } }] },
    ]);
  });

  it('sends a thought signature echoed in extra_content.google back as thoughtSignature on its functionCall part', () => {
    const signed = (id: string, name: string, args: string, sig?: string) => ({
      id,
      type: 'function',
      function: { name, arguments: args },
      ...(sig === undefined ? {} : { extra_content: { google: { thought_signature: sig } } }),
    });
    const body = bodyOf(
      {
        messages: [
          { role: 'user', content: 'Weather and time in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [signed('call_a', 'get_weather', '{"city":"Paris"}', 'CiQB0e2Kb7sig+/A=='), signed('call_b', 'get_time', '{}')],
          },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temp_c":21}' },
          { role: 'tool', tool_call_id: 'call_b', content: '14:05' },
        ],
      },
      'gemini-2.5-flash',
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQB0e2Kb7sig+/A==' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp_c: 21 } } },
          { functionResponse: { name: 'get_time', response: { result: '14:05' } } },
        ],
      },
    ]);
  });

  it('reads only extra_content.google.thought_signature on an echoed tool call; other keys there are dropped, as OpenAI drops unknown message keys', () => {
    const call = (extra: unknown) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: extra }],
    });
    const callOf = (extra: unknown) => {
      const m = chatRequest({ messages: [{ role: 'user', content: 'q' }, call(extra)] }).messages[1];
      const c = m?.role === 'assistant' ? m.tool_calls?.[0] : undefined;
      return c?.type === 'function' ? c : undefined;
    };
    expect(callOf({ google: { thought_signature: 's' } })).toMatchObject({ extra_content: { google: { thought_signature: 's' } } });
    expect(callOf({ google: { thought_signature: 's', other: 1 } })).toMatchObject({ extra_content: { google: { thought_signature: 's' } } });
    expect(callOf({ google: { thought_signature: 's', other: 1 } })?.extra_content?.google).not.toHaveProperty('other');
    expect(callOf({ openai: {} })?.extra_content).toEqual({});
    expect(() => chatRequest({ messages: [{ role: 'user', content: 'q' }, call({ google: { thought_signature: 7 } })] })).toThrow();
  });

  it('rejects a tool result whose tool_call_id no assistant message issued', () => {
    const err = thrown(() =>
      build({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_9', content: 'x' },
        ],
      }),
    );
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).param).toBe('messages[1].tool_call_id');
  });

  it('drops echoed reasoning_content and empty assistant turns', () => {
    const body = bodyOf({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b', reasoning_content: 'thinking…' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'c' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }] },
      { role: 'model', parts: [{ text: 'b' }] },
      { role: 'user', parts: [{ text: 'c' }] },
    ]);
  });
});

describe('Gemini request: tools', () => {
  const weather = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };
  const declarations = [
    { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  ];

  it.each([
    [undefined, undefined],
    ['auto', { functionCallingConfig: { mode: 'AUTO' } }],
    ['none', { functionCallingConfig: { mode: 'NONE' } }],
    ['required', { functionCallingConfig: { mode: 'ANY' } }],
    [{ type: 'function', function: { name: 'get_weather' } }, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } }],
  ])('sends tools as functionDeclarations with tool_choice %o as toolConfig', (toolChoice, toolConfig) => {
    const body = bodyOf({ tools: [weather], ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }) });
    const expected: Record<string, unknown> = {
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: { temperature: 0.7 },
      tools: [{ functionDeclarations: declarations }],
    };
    if (toolConfig !== undefined) expected.toolConfig = toolConfig;
    expect(body).toEqual(expected);
  });

  it('sends no toolConfig without tools', () => {
    expect(bodyOf({ tool_choice: 'none' })).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { temperature: 0.7 } });
  });

  it('strips JSON Schema keys Gemini rejects and leaves parameters unset for a function without any', () => {
    const body = bodyOf({
      tools: [
        {
          type: 'function',
          function: {
            name: 'book',
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              additionalProperties: false,
              properties: { room: { $ref: '#/$defs/Room', description: 'Which room' }, when: { type: 'string', format: 'date-time' } },
              required: ['room', 'when'],
              $defs: {
                Room: {
                  type: 'object',
                  additionalProperties: false,
                  properties: { floor: { type: ['integer', 'null'], enum: [1, 2, null] } },
                  required: ['floor'],
                },
              },
            },
            strict: true,
          },
        },
        { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } },
      ],
    });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'book',
            parameters: {
              type: 'object',
              properties: {
                room: {
                  type: 'object',
                  description: 'Which room',
                  properties: { floor: { type: 'integer', nullable: true, enum: ['1', '2'] } },
                  required: ['floor'],
                },
                when: { type: 'string', format: 'date-time' },
              },
              required: ['room', 'when'],
            },
          },
          { name: 'ping' },
        ],
      },
    ]);
  });
});

describe('Gemini request: generationConfig', () => {
  it('maps sampling, stop and output limits', () => {
    const body = bodyOf({ temperature: 0, top_p: 0.9, max_tokens: 256, stop: 'END', n: 2, seed: 7, presence_penalty: 0.5, frequency_penalty: -0.5 });
    expect(body.generationConfig).toEqual({
      temperature: 0,
      topP: 0.9,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
    });
  });

  it('prefers max_completion_tokens, caps it at the target output limit, and keeps a stop list', () => {
    const body = bodyOf({ max_tokens: 10, max_completion_tokens: 10_000_000, stop: ['a', 'b'] });
    expect(body.generationConfig).toEqual({ temperature: 0.7, maxOutputTokens: 65_536, stopSequences: ['a', 'b'] });
  });

  it('asks for JSON with json_object, and passes a json_schema schema untranslated as responseJsonSchema', () => {
    expect(bodyOf({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ temperature: 0.7, responseMimeType: 'application/json' });
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false };
    expect(bodyOf({ response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } } }).generationConfig).toEqual({
      temperature: 0.7,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(bodyOf({ response_format: { type: 'text' } }).generationConfig).toEqual({ temperature: 0.7 });
  });

  it.each([
    [undefined, { includeThoughts: true }],
    ['low', { thinkingBudget: 1024, includeThoughts: true }],
    ['medium', { thinkingBudget: 8192, includeThoughts: true }],
    ['high', { thinkingBudget: 24576, includeThoughts: true }],
    ['none', { thinkingBudget: 0 }],
  ])('maps reasoning_effort %s to a thinkingConfig on a target whose reasoning is exposed', (effort, thinkingConfig) => {
    const body = bodyOf(effort === undefined ? {} : { reasoning_effort: effort }, 'gemini-2.5-flash');
    expect(body.generationConfig).toEqual({ temperature: 0.7, thinkingConfig });
  });

  it('sends no thinkingConfig to a target without exposed reasoning', () => {
    expect(bodyOf({ reasoning_effort: 'high' }).generationConfig).toEqual({ temperature: 0.7 });
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../../functions/shared/errors/gateway-errors';
import { anthropicAdapter } from '../../../functions/shared/providers/anthropic/adapter';
import type { AdapterContext } from '../../../functions/shared/providers/types';
import { anthropicCtx, request, sentBody } from './support';

/**
 * The exact Messages request built from an OpenAI request (providers.md §2.1–2.4), with the real
 * catalogue target of claude-3-5-sonnet (claude-sonnet-4-6, 64,000 output tokens, reasoning exposed).
 */

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('Anthropic request: endpoint and defaults', () => {
  it('posts to /v1/messages with x-api-key and anthropic-version, max_tokens from the target and the default temperature, streamed (a buffered client request too)', () => {
    for (const stream of [false, true]) {
      const built = anthropicAdapter.buildChatRequest(request({ stream }), anthropicCtx());
      expect(built.url).toBe('https://api.anthropic.test/v1/messages');
      expect(built.headers).toEqual({
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'x-api-key': 'sk-ant-test',
        'anthropic-version': '2023-06-01',
      });
      expect(JSON.parse(built.body)).toEqual({
        model: 'claude-sonnet-4-6',
        max_tokens: 64_000,
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0.7,
        stream: true,
      });
    }
  });

  it.each([
    [{ max_tokens: 1000 }, 1000],
    [{ max_completion_tokens: 700, max_tokens: 1000 }, 700],
    [{ max_tokens: 1_000_000 }, 64_000],
  ])('sends max_tokens %j as %i', (extra, expected) => {
    expect(sentBody(request(extra))).toMatchObject({ max_tokens: expected });
  });

  it.each([
    [1.6, 1],
    [2, 1],
    [1, 1],
    [0.2, 0.2],
    [0, 0],
  ])('clamps temperature %d to %d', (temperature, expected) => {
    expect(sentBody(request({ temperature }))).toMatchObject({ temperature: expected });
  });

  it('sends top_p instead of temperature when the client gave one (newer Claude models refuse both)', () => {
    const body = sentBody(request({ top_p: 0.9, temperature: 0.3 }));
    expect(body).toMatchObject({ top_p: 0.9 });
    expect(body).not.toHaveProperty('temperature');
  });

  it('passes top_p, stop as stop_sequences, and user as metadata.user_id; drops fields Anthropic lacks', () => {
    const body = sentBody(
      request({ top_p: 0.9, stop: 'END', user: 'user-42', seed: 7, presence_penalty: 0.5, frequency_penalty: 0.1, logprobs: false, metadata: { a: 'b' } }),
    );
    expect(body).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      messages: [{ role: 'user', content: 'hi' }],
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
    });
    expect(sentBody(request({ stop: ['a', 'b'] }))).toMatchObject({ stop_sequences: ['a', 'b'] });
  });

  it.each([2, 5])('rejects n = %i with a 400 naming n', (n) => {
    const err = thrown(() => anthropicAdapter.buildChatRequest(request({ n }), anthropicCtx()));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param: 'n', type: 'invalid_request_error' });
  });

  it('accepts n = 1', () => {
    expect(sentBody(request({ n: 1 }))).not.toHaveProperty('n');
  });

  it('rejects the legacy functions API with a 400', () => {
    const err = thrown(() => sentBody(request({ functions: [{ name: 'f', parameters: {} }] })));
    expect(err).toMatchObject({ status: 400, param: 'functions' });
    const roleErr = thrown(() =>
      sentBody(
        request({
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'function', name: 'f', content: '1' },
          ],
        }),
      ),
    );
    expect(roleErr).toMatchObject({ status: 400, param: 'messages[1].role' });
  });
});

describe('Anthropic request: messages', () => {
  it('hoists system and developer messages, wherever they stand, into one system string', () => {
    const body = sentBody(
      request({
        messages: [
          { role: 'system', content: 'You are terse.' },
          {
            role: 'developer',
            content: [
              { type: 'text', text: 'Answer in French.' },
              { type: 'text', text: 'Use metric units.' },
            ],
          },
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'Salut.' },
          { role: 'system', content: 'Never mention the weather.' },
          { role: 'user', content: 'ça va ?' },
        ],
      }),
    );
    expect(body).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      system: 'You are terse.\n\nAnswer in French.\n\nUse metric units.\n\nNever mention the weather.',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Salut.' },
        { role: 'user', content: 'ça va ?' },
      ],
      temperature: 0.7,
    });
  });

  it('sends data-URL images as base64 with the media type split out, and https images by URL', () => {
    const body = sentBody(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
      }),
    );
    expect(body).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
  });

  it('sends an inline PDF file as a document block', () => {
    const body = sentBody(
      request({ messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }] }),
    );
    expect(body).toMatchObject({
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }] }],
    });
  });

  it.each([
    [{ type: 'image_url', image_url: { url: 'ftp://example.com/cat.jpg' } }, 'messages[0].content[0].image_url.url'],
    [{ type: 'image_url', image_url: { url: 'data:image/png,rawbytes' } }, 'messages[0].content[0].image_url.url'],
    [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }, 'messages[0].content[0]'],
    [{ type: 'file', file: { file_id: 'file-abc' } }, 'messages[0].content[0].file'],
  ])('rejects content Anthropic cannot take (%j) with a 400 naming the part', (part, param) => {
    const err = thrown(() => sentBody(request({ messages: [{ role: 'user', content: [part] }] })));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param });
  });

  it('replays a parallel tool round trip: text then tool_use blocks, results grouped into one user turn first', () => {
    const body = sentBody(
      request({
        tools: [weatherTool],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris and London?' },
          {
            role: 'assistant',
            content: 'Let me check.',
            reasoning_content: 'Two calls needed.',
            tool_calls: [
              { id: 'toolu_01P', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              // Arguments cut by a length stop, and an id minted elsewhere with a dot in it.
              { id: 'call.2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lon' } },
            ],
          },
          { role: 'tool', tool_call_id: 'toolu_01P', content: '18°C' },
          {
            role: 'tool',
            tool_call_id: 'call.2',
            content: [
              { type: 'text', text: '12°C' },
              { type: 'text', text: 'rain' },
            ],
          },
          { role: 'user', content: 'And tomorrow?' },
        ],
      }),
    );
    expect(body).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_01P', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01P', content: '18°C' },
            {
              type: 'tool_result',
              tool_use_id: 'call_2',
              content: [
                { type: 'text', text: '12°C' },
                { type: 'text', text: 'rain' },
              ],
            },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
      temperature: 0.7,
      tools: [{ name: 'get_weather', description: 'Current weather', input_schema: weatherSchema }],
    });
  });

  it('drops empty assistant text beside tool calls and merges consecutive same-role turns', () => {
    const body = sentBody(
      request({
        messages: [
          { role: 'user', content: 'one' },
          { role: 'user', content: [{ type: 'text', text: 'two' }] },
          { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '12:00' },
          { role: 'assistant', content: null },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'It is ' },
              { type: 'text', text: 'noon.' },
            ],
          },
        ],
      }),
    );
    expect(body).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'two' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'now', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '12:00' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'It is ' },
            { type: 'text', text: 'noon.' },
          ],
        },
      ],
    });
  });
});

describe('Anthropic request: tools', () => {
  it('maps tool definitions, defaulting a missing or typeless schema to an object', () => {
    const body = sentBody(
      request({
        tools: [weatherTool, { type: 'function', function: { name: 'now' } }, { type: 'function', function: { name: 'ping', parameters: {}, strict: true } }],
      }),
    );
    expect(body).toMatchObject({
      tools: [
        { name: 'get_weather', description: 'Current weather', input_schema: weatherSchema },
        { name: 'now', input_schema: { type: 'object', properties: {} } },
        { name: 'ping', input_schema: { type: 'object' } },
      ],
    });
    expect((body as { tools: unknown[] }).tools[1]).not.toHaveProperty('description');
  });

  it.each([
    ['auto', undefined, { type: 'auto' }],
    ['none', undefined, { type: 'none' }],
    ['required', undefined, { type: 'any' }],
    [{ type: 'function', function: { name: 'get_weather' } }, undefined, { type: 'tool', name: 'get_weather' }],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    [{ type: 'function', function: { name: 'get_weather' } }, false, { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true }],
    ['none', false, { type: 'none' }],
    ['auto', true, { type: 'auto' }],
  ])('maps tool_choice %j with parallel_tool_calls %j to %j', (toolChoice, parallel, expected) => {
    const extra: Record<string, unknown> = { tools: [weatherTool] };
    if (toolChoice !== undefined) extra.tool_choice = toolChoice;
    if (parallel !== undefined) extra.parallel_tool_calls = parallel;
    expect((sentBody(request(extra)) as { tool_choice: unknown }).tool_choice).toEqual(expected);
  });

  it('sends no tool_choice when the client left both choice and parallelism alone, or sent no tools', () => {
    expect(sentBody(request({ tools: [weatherTool] }))).not.toHaveProperty('tool_choice');
    expect(sentBody(request({ tool_choice: 'required', parallel_tool_calls: false }))).not.toHaveProperty('tool_choice');
  });
});

describe('Anthropic request: thinking and JSON mode', () => {
  it.each([
    ['low', 1024],
    ['medium', 4096],
    ['high', 16_384],
  ])('turns reasoning_effort %s into a %i-token thinking budget and leaves sampling fields out', (effort, budget) => {
    expect(sentBody(request({ reasoning_effort: effort, top_p: 0.5, temperature: 0.3 }))).toEqual({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      messages: [{ role: 'user', content: 'hi' }],
      thinking: { type: 'enabled', budget_tokens: budget },
    });
  });

  it('keeps the budget below the client max_tokens, and skips thinking when even the minimum does not fit', () => {
    expect(sentBody(request({ reasoning_effort: 'high', max_completion_tokens: 2000 }))).toMatchObject({
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1999 },
    });
    const small = sentBody(request({ reasoning_effort: 'low', max_tokens: 1024 }));
    expect(small).not.toHaveProperty('thinking');
    expect(small).toMatchObject({ max_tokens: 1024, temperature: 0.7 });
  });

  it('sends no thinking for effort none, a forced tool, or a tool loop under way', () => {
    expect(sentBody(request({ reasoning_effort: 'none' }))).not.toHaveProperty('thinking');
    expect(sentBody(request({ reasoning_effort: 'high', tools: [weatherTool], tool_choice: 'required' }))).not.toHaveProperty('thinking');
    const loop = sentBody(
      request({
        reasoning_effort: 'high',
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
        ],
      }),
    );
    expect(loop).not.toHaveProperty('thinking');
    expect(loop).toMatchObject({ temperature: 0.7 });
  });

  it('sends no thinking to a target that does not expose reasoning', () => {
    const base = anthropicCtx();
    const ctx: AdapterContext = { ...base, target: { ...base.target, capabilities: { ...base.target.capabilities, reasoning: 'none' } } };
    expect(sentBody(request({ reasoning_effort: 'high' }), ctx)).not.toHaveProperty('thinking');
  });

  it('asks for JSON in the system prompt for response_format json_object, after the client system text', () => {
    const body = sentBody(
      request({
        messages: [
          { role: 'system', content: 'You list fruit.' },
          { role: 'user', content: 'hi' },
        ],
        response_format: { type: 'json_object' },
      }),
    );
    expect(body).toMatchObject({
      system: 'You list fruit.\n\nRespond with a single valid JSON object and nothing else: no prose and no code fences before or after it.',
    });
  });

  it('puts the JSON schema of response_format json_schema into the system prompt', () => {
    const body = sentBody(
      request({
        response_format: { type: 'json_schema', json_schema: { name: 'fruit', schema: { type: 'object', properties: { name: { type: 'string' } } } } },
      }),
    ) as { system: string };
    expect(body.system).toBe(
      'Respond with a single valid JSON object that conforms to this JSON Schema, and nothing else: no prose and no code fences.\n{"type":"object","properties":{"name":{"type":"string"}}}',
    );
    expect(sentBody(request({ response_format: { type: 'text' } }))).not.toHaveProperty('system');
  });
});

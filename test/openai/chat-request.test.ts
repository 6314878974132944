import { describe, expect, it } from 'vitest';
import { chatCompletionRequest, DEFAULT_TEMPERATURE } from '../../functions/shared/openai/chat-request';
import { embeddingsRequest } from '../../functions/shared/openai/embeddings';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { parseJsonBody } from '../../functions/shared/openai/parse-body';

const parse = (body: unknown) => parseJsonBody(JSON.stringify(body), chatCompletionRequest);
const fails = (body: unknown): InvalidRequestError => {
  try {
    parse(body);
  } catch (e) {
    if (e instanceof InvalidRequestError) return e;
    throw e;
  }
  throw new Error('expected a validation error');
};
const base = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('chat request validation', () => {
  it('applies the spec default temperature of 0.7 when absent, and keeps an explicit one', () => {
    expect(DEFAULT_TEMPERATURE).toBe(0.7);
    expect(parse(base).temperature).toBe(0.7);
    expect(parse({ ...base, temperature: 0 }).temperature).toBe(0);
  });

  it('requires model and messages, naming the missing parameter', () => {
    expect(fails({ model: 'gpt-4o' })).toMatchObject({ status: 400, param: 'messages', code: 'missing_required_parameter' });
    expect(fails({ messages: base.messages })).toMatchObject({ param: 'model' });
    expect(fails({ ...base, messages: [] })).toMatchObject({ param: 'messages' });
  });

  it.each([
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [{ max_tokens: -3 }, 'max_tokens'],
    [{ stream: 'yes' }, 'stream'],
    [{ temperature: 2.5 }, 'temperature'],
    [{ stream_options: { include_usage: true } }, 'stream_options'],
  ])('rejects %j naming %s', (extra, param) => {
    expect(fails({ ...base, ...extra }).param).toBe(param);
  });

  it('rejects an unknown field as OpenAI does, and a bad role with its path', () => {
    expect(fails({ ...base, temprature: 1 })).toMatchObject({ param: 'temprature', code: 'unknown_parameter' });
    expect(fails({ ...base, messages: [{ role: 'wizard', content: 'x' }] }).param).toBe('messages[0].role');
  });

  it('accepts every OpenAI message shape: parts, images, tool calls and tool results', () => {
    const req = parse({
      ...base,
      messages: [
        { role: 'developer', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 10,
    });
    expect(req.messages).toHaveLength(4);
  });

  it('applies the 0.7 default when temperature is null, as when it is absent', () => {
    expect(parse({ ...base, temperature: null }).temperature).toBe(DEFAULT_TEMPERATURE);
  });

  it.each([
    ['n', { n: 3 }],
    ['logprobs with top_logprobs', { logprobs: true, top_logprobs: 5 }],
    ['seed', { seed: 42 }],
    ['user', { user: 'user-1234' }],
    ['stop as a string', { stop: '\n' }],
    ['stop as an array', { stop: ['END', '###'] }],
    ['max_completion_tokens', { max_completion_tokens: 256 }],
    ['safety_identifier and prompt_cache_key', { safety_identifier: 'hash-of-user', prompt_cache_key: 'tenant-7' }],
    ['moderation', { moderation: { model: 'omni-moderation-latest', policy: { input: { mode: 'block' }, output: { mode: 'score' } } } }],
    ['prompt_cache_options and prompt_cache_retention', { prompt_cache_options: { mode: 'explicit', ttl: '30m' }, prompt_cache_retention: '24h' }],
    [
      'service_tier, store, metadata, verbosity, reasoning_effort',
      { service_tier: 'flex', store: false, metadata: { run: 'a' }, verbosity: 'low', reasoning_effort: 'minimal' },
    ],
    ['response_format json_schema', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' }, strict: true } } }],
    ['parallel_tool_calls with tools', { tools: [{ type: 'function', function: { name: 'f' } }], parallel_tool_calls: false }],
  ])('accepts an SDK-typical body with %s', (_label, extra) => {
    expect(parse({ ...base, ...extra })).toMatchObject(extra);
  });

  it('accepts null for every optional field the openai SDK types as nullable', () => {
    const nulls = Object.fromEntries(
      [
        'max_tokens',
        'max_completion_tokens',
        'stream',
        'stream_options',
        'top_p',
        'n',
        'stop',
        'presence_penalty',
        'frequency_penalty',
        'logit_bias',
        'logprobs',
        'top_logprobs',
        'seed',
        'safety_identifier',
        'prompt_cache_key',
        'prompt_cache_retention',
        'moderation',
        'reasoning_effort',
        'metadata',
        'store',
        'service_tier',
        'modalities',
        'audio',
        'prediction',
        'verbosity',
        'temperature',
      ].map((k) => [k, null]),
    );
    const req = parse({ ...base, ...nulls });
    expect(req.temperature).toBe(DEFAULT_TEMPERATURE);
    expect(req.n).toBeNull();
  });

  it('accepts developer messages, content as arrays of parts, and cache breakpoints on parts', () => {
    const req = parse({
      ...base,
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'be brief' }], name: 'policy' },
        { role: 'system', content: [{ type: 'text', text: 'you are terse', prompt_cache_breakpoint: { mode: 'explicit' } }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'see this' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, prompt_cache_breakpoint: { mode: 'explicit' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'ok' },
            { type: 'refusal', refusal: 'no' },
          ],
          refusal: null,
        },
        { role: 'user', content: 'and now?' },
      ],
    });
    expect(req.messages).toHaveLength(5);
  });

  it("accepts OpenAI's custom tools, custom and allowed_tools tool choices, and custom tool calls in the history", () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: null } },
      { type: 'custom', custom: { name: 'run_sql', format: { type: 'grammar', grammar: { definition: 'start: "x"', syntax: 'lark' } } } },
      { type: 'custom', custom: { name: 'free_text', description: 'anything', format: { type: 'text' } } },
    ];
    expect(parse({ ...base, tools, tool_choice: { type: 'custom', custom: { name: 'run_sql' } } }).tools).toHaveLength(3);
    const allowed = { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_weather' } }] } };
    expect(parse({ ...base, tools, tool_choice: allowed }).tool_choice).toEqual(allowed);
    const history = parse({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '1' },
      ],
    });
    expect(history.messages).toHaveLength(3);
  });

  it.each([
    [
      { tools: [{ type: 'custom', custom: { name: 'x', format: { type: 'grammar', grammar: { definition: 'd', syntax: 'peg' } } } }] },
      'tools[0].custom.format.grammar.syntax',
    ],
    [{ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'sometimes', tools: [] } } }, 'tool_choice'],
    [{ moderation: { policy: null } }, 'moderation.model'],
    [{ prompt_cache_options: { mode: 'always' } }, 'prompt_cache_options.mode'],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', prompt_cache_breakpoint: { mode: 'implicit' } }] }] }, 'messages[0].content'],
  ])('still refuses a malformed new field %j, naming %s', (extra, param) => {
    expect(fails({ ...base, ...extra }).param).toMatch(new RegExp(`^${param.replace(/[[\].]/g, '\\$&')}`));
  });

  it('answers 400 invalid_json for a body that is not JSON and for a JSON array', () => {
    expect(() => parseJsonBody('{"model":', chatCompletionRequest)).toThrow(InvalidRequestError);
    expect(() => parseJsonBody('[]', chatCompletionRequest)).toThrow(/JSON object/);
    expect(() => parseJsonBody('', chatCompletionRequest)).toThrow(/empty/);
  });
});

describe('embeddings request validation', () => {
  it('takes a string or an array of strings, not token arrays', () => {
    expect(parseJsonBody('{"model":"m","input":"a"}', embeddingsRequest).input).toBe('a');
    expect(parseJsonBody('{"model":"m","input":["a","b"]}', embeddingsRequest).input).toEqual(['a', 'b']);
    expect(() => parseJsonBody('{"model":"m","input":[1,2,3]}', embeddingsRequest)).toThrow(InvalidRequestError);
    expect(() => parseJsonBody('{"model":"m","input":[]}', embeddingsRequest)).toThrow(InvalidRequestError);
  });
});

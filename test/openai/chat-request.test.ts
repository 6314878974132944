import { describe, expect, it } from 'vitest';
import { chatCompletionRequest, DEFAULT_TEMPERATURE } from '../../functions/shared/openai/chat-request';
import { embeddingsRequest } from '../../functions/shared/openai/embeddings';
import { InvalidRequestError } from '../../functions/shared/openai/errors';
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
        { role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
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

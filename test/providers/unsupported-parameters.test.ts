import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { providerSpec } from '../../functions/shared/providers/registry';
import { ctxFor, request } from './openai-compatible/support';

/**
 * What each adapter does with request features its target may lack — logprobs, several choices,
 * OpenAI's custom tools and allowed_tools — against the real catalogue targets: the OpenAI target
 * gets them as sent; a target that cannot honour one answers OpenAI's own 400 (invalid_request_error,
 * unsupported_parameter, param named), never a silent drop.
 */

/** The body `model`'s first target would be sent, or the error building it threw. */
function build(model: string, req: ChatCompletionRequest): { body?: Record<string, unknown>; error?: unknown } {
  const ctx = ctxFor(model);
  try {
    return { body: JSON.parse(providerSpec(ctx.target.provider).adapter.buildChatRequest(req, ctx).body) as Record<string, unknown> };
  } catch (error) {
    return { error };
  }
}

function refusal(model: string, fields: Record<string, unknown>): InvalidRequestError {
  const { error } = build(model, request(fields));
  expect(error).toBeInstanceOf(InvalidRequestError);
  return error as InvalidRequestError;
}

const customTool = {
  type: 'custom',
  custom: { name: 'run_sql', description: 'Runs SQL', format: { type: 'grammar', grammar: { definition: 'start: "SELECT"', syntax: 'lark' } } },
};
const functionTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } };
const allowedTools = { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] } };

describe('logprobs', () => {
  it('passes logprobs and top_logprobs to an OpenAI chat model as sent', () => {
    expect(build('gpt-4o', request({ logprobs: true, top_logprobs: 3 })).body).toMatchObject({ logprobs: true, top_logprobs: 3 });
  });

  it.each(['claude-3-5-sonnet', 'gemini-2.0-flash', 'gemini-2.5-pro', 'o3-mini'])(
    'refuses logprobs: true for %s with 400 unsupported_parameter, param logprobs',
    (model) => {
      const err = refusal(model, { logprobs: true });
      expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'logprobs' });
      expect(err.message).toBe("Unsupported parameter: 'logprobs' is not supported with this model. This model does not return log probabilities.");
    },
  );

  it.each(['claude-3-5-sonnet', 'gemini-2.0-flash'])('refuses top_logprobs above 0 for %s, and lets logprobs false / top_logprobs 0 through', (model) => {
    expect(refusal(model, { top_logprobs: 2 })).toMatchObject({ code: 'unsupported_parameter', param: 'top_logprobs' });
    const { body } = build(model, request({ logprobs: false, top_logprobs: 0 }));
    expect(body).toBeDefined();
    expect(JSON.stringify(body)).not.toMatch(/logprob/i);
  });
});

describe('n (several choices)', () => {
  it('passes n to OpenAI and maps it to candidateCount for Gemini', () => {
    expect(build('gpt-4o', request({ n: 3 })).body).toMatchObject({ n: 3 });
    expect(build('gemini-2.0-flash', request({ n: 3 })).body).toMatchObject({ generationConfig: { candidateCount: 3 } });
  });

  it.each(['claude-3-5-sonnet', 'minimax'])('refuses n > 1 for %s with 400 unsupported_parameter, param n', (model) => {
    expect(refusal(model, { n: 2 })).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'n' });
    expect(build(model, request({ n: 1 })).error).toBeUndefined();
  });
});

describe("OpenAI's custom tools and allowed_tools", () => {
  it('pass to the OpenAI target as sent', () => {
    const tools = [functionTool, customTool];
    expect(build('gpt-4o', request({ tools, tool_choice: allowedTools })).body).toMatchObject({ tools, tool_choice: allowedTools });
    expect(build('gpt-4o', request({ tools, tool_choice: { type: 'custom', custom: { name: 'run_sql' } } })).body).toMatchObject({
      tool_choice: { type: 'custom', custom: { name: 'run_sql' } },
    });
  });

  it.each(['claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3', 'llama-3-70b'])('are refused by %s, naming the field', (model) => {
    expect(refusal(model, { tools: [functionTool, customTool] })).toMatchObject({ code: 'unsupported_parameter', param: 'tools[1].type' });
    expect(refusal(model, { tools: [functionTool], tool_choice: allowedTools })).toMatchObject({ code: 'unsupported_parameter', param: 'tool_choice' });
    expect(refusal(model, { tools: [functionTool], tool_choice: { type: 'custom', custom: { name: 'x' } } })).toMatchObject({ param: 'tool_choice' });
    const history = [
      { role: 'user', content: 'query' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '1' },
    ];
    expect(refusal(model, { messages: history })).toMatchObject({ code: 'unsupported_parameter', param: 'messages[1].tool_calls[0].type' });
  });
});

describe('fields only OpenAI reads', () => {
  it('passes moderation, prompt_cache_options and content-part cache breakpoints to OpenAI', () => {
    const fields = {
      moderation: { model: 'omni-moderation-latest', policy: { input: { mode: 'block' }, output: null } },
      prompt_cache_options: { mode: 'explicit', ttl: '30m' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'long prefix', prompt_cache_breakpoint: { mode: 'explicit' } }] }],
    };
    expect(build('gpt-4o', request(fields)).body).toMatchObject(fields);
  });

  it('lets Anthropic and Gemini answer without them (a cache hint changes cost, not the answer)', () => {
    const fields = {
      prompt_cache_options: { mode: 'explicit' },
      safety_identifier: null,
      prompt_cache_key: null,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', prompt_cache_breakpoint: { mode: 'explicit' } }] }],
    };
    for (const model of ['claude-3-5-sonnet', 'gemini-2.0-flash']) {
      const { body, error } = build(model, request(fields));
      expect(error).toBeUndefined();
      expect(JSON.stringify(body)).not.toMatch(/prompt_cache|breakpoint|safety_identifier|metadata/);
    }
  });
});

describe('audio output, web search and moderation (OpenAI only)', () => {
  const features: Array<[string, Record<string, unknown>]> = [
    ['modalities', { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }],
    ['audio', { audio: { voice: 'alloy', format: 'wav' } }],
    ['web_search_options', { web_search_options: { search_context_size: 'low' } }],
    ['moderation', { moderation: { model: 'omni-moderation-latest', policy: { output: { mode: 'block' } } } }],
  ];

  it.each(features)('passes %s to OpenAI as sent', (_param, fields) => {
    expect(build('gpt-4o', request(fields)).body).toMatchObject(fields);
  });

  it.each(
    features.flatMap(([param, fields]) =>
      ['claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3', 'minimax', 'llama-3-70b'].map((model) => [model, param, fields] as const),
    ),
  )('refuses them for %s with 400 unsupported_parameter naming %s, never a silent text-only answer', (model, param, fields) => {
    expect(refusal(model, fields)).toMatchObject({ status: 400, code: 'unsupported_parameter', param });
  });

  it("lets modalities: ['text'] through everywhere: it asks for what every model answers", () => {
    for (const model of ['claude-3-5-sonnet', 'gemini-2.0-flash', 'deepseek-v3']) expect(build(model, request({ modalities: ['text'] })).error).toBeUndefined();
  });
});

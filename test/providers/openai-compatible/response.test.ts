import { describe, expect, it } from 'vitest';
import { tokensOf } from '../../support/token-usage';
import { providerSpec } from '../../../functions/shared/providers/registry';
import { UpstreamAttemptError } from '../../../functions/shared/providers/types';
import { ctxFor, fixture, thrown } from './support';

/**
 * Buffered OpenAI-compatible bodies (providers.md §1.3, §4.4–4.5, §5.2, §5.4) and error
 * classification (§1.5, §6).
 */

const parse = (model: string, body: string) => {
  const ctx = ctxFor(model);
  return providerSpec(ctx.target.provider).adapter.parseChatResponse(body, ctx);
};

describe('OpenAI-compatible buffered responses and errors', () => {
  const adapter = providerSpec('openai').adapter;

  it('parses a body preceded by DeepSeek keep-alive blank lines', () => {
    const parts = providerSpec('deepseek').adapter.parseChatResponse(
      '\n\n\n{"choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning_content":"think"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
      ctxFor('deepseek-r1'),
    );
    expect(parts.choices[0]?.message).toEqual({ role: 'assistant', content: 'ok', refusal: null, reasoning_content: 'think' });
    expect(parts.usage).toEqual(tokensOf({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }));
  });

  it('returns parallel tool calls with their upstream ids', () => {
    expect(parse('gpt-4o', fixture('parallel-tool-calls.json').toString('utf8'))).toEqual({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { id: 'call_par_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
              { id: 'call_par_2', type: 'function', function: { name: 'get_time', arguments: '{"zone": "CET"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: tokensOf({ prompt_tokens: 80, completion_tokens: 40, total_tokens: 120, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }),
      system_fingerprint: 'fp_1',
    });
  });

  it.each([
    ['length.json', 'Once upon a time', 'length', { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 }],
    ['content-filter.json', '', 'content_filter', { prompt_tokens: 20, completion_tokens: 0, total_tokens: 20 }],
  ] as const)('keeps the finish reason of %s', (name, content, finish, usage) => {
    const parts = parse('gpt-4o', fixture(name).toString('utf8'));
    expect(parts.choices).toEqual([{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish }]);
    expect(parts.usage).toEqual(tokensOf(usage));
  });

  it('treats a MiniMax 200 with base_resp status 1002 as a retryable rate limit', () => {
    const err = (() => {
      try {
        providerSpec('minimax').adapter.parseChatResponse('{"base_resp":{"status_code":1002,"status_msg":"rate limit"}}', ctxFor('minimax'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(UpstreamAttemptError);
    expect((err as UpstreamAttemptError).failure).toMatchObject({ kind: 'rate-limit', retryable: true });
  });

  it.each([1026, 1027])('answers MiniMax base_resp %i (sensitive content) as a non-retryable 400 content_policy_violation', (code) => {
    const body = JSON.stringify({ id: 'x', choices: null, base_resp: { status_code: code, status_msg: code === 1026 ? 'input new_sensitive' : 'output new_sensitive' } });
    const failure = thrown(() => parse('minimax', body)).failure;
    expect(failure).toMatchObject({ kind: 'client', retryable: false, status: 400 });
    expect(failure.clientError).toMatchObject({ status: 400, type: 'invalid_request_error', param: null, code: 'content_policy_violation' });
    expect(failure.clientError?.message).toMatch(/content policy/);
  });

  it('returns MiniMax reasoning_details as reasoning_content beside the answer and the tool call', () => {
    expect(parse('minimax', fixture('reasoning-details.json', 'minimax').toString('utf8'))).toEqual({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Let me check.',
            refusal: null,
            reasoning_content: 'The user wants the weather in Paris — call the tool.',
            tool_calls: [{ id: 'call_function_7q1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: tokensOf({ prompt_tokens: 80, completion_tokens: 38, total_tokens: 118, completion_tokens_details: { reasoning_tokens: 14 } }),
    });
  });

  it.each([
    [500, '{"error":{"message":"boom","type":"server_error"}}', 'server', true],
    [429, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}', 'rate-limit', true],
    [429, '{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}', 'auth-config', false],
    [401, '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}', 'auth-config', false],
    [400, '{"error":{"message":"The model `llama3-70b-8192` has been decommissioned","type":"invalid_request_error","code":"model_decommissioned"}}', 'not-found', false],
    [400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}', 'context-length', false],
    [400, '{"error":{"message":"This model\'s maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}', 'context-length', false],
    [400, '{"error":{"message":"prompt is too long: 215000 tokens > 200000 maximum","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}', 'context-length', false],
    [400, '[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]', 'context-length', false],
    [400, '{"error":{"message":"Invalid \'messages[0].content\'","type":"invalid_request_error","param":"messages"}}', 'client', false],
    [400, '[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]', 'auth-config', false],
    [503, 'upstream connect error', 'overloaded', true],
  ] as const)('classifies HTTP %i %s as %s', (status, body, kind, retryable) => {
    const f = adapter.classifyError(status, body, new Headers());
    expect(f.kind).toBe(kind);
    expect(f.retryable).toBe(retryable);
    if (kind === 'client') expect(f.clientError?.status).toBe(400);
  });

  it('reads retry-after-ms before retry-after', () => {
    const f = adapter.classifyError(429, '{}', new Headers({ 'retry-after': '3', 'retry-after-ms': '250' }));
    expect(f.retryAfterMs).toBe(250);
    expect(adapter.classifyError(429, '{}', new Headers({ 'retry-after': '2' })).retryAfterMs).toBe(2000);
  });
});

describe('OpenAI-compatible buffered responses: several choices, logprobs, custom tool calls', () => {
  const logprobs = {
    content: [{ token: 'Hi', logprob: -0.01, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.01, bytes: [72, 105] }, { token: 'Hey', logprob: -4.6, bytes: [72, 101, 121] }] }],
    refusal: null,
  };

  it('returns every choice with its index and its logprobs exactly as OpenAI sent them', () => {
    const body = {
      id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-2024-08-06',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null, annotations: [] }, logprobs, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'Hey', refusal: null, annotations: [] }, logprobs: { content: [], refusal: null }, finish_reason: 'length' },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    };
    const parts = parse('gpt-4o', JSON.stringify(body));
    expect(parts.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, logprobs, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: 'Hey', refusal: null }, logprobs: { content: [], refusal: null }, finish_reason: 'length' },
    ]);
    expect(parts.usage).toEqual(tokensOf({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }));
  });

  it('keeps logprobs null when the upstream sent null or nothing', () => {
    const body = { choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    expect(parse('deepseek-v3', JSON.stringify(body)).choices[0]?.logprobs).toBeNull();
  });

  it('returns an OpenAI custom tool call as it came, beside a function call', () => {
    const body = {
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_c', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1' } },
              { id: 'call_f', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
    expect(parse('gpt-4o', JSON.stringify(body)).choices[0]?.message.tool_calls).toEqual([
      { id: 'call_c', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1' } },
      { id: 'call_f', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
    ]);
  });

  it('treats a tool call naming neither a function nor a custom tool as a malformed body (retryable)', () => {
    const body = { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function' }] }, finish_reason: 'tool_calls' }] };
    const err = thrown(() => parse('gpt-4o', JSON.stringify(body)));
    expect(err.failure).toMatchObject({ kind: 'server', retryable: true });
  });
});

describe('OpenAI-compatible buffered responses: refusal', () => {
  it("passes the model's refusal through, and is null (never absent) otherwise, as OpenAI's message always carries it", () => {
    const body = (refusal?: string | null) => JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: null, ...(refusal === undefined ? {} : { refusal }) }, finish_reason: 'stop' }] });
    expect(parse('gpt-4o', body("I can't help with that.")).choices[0]?.message).toEqual({ role: 'assistant', content: null, refusal: "I can't help with that." });
    expect(parse('deepseek-v3', body()).choices[0]?.message.refusal).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { tokensOf } from '../../support/token-usage';
import { geminiAdapter } from '../../../functions/shared/providers/gemini/adapter';
import { ctxFor, failureOf, fixtureText } from './helpers';

/** Buffered `generateContent` bodies (providers.md §3.3) → OpenAI completion parts. */

const parse = (name: string, model = 'gemini-2.0-flash') => geminiAdapter.parseChatResponse(fixtureText(name), ctxFor(model));

/** An id modelmux minted for a Gemini call that had none: `call_` + 24 random characters. */
const MINTED_ID = expect.stringMatching(/^call_[A-Za-z0-9]{24}$/);
const callIds = (name: string, model?: string) => (parse(name, model).choices[0]?.message.tool_calls ?? []).map((t) => t.id);

describe('Gemini buffered responses', () => {
  it('joins text parts into content and maps usage (index absent means candidate 0)', () => {
    expect(parse('text-response.json')).toEqual({
      choices: [{ index: 0, message: { role: 'assistant', content: 'Paris is sunny. ☀️', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: tokensOf({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }),
    });
  });

  it('turns functionCall parts into tool_calls with fresh call_ ids and finish_reason tool_calls, counting tool-use prompt tokens as prompt', () => {
    expect(parse('function-calls-response.json')).toEqual({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { id: MINTED_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: MINTED_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: tokensOf({ prompt_tokens: 64, completion_tokens: 18, total_tokens: 82 }),
    });
  });

  it('mints tool-call ids unique within a response and across responses, so a multi-round tool conversation never repeats one', () => {
    const ids = [...callIds('function-calls-response.json'), ...callIds('function-calls-response.json')];
    expect(new Set(ids).size).toBe(4);
  });

  it("keeps Gemini's own functionCall id and returns the thought signature in extra_content.google", () => {
    expect(parse('signed-function-calls-response.json', 'gemini-2.5-flash')).toEqual({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { id: 'fc_8f3k2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'CiQB0e2Kb7sig+/A==' } } },
              { id: 'fc_8f3k3', type: 'function', function: { name: 'get_time', arguments: '{"zone":"CET"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: tokensOf({ prompt_tokens: 48, completion_tokens: 61, total_tokens: 109, completion_tokens_details: { reasoning_tokens: 40 } }),
    });
  });

  it('returns thought parts as reasoning_content and bills thoughts as completion tokens', () => {
    expect(parse('thoughts-response.json', 'gemini-2.5-flash')).toEqual({
      choices: [{ index: 0, message: { role: 'assistant', content: '4', refusal: null, reasoning_content: 'Adding the numbers.' }, logprobs: null, finish_reason: 'stop' }],
      usage: tokensOf({
        prompt_tokens: 10,
        completion_tokens: 26,
        total_tokens: 36,
        prompt_tokens_details: { cached_tokens: 6 },
        completion_tokens_details: { reasoning_tokens: 25 },
      }),
    });
  });

  it('returns one choice per candidate, each with its own finish reason', () => {
    expect(parse('two-candidates-response.json').choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Red', refusal: null }, logprobs: null, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: 'Blue and', refusal: null }, logprobs: null, finish_reason: 'length' },
    ]);
  });

  it('answers a blocked prompt (no candidates) with empty content and content_filter', () => {
    expect(parse('blocked-prompt-response.json')).toEqual({
      choices: [{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }],
      usage: tokensOf({ prompt_tokens: 16, completion_tokens: 0, total_tokens: 16 }),
    });
  });

  it('fails MALFORMED_FUNCTION_CALL as a retryable server error instead of an empty stop', () => {
    const failure = failureOf(() => parse('malformed-function-call-response.json'));
    expect(failure).toMatchObject({ kind: 'server', retryable: true });
    expect(failure.message).toContain('MALFORMED_FUNCTION_CALL');
  });

  it.each([
    ['not JSON', 'server'],
    ['{"candidates":"nope"}', 'server'],
    ['{"usageMetadata":{"promptTokenCount":3}}', 'server'],
    ['{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}', 'rate-limit'],
  ])('treats the unusable body %s as a %s failure', (body, kind) => {
    expect(failureOf(() => geminiAdapter.parseChatResponse(body, ctxFor('gemini-2.0-flash'))).kind).toBe(kind);
  });

  it('maps every finishReason of the enum: safety family to content_filter, others to stop', () => {
    const finishOf = (reason: string) =>
      geminiAdapter.parseChatResponse(JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: reason }] }), ctxFor('gemini-2.0-flash')).choices[0]
        ?.finish_reason;
    const expected: Record<string, string> = {
      FINISH_REASON_UNSPECIFIED: 'stop',
      STOP: 'stop',
      MAX_TOKENS: 'length',
      SAFETY: 'content_filter',
      RECITATION: 'content_filter',
      LANGUAGE: 'stop',
      OTHER: 'stop',
      BLOCKLIST: 'content_filter',
      PROHIBITED_CONTENT: 'content_filter',
      SPII: 'content_filter',
      IMAGE_SAFETY: 'content_filter',
      IMAGE_PROHIBITED_CONTENT: 'content_filter',
      NO_IMAGE: 'stop',
      IMAGE_RECITATION: 'content_filter',
      IMAGE_OTHER: 'content_filter',
      SOMETHING_NEW: 'stop',
    };
    for (const [reason, finish] of Object.entries(expected)) expect([reason, finishOf(reason)]).toEqual([reason, finish]);
    for (const reason of ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']) {
      expect(failureOf(() => finishOf(reason)).kind).toBe('server');
    }
  });
});

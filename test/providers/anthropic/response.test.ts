import { describe, expect, it } from 'vitest';
import { tokensOf } from '../../support/token-usage';
import { anthropicAdapter } from '../../../functions/shared/providers/anthropic/adapter';
import { mapStopReason } from '../../../functions/shared/providers/anthropic/finish-reason';
import { UpstreamAttemptError } from '../../../functions/shared/providers/types';
import { anthropicCtx, fixture } from './support';

/** Buffered Messages responses (providers.md §2.5) → OpenAI completion parts. */

const parse = (body: string) => anthropicAdapter.parseChatResponse(body, anthropicCtx());

function failureOf(body: string) {
  try {
    parse(body);
  } catch (e) {
    if (e instanceof UpstreamAttemptError) return e.failure;
    throw e;
  }
  throw new Error('expected a failure');
}

describe('Anthropic buffered responses', () => {
  it('joins text blocks and counts cache writes and reads into the prompt tokens', () => {
    expect(parse(fixture('text-cached.json').toString('utf8'))).toEqual({
      choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour, ça va ? 🌍', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: tokensOf({ prompt_tokens: 4521, completion_tokens: 9, total_tokens: 4530, prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 1500 } }),
    });
  });

  it('turns tool_use blocks into tool_calls with JSON arguments', () => {
    expect(parse(fixture('tool-use.json').toString('utf8'))).toEqual({
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Let me check.',
            refusal: null,
            tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: tokensOf({ prompt_tokens: 410, completion_tokens: 52, total_tokens: 462, prompt_tokens_details: { cached_tokens: 0 } }),
    });
  });

  it('returns thinking as reasoning_content and leaves redacted thinking out', () => {
    expect(parse(fixture('thinking.json').toString('utf8'))).toEqual({
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '27 × 453 = 12,231.', refusal: null, reasoning_content: '27 * 453: 27 * 400 = 10800, 27 * 53 = 1431, total 12231.' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: tokensOf({ prompt_tokens: 48, completion_tokens: 190, total_tokens: 238, completion_tokens_details: { reasoning_tokens: 150 } }),
    });
  });

  it('answers content null for a tool-only reply and length for max_tokens', () => {
    const parts = parse(
      JSON.stringify({
        type: 'message',
        content: [{ type: 'tool_use', id: 'toolu_9', name: 'now', input: {} }],
        stop_reason: 'max_tokens',
        usage: { input_tokens: 5, output_tokens: 1 },
      }),
    );
    expect(parts.choices[0]?.message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'now', arguments: '{}' } }],
    });
    expect(parts.choices[0]?.finish_reason).toBe('length');
  });

  it('leaves usage undefined when the upstream sent none, so the router estimates', () => {
    expect(parse('{"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}').usage).toBeUndefined();
  });

  it('raises an error object inside a 200 with the kind of its type', () => {
    expect(failureOf('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toMatchObject({ kind: 'overloaded', retryable: true });
  });

  it.each(['not json', '{"type":"message"}', '[]'])('treats a malformed body (%s) as a retryable server failure', (body) => {
    expect(failureOf(body)).toMatchObject({ kind: 'server', retryable: true });
  });
});

describe('Anthropic stop_reason map', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['a_future_reason', 'stop'],
    [null, null],
    [undefined, null],
  ] as const)('maps %s to %s', (reason, expected) => {
    expect(mapStopReason(reason)).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import { tokensOf } from '../../support/token-usage';
import { mapFinishReason, withToolCalls } from '../../../functions/shared/providers/gemini/finish-reason';
import { runFailingStream, runStream } from './helpers';

/**
 * Gemini `streamGenerateContent?alt=sse` fixtures (providers.md §3.3–3.4) through the real SSE
 * decoder in awkward byte splits: the full list of chunk parts must not depend on where the bytes
 * were cut (mid-line, mid-CRLF, mid-UTF-8 character).
 */

const SPLITS = [1, 3, 7, 4096];
const role = (index = 0) => ({ choices: [{ index, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
const content = (text: string) => ({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
const finish = (reason: string) => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });
/** An id modelmux minted for a Gemini call that had none: `call_` + 24 random characters. */
const MINTED_ID = expect.stringMatching(/^call_[A-Za-z0-9]{24}$/);

describe('Gemini streams', () => {
  it.each(SPLITS)('streams text with CRLF delimiters and multi-byte UTF-8 intact (%i-byte pieces)', async (size) => {
    expect(await runStream('text-crlf.sse', size)).toEqual([
      role(),
      content('Grüße'),
      content(' aus Paris 🌍, '),
      content('你好!'),
      finish('stop'),
      { choices: [], usage: tokensOf({ prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 }) },
    ]);
  });

  it.each(SPLITS)(
    'turns a whole functionCall into one tool_calls delta and finishes with tool_calls although Gemini says STOP (%i-byte pieces)',
    async (size) => {
      expect(await runStream('function-call.sse', size)).toEqual([
        role(),
        {
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, id: MINTED_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
              finish_reason: null,
            },
          ],
        },
        finish('tool_calls'),
        { choices: [], usage: tokensOf({ prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 }) },
      ]);
    },
  );

  it.each(SPLITS)('numbers parallel function calls with our own index counter, a call without args as "{}" (%i-byte pieces)', async (size) => {
    expect(await runStream('parallel-function-calls.sse', size)).toEqual([
      role(),
      content('Checking both.'),
      {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: MINTED_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } },
                { index: 1, id: MINTED_ID, type: 'function', function: { name: 'get_time', arguments: '{}' } },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      finish('tool_calls'),
      { choices: [], usage: tokensOf({ prompt_tokens: 52, completion_tokens: 19, total_tokens: 71 }) },
    ]);
  });

  it('mints ids that differ between the calls of one stream and between streams', async () => {
    const ids = async () =>
      (await runStream('parallel-function-calls.sse', 4096)).flatMap((p) => p.choices.flatMap((c) => (c.delta.tool_calls ?? []).map((t) => t.id)));
    expect(new Set([...(await ids()), ...(await ids())]).size).toBe(4);
  });

  it.each(SPLITS)(
    "keeps Gemini's functionCall id and its thought signature (extra_content.google) on the streamed tool call (%i-byte pieces)",
    async (size) => {
      expect(await runStream('signed-function-call.sse', size, 'gemini-2.5-flash')).toEqual([
        role(),
        { choices: [{ index: 0, delta: { reasoning_content: 'Need the weather tool.' }, finish_reason: null }] },
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  {
                    index: 0,
                    id: 'fc_9x1',
                    type: 'function',
                    function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                    extra_content: { google: { thought_signature: 'EpUCAb4+9vsig==' } },
                  },
                ],
              },
              finish_reason: null,
            },
          ],
        },
        finish('tool_calls'),
        { choices: [], usage: tokensOf({ prompt_tokens: 40, completion_tokens: 31, total_tokens: 71, completion_tokens_details: { reasoning_tokens: 25 } }) },
      ]);
    },
  );

  it.each(SPLITS)('sends thought parts as reasoning_content and bills thoughts as completion tokens (%i-byte pieces)', async (size) => {
    expect(await runStream('thoughts.sse', size, 'gemini-2.5-flash')).toEqual([
      role(),
      { choices: [{ index: 0, delta: { reasoning_content: '**Weighing it up** The user wants ' }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { reasoning_content: 'a number.', content: 'Forty' }, finish_reason: null }] },
      content('-two.'),
      finish('stop'),
      {
        choices: [],
        usage: tokensOf({
          prompt_tokens: 11,
          completion_tokens: 34,
          total_tokens: 45,
          prompt_tokens_details: { cached_tokens: 8 },
          completion_tokens_details: { reasoning_tokens: 30 },
        }),
      },
    ]);
  });

  it.each(SPLITS)('maps MAX_TOKENS to length, with a body that ends without a blank line (%i-byte pieces)', async (size) => {
    expect(await runStream('max-tokens.sse', size)).toEqual([
      role(),
      content('Once upon a'),
      content(' time'),
      finish('length'),
      { choices: [], usage: tokensOf({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }) },
    ]);
  });

  it.each(SPLITS)('maps a SAFETY stop to content_filter (%i-byte pieces)', async (size) => {
    expect(await runStream('safety.sse', size)).toEqual([
      role(),
      content('Here is how'),
      finish('content_filter'),
      { choices: [], usage: tokensOf({ prompt_tokens: 14, completion_tokens: 3, total_tokens: 17 }) },
    ]);
  });

  it.each(SPLITS)('answers a blocked prompt (no candidates) with empty content and content_filter (%i-byte pieces)', async (size) => {
    expect(await runStream('blocked-prompt.sse', size)).toEqual([
      role(),
      finish('content_filter'),
      { choices: [], usage: tokensOf({ prompt_tokens: 21, completion_tokens: 0, total_tokens: 21 }) },
    ]);
  });

  it.each(SPLITS)('fails MALFORMED_FUNCTION_CALL as a retryable server error before any chunk, never a silent empty stop (%i-byte pieces)', async (size) => {
    const { emitted, failure } = await runFailingStream('malformed-function-call.sse', size);
    expect(emitted).toEqual([]);
    expect(failure).toMatchObject({ kind: 'server', retryable: true, status: 200 });
    expect(failure.message).toContain('MALFORMED_FUNCTION_CALL');
  });

  it.each(SPLITS)('refuses to end a stream cut before any finishReason as complete (%i-byte pieces)', async (size) => {
    const { emitted, failure } = await runFailingStream('premature-end.sse', size);
    expect(emitted).toEqual([role(), content('The first half'), content(' of an ans')]);
    expect(failure).toMatchObject({ kind: 'server', retryable: true });
  });

  it.each(SPLITS)('raises an error object inside the 200 stream with the kind of its RPC status (%i-byte pieces)', async (size) => {
    const { emitted, failure } = await runFailingStream('error-chunk.sse', size);
    expect(emitted).toEqual([role(), content('Hel')]);
    expect(failure).toMatchObject({ kind: 'overloaded', retryable: true, status: 503, message: 'The model is overloaded. Please try again later.' });
  });
});

describe('Gemini finishReason map', () => {
  it('maps every finishReason of the enum: safety family to content_filter, broken tool calls apart, others to stop', () => {
    const expected: Record<string, string | null> = {
      FINISH_REASON_UNSPECIFIED: null,
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
      MALFORMED_FUNCTION_CALL: 'broken-tool-call',
      UNEXPECTED_TOOL_CALL: 'broken-tool-call',
      TOO_MANY_TOOL_CALLS: 'broken-tool-call',
      SOMETHING_NEW: 'stop',
    };
    for (const [reason, finish] of Object.entries(expected)) expect([reason, mapFinishReason(reason)]).toEqual([reason, finish]);
    expect(mapFinishReason(undefined)).toBeNull();
  });

  it('says tool_calls for a plain STOP after a functionCall, and keeps any other reason', () => {
    expect([withToolCalls('stop', true), withToolCalls('stop', false), withToolCalls('length', true)]).toEqual(['tool_calls', 'stop', 'length']);
  });
});

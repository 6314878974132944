import { describe, expect, it } from 'vitest';
import { tokensOf } from '../../support/token-usage';
import { UpstreamAttemptError } from '../../../functions/shared/providers/types';
import { fixture, runStream, runStreamCapturing } from './support';

/**
 * OpenAI-style SSE fixtures (providers.md §1.4, §4.3–4.5, §5.2, §5.4) through the real SSE decoder in
 * awkward byte splits: the full list of chunk parts, and for failing streams what was emitted first.
 */

const SPLITS = [1, 3, 7, 64, 4096];
const usage = (p: number, c: number) => ({ choices: [], usage: tokensOf({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c }) });
const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] });
/** The first part of a stream whose chunks carry `system_fingerprint`: it is passed on once, there. */
const fingerprinted = (part: ReturnType<typeof delta>, fp = 'fp_1') => ({ ...part, system_fingerprint: fp });

describe('OpenAI-compatible streams', () => {
  it.each([1, 3, 7, 64, 4096])('turns a streamed tool call into the same parts whatever the byte split (%i bytes)', async (size) => {
    const parts = await runStream('gpt-4o-mini', fixture('tool-call-stream.sse'), size);
    expect(parts).toEqual([
      {
        choices: [
          {
            index: 0,
            delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
            finish_reason: null,
          },
        ],
      },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":"Pa' } }] }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'ris"}' } }] }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { choices: [], usage: tokensOf({ prompt_tokens: 50, completion_tokens: 17, total_tokens: 67 }) },
    ]);
  });

  it.each([1, 2, 5, 13])('reads DeepSeek CRLF frames, keep-alive comments and UTF-8 split mid-character (%i bytes)', async (size) => {
    const parts = await runStream('deepseek-r1', fixture('deepseek-reasoning-crlf.sse'), size);
    expect(parts).toEqual([
      { choices: [{ index: 0, delta: { role: 'assistant', reasoning_content: 'Hmm, ' }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { content: 'Grüße 🌍 ' }, finish_reason: null }] },
      {
        choices: [{ index: 0, delta: { content: '你好' }, finish_reason: 'stop' }],
        usage: tokensOf({
          prompt_tokens: 10,
          completion_tokens: 5,
          total_tokens: 15,
          prompt_tokens_details: { cached_tokens: 4 },
          completion_tokens_details: { reasoning_tokens: 2 },
        }),
      },
    ]);
  });

  it.each(SPLITS)('passes parallel tool calls through by their upstream index, ids on the first fragment (%i bytes)', async (size) => {
    expect(await runStream('gpt-4o', fixture('parallel-tool-calls.sse'), size)).toEqual([
      fingerprinted(
        delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_par_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      ),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Paris"}' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_par_2', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 1, function: { arguments: '{"zone": ' } }] }),
      delta({ tool_calls: [{ index: 1, function: { arguments: '"CET"}' } }] }),
      delta({}, 'tool_calls'),
      usage(80, 40),
    ]);
  });

  it.each(SPLITS)('ends with length when the output limit bites (%i bytes)', async (size) => {
    expect(await runStream('gpt-4o', fixture('length.sse'), size)).toEqual([
      fingerprinted(delta({ role: 'assistant', content: '' })),
      delta({ content: 'Once upon' }),
      delta({ content: ' a time' }),
      delta({}, 'length'),
      usage(12, 3),
    ]);
  });

  it.each(SPLITS)('ends with content_filter as the upstream says (%i bytes)', async (size) => {
    expect(await runStream('gpt-4o', fixture('content-filter.sse'), size)).toEqual([
      fingerprinted(delta({ role: 'assistant', content: '' })),
      delta({ content: 'I can' }),
      delta({}, 'content_filter'),
      usage(20, 2),
    ]);
  });

  it.each(SPLITS)('ends with stop on a stop sequence, the sequence itself not sent (%i bytes)', async (size) => {
    expect(await runStream('gpt-4o', fixture('stop-sequence.sse'), size)).toEqual([
      fingerprinted(delta({ role: 'assistant', content: '' })),
      delta({ content: '1, 2, ' }),
      delta({ content: '3' }),
      delta({}, 'stop'),
      usage(15, 5),
    ]);
  });

  it('refuses to treat a stream cut before any finish_reason as complete', async () => {
    await expect(runStream('gpt-4o', fixture('cut-mid-answer.sse'), 16)).rejects.toBeInstanceOf(UpstreamAttemptError);
    const run = await runStreamCapturing('gpt-4o', fixture('cut-mid-answer.sse'), 16);
    expect(run.parts).toEqual([delta({ role: 'assistant', content: 'Half an' }), delta({ content: ' answer' })]);
  });

  it('raises a mid-stream data error event as an upstream failure', async () => {
    const run = await runStreamCapturing('gpt-4o', fixture('error-mid-stream.sse'), 16);
    const err = run.error;
    expect(err).toBeInstanceOf(UpstreamAttemptError);
    expect((err as UpstreamAttemptError).failure.retryable).toBe(true);
    expect(run.parts).toEqual([delta({ role: 'assistant', content: 'Hel' })]);
  });
});

describe('MiniMax streams', () => {
  it.each(SPLITS)('returns reasoning_details fragments as reasoning_content deltas, then content and the tool call (%i bytes)', async (size) => {
    expect(await runStream('minimax', fixture('reasoning-details.sse', 'minimax'), size)).toEqual([
      delta({ role: 'assistant', content: '', reasoning_content: 'The user wants' }),
      delta({ reasoning_content: ' the weather in Paris — ' }),
      delta({ reasoning_content: 'call the tool.' }),
      delta({ content: 'Let me check.' }),
      delta({ tool_calls: [{ index: 0, id: 'call_function_7q1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] }),
      {
        choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
        usage: tokensOf({ prompt_tokens: 80, completion_tokens: 38, total_tokens: 118, completion_tokens_details: { reasoning_tokens: 14 } }),
      },
    ]);
  });

  it.each(SPLITS)('ends a started stream with content_filter when base_resp flags the output (1027) (%i bytes)', async (size) => {
    expect(await runStream('minimax', fixture('sensitive-mid-stream.sse', 'minimax'), size)).toEqual([
      delta({ role: 'assistant', content: '', reasoning_content: 'Hmm.' }),
      delta({ content: 'Here is how' }),
      delta({}, 'content_filter'),
    ]);
  });

  it("refuses flagged input (base_resp 1026) before any output as the client's 400, never retried", async () => {
    const run = await runStreamCapturing('minimax', fixture('sensitive-input-stream.sse', 'minimax'), 7);
    expect(run.parts).toEqual([]);
    expect(run.error).toBeInstanceOf(UpstreamAttemptError);
    const failure = (run.error as UpstreamAttemptError).failure;
    expect(failure).toMatchObject({ kind: 'client', retryable: false, status: 400 });
    expect(failure.clientError).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'content_policy_violation' });
  });

  it('raises a base_resp 1002 (rate limit) inside a 200 stream as a retryable rate limit', async () => {
    const run = await runStreamCapturing('minimax', sse([{ id: 'x', choices: null, base_resp: { status_code: 1002, status_msg: 'rate limit' } }]), 7);
    expect(run.parts).toEqual([]);
    expect(run.error).toBeInstanceOf(UpstreamAttemptError);
    expect((run.error as UpstreamAttemptError).failure).toMatchObject({ kind: 'rate-limit', retryable: true });
  });

  it('raises another base_resp inside a stream as a retryable failure after the chunks already emitted', async () => {
    const run = await runStreamCapturing('minimax', fixture('error-mid-stream.sse', 'minimax'), 5);
    expect(run.parts).toEqual([delta({ role: 'assistant', content: '' }), delta({ content: 'Partial' })]);
    expect(run.error).toBeInstanceOf(UpstreamAttemptError);
    expect((run.error as UpstreamAttemptError).failure).toMatchObject({ kind: 'server', retryable: true });
  });
});

/** `data:` frames of the given chunks, then `[DONE]`, as OpenAI frames them (providers.md §1.4). */
function sse(chunks: readonly unknown[]): Buffer {
  return Buffer.from(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n', 'utf8');
}

/** One OpenAI `ChatCompletionTokenLogprob` with one alternative (openai-node 6.x). */
const tokenLogprob = (token: string, logprob: number) => ({
  token,
  logprob,
  bytes: [...Buffer.from(token, 'utf8')],
  top_logprobs: [{ token, logprob, bytes: [...Buffer.from(token, 'utf8')] }],
});

describe('OpenAI-compatible streams: several choices, logprobs, custom tool calls', () => {
  const head = { id: 'chatcmpl-n', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-2024-08-06' };
  const choice = (index: number, d: Record<string, unknown>, finish: string | null = null, logprobs: unknown = null) => ({
    index,
    delta: d,
    logprobs,
    finish_reason: finish,
  });

  it.each(SPLITS)('passes two interleaved choices through by index, each token with its logprobs (%i bytes)', async (size) => {
    const lp0 = { content: [tokenLogprob('Hé', -0.1)], refusal: null };
    const lp1 = { content: [tokenLogprob('Yo', -0.7)], refusal: null };
    const bytes = sse([
      { ...head, choices: [choice(0, { role: 'assistant', content: '' }, null, { content: [], refusal: null })] },
      { ...head, choices: [choice(1, { role: 'assistant', content: '' }, null, { content: [], refusal: null })] },
      { ...head, choices: [choice(0, { content: 'Hé' }, null, lp0)] },
      { ...head, choices: [choice(1, { content: 'Yo' }, null, lp1)] },
      { ...head, choices: [choice(1, {}, 'stop')] },
      { ...head, choices: [choice(0, {}, 'length')] },
      { ...head, choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } },
    ]);
    expect(await runStream('gpt-4o', bytes, size)).toEqual([
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: { content: [], refusal: null }, finish_reason: null }] },
      { choices: [{ index: 1, delta: { role: 'assistant', content: '' }, logprobs: { content: [], refusal: null }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { content: 'Hé' }, logprobs: lp0, finish_reason: null }] },
      { choices: [{ index: 1, delta: { content: 'Yo' }, logprobs: lp1, finish_reason: null }] },
      { choices: [{ index: 1, delta: {}, finish_reason: 'stop' }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
      usage(5, 2),
    ]);
  });

  it('treats a stream in which one of two choices never finished as cut, not complete', async () => {
    const bytes = sse([
      { ...head, choices: [choice(0, { role: 'assistant', content: 'A' }), choice(1, { role: 'assistant', content: 'B' })] },
      { ...head, choices: [choice(0, {}, 'stop')] },
    ]);
    const run = await runStreamCapturing('gpt-4o', bytes, 7);
    expect(run.error).toBeInstanceOf(UpstreamAttemptError);
    expect(run.parts).toHaveLength(2);
  });

  it('passes an OpenAI custom tool call through: type custom, name and input pieces', async () => {
    const bytes = sse([
      {
        ...head,
        choices: [choice(0, { role: 'assistant', tool_calls: [{ index: 0, id: 'call_c1', type: 'custom', custom: { name: 'run_sql', input: '' } }] })],
      },
      { ...head, choices: [choice(0, { tool_calls: [{ index: 0, custom: { input: 'SELECT 1' } }] })] },
      { ...head, choices: [choice(0, {}, 'tool_calls')] },
    ]);
    expect(await runStream('gpt-4o', bytes, 5)).toEqual([
      delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_c1', type: 'custom', custom: { name: 'run_sql', input: '' } }] }),
      delta({ tool_calls: [{ index: 0, custom: { input: 'SELECT 1' } }] }),
      delta({}, 'tool_calls'),
    ]);
  });
});

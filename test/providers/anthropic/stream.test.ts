import { describe, expect, it } from 'vitest';
import type { ChunkDelta, ChunkParts, FinishReason } from '../../../functions/shared/openai/chat-response';
import { anthropicAdapter } from '../../../functions/shared/providers/anthropic/adapter';
import { mapStopReason } from '../../../functions/shared/providers/anthropic/finish-reason';
import { UpstreamAttemptError, type UpstreamSseEvent } from '../../../functions/shared/providers/types';
import { anthropicCtx, fixture, runStream, translatingTransform } from './support';
import { runTransform } from '../stream-run';
import { tokensOf } from '../../support/token-usage';

/**
 * The Anthropic stream transform against SSE fixtures written from the documented wire format
 * (providers.md §2.6), fed through decodeSse in awkward byte splits: the full list of parts emitted.
 */

const part = (delta: ChunkDelta, finish: FinishReason | null = null): ChunkParts => ({ choices: [{ index: 0, delta, finish_reason: finish }] });
const role = part({ role: 'assistant', content: '' });
const text = (content: string) => part({ content });
const finish = (reason: FinishReason) => part({}, reason);
const usage = (u: Parameters<typeof tokensOf>[0]): ChunkParts => ({ choices: [], usage: tokensOf(u) });
const toolStart = (index: number, id: string, name: string) => part({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
const toolArgs = (index: number, args: string) => part({ tool_calls: [{ index, function: { arguments: args } }] });

const SPLITS = [1, 3, 7, 64, 4096];

const COMPLETE: Array<[string, string, ChunkParts[]]> = [
  [
    'a text answer with multi-byte UTF-8 and a ping',
    'text-stream.sse',
    [role, text('Hello'), text(', Grüße 🌍 '), text('你好!'), finish('stop'), usage({ prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 })],
  ],
  [
    'a stop_sequence ending in CRLF framing',
    'stop-sequence-crlf.sse',
    [role, text('Ça va → '), text('oui'), finish('stop'), usage({ prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 })],
  ],
  [
    'a single tool call, with cache writes and reads added to the prompt count',
    'tool-call.sse',
    [
      role,
      toolStart(0, 'toolu_01A', 'get_weather'),
      toolArgs(0, '{"city": "Pa'),
      toolArgs(0, 'ris"}'),
      finish('tool_calls'),
      usage({ prompt_tokens: 2510, completion_tokens: 52, total_tokens: 2562, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 100 } }),
    ],
  ],
  [
    'text then two parallel tool calls, numbered 0 and 1 whatever their block index',
    'parallel-tool-calls.sse',
    [
      role,
      text('Let me check both.'),
      toolStart(0, 'toolu_01P', 'get_weather'),
      toolArgs(0, '{"city":"Paris"}'),
      toolStart(1, 'toolu_01L', 'get_weather'),
      toolArgs(1, '{"city":'),
      toolArgs(1, '"London"}'),
      finish('tool_calls'),
      usage({ prompt_tokens: 500, completion_tokens: 88, total_tokens: 588, prompt_tokens_details: { cached_tokens: 0 } }),
    ],
  ],
  [
    'thinking as reasoning_content, signature dropped, then the answer',
    'thinking-stream.sse',
    [
      role,
      part({ reasoning_content: 'The user greets me; ' }),
      part({ reasoning_content: 'answer briefly.' }),
      text('Hi there.'),
      finish('stop'),
      usage({ prompt_tokens: 40, completion_tokens: 45, total_tokens: 85, completion_tokens_details: { reasoning_tokens: 30 } }),
    ],
  ],
  [
    'a max_tokens ending as length',
    'max-tokens.sse',
    [role, text('Once upon a'), finish('length'), usage({ prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 })],
  ],
  [
    'a refusal as content_filter',
    'refusal.sse',
    [role, text('I can'), finish('content_filter'), usage({ prompt_tokens: 18, completion_tokens: 3, total_tokens: 21 })],
  ],
];

describe('Anthropic streams', () => {
  describe.each(COMPLETE)('%s', (_name, file, expected) => {
    it.each(SPLITS)('emits the same parts in %i-byte pieces', async (size) => {
      const run = await runStream(fixture(file), size);
      expect(run.error).toBeUndefined();
      expect(run.parts).toEqual(expected);
    });
  });

  it.each(SPLITS)('fails with a retryable overload on a mid-stream error event, after the parts before it (%i bytes)', async (size) => {
    const run = await runStream(fixture('error-mid-stream.sse'), size);
    expect(run.parts).toEqual([role, text('Hel')]);
    expect(run.error).toBeInstanceOf(UpstreamAttemptError);
    expect((run.error as UpstreamAttemptError).failure).toMatchObject({ kind: 'overloaded', retryable: true, status: 200 });
  });

  it.each(SPLITS)('emits nothing before an overload right after message_start, so the router can still fall back (%i bytes)', async (size) => {
    const run = await runStream(fixture('overloaded-before-content.sse'), size);
    expect(run.parts).toEqual([]);
    expect((run.error as UpstreamAttemptError).failure).toMatchObject({ kind: 'overloaded', retryable: true });
  });

  it.each(SPLITS)('treats a stream cut before message_stop as a retryable server failure (%i bytes)', async (size) => {
    const run = await runStream(fixture('premature-end.sse'), size);
    expect(run.parts).toEqual([role, text('Half an'), text(' answer')]);
    expect(run.error).toBeInstanceOf(UpstreamAttemptError);
    expect((run.error as UpstreamAttemptError).failure).toMatchObject({ kind: 'server', retryable: true });
  });
});

describe('Anthropic stream events, one by one', () => {
  const ev = (data: Record<string, unknown>): UpstreamSseEvent => ({ event: String(data.type), data: JSON.stringify(data) });
  const start = (u: Record<string, unknown>) =>
    ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: u } });
  const feed = (events: UpstreamSseEvent[]): ChunkParts[] => {
    const t = translatingTransform();
    return [...events.flatMap((e) => t.push(e)), ...t.end()];
  };
  const failureOf = (events: UpstreamSseEvent[]) => {
    try {
      feed(events);
    } catch (e) {
      if (e instanceof UpstreamAttemptError) return e.failure;
      throw e;
    }
    throw new Error('expected a failure');
  };

  it('takes the last cumulative output count and never adds message_delta counts up', () => {
    const parts = feed([
      start({ input_tokens: 10, output_tokens: 1 }),
      ev({ type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 7 } }),
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
      ev({ type: 'message_stop' }),
    ]);
    expect(parts).toEqual([role, finish('stop'), usage({ prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 })]);
  });

  it('takes input and cache counts from message_delta when it carries them (cumulative, newer API)', () => {
    const parts = feed([
      start({ input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }),
      ev({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { input_tokens: 12, cache_creation_input_tokens: 40, cache_read_input_tokens: 5, output_tokens: 3 },
      }),
      ev({ type: 'message_stop' }),
    ]);
    expect(parts.at(-1)).toEqual(
      usage({ prompt_tokens: 57, completion_tokens: 3, total_tokens: 60, prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 40 } }),
    );
  });

  it('still reports a finish when message_stop comes without a stop_reason', () => {
    expect(feed([start({ input_tokens: 1, output_tokens: 1 }), ev({ type: 'message_stop' })])).toEqual([
      role,
      finish('stop'),
      usage({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }),
    ]);
  });

  it('ignores events after message_stop and event types it does not know', () => {
    const parts = feed([
      start({ input_tokens: 1, output_tokens: 1 }),
      ev({ type: 'some_future_event', payload: 1 }),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } }),
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
      ev({ type: 'message_stop' }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'late' } }),
    ]);
    expect(parts).toEqual([role, finish('stop'), usage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })]);
  });

  it.each([
    ['overloaded_error', 'overloaded', true],
    ['api_error', 'server', true],
    ['rate_limit_error', 'rate-limit', true],
    ['timeout_error', 'timeout', true],
    ['invalid_request_error', 'client', false],
    ['authentication_error', 'auth-config', false],
    ['something_new_error', 'server', true],
  ] as const)('maps an error event of type %s to %s', (type, kind, retryable) => {
    const failure = failureOf([start({ input_tokens: 1, output_tokens: 1 }), ev({ type: 'error', error: { type, message: 'boom' } })]);
    expect(failure).toMatchObject({ kind, retryable });
  });

  it('rejects an event that is not JSON as a retryable server failure', () => {
    expect(failureOf([{ event: 'message_start', data: '{"type":"message_sta' }])).toMatchObject({ kind: 'server', retryable: true });
  });

  it('rejects argument fragments for a block that never started as a tool call', () => {
    const failure = failureOf([
      start({ input_tokens: 1, output_tokens: 1 }),
      ev({ type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }),
    ]);
    expect(failure).toMatchObject({ kind: 'server', retryable: true });
  });

  it('keeps separate state per transform', () => {
    const a = translatingTransform();
    const b = translatingTransform();
    a.push(start({ input_tokens: 1, output_tokens: 1 }));
    const toolBlock = { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_x', name: 'f', input: {} } };
    expect(a.push(ev(toolBlock))).toEqual([role, toolStart(0, 'toolu_x', 'f')]);
    expect(b.push(ev({ ...toolBlock, index: 1 }))).toEqual([role, toolStart(0, 'toolu_x', 'f')]);
  });
});

describe('Anthropic stream events, verbatim for the Messages surface', () => {
  it('follows the parts of every event with that event as received, in order, across split reads', async () => {
    const bytes = fixture('thinking-stream.sse');
    const run = await runTransform(anthropicAdapter.createStreamTransform(anthropicCtx()), bytes, 7);
    expect(run.error).toBeUndefined();
    const verbatim = run.parts.flatMap((p) => (p.upstreamEvent === undefined ? [] : [p.upstreamEvent]));
    const sent = bytes
      .toString('utf8')
      .split(/\r?\n\r?\n/)
      .filter((block) => /^data:/m.test(block))
      .map((block) => ({ event: /^event: ?(.*)$/m.exec(block)?.[1], data: /^data: ?(.*)$/m.exec(block)?.[1] }));
    expect(verbatim).toEqual(sent);
    for (const p of run.parts) if (p.upstreamEvent !== undefined) expect(p.choices).toEqual([]);
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

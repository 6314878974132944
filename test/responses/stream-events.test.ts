import { describe, expect, it } from 'vitest';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import type { ChatCompletionChunk, ChunkChoice } from '../../functions/shared/openai/chat-response';
import { createResponseRequest } from '../../functions/shared/responses/request';
import { responseContext } from '../../functions/shared/responses/response-object';
import { createResponsesStreamEncoder } from '../../functions/shared/responses/stream-events';
import { responseEventSchema, schemaErrors } from '../support/openapi/validator';

/**
 * The chat chunk → Responses event translation on its own, with chunk sequences the simulator does
 * not produce (a refusal, log probabilities, interleaved tool-call fragments, a content filter), each
 * event checked against its schema in OpenAI's description.
 */

function encoder() {
  const body = createResponseRequest.parse({ model: 'gpt-4o', input: 'hi', stream: true });
  const chat = chatCompletionRequest.parse({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
  return createResponsesStreamEncoder(responseContext('req_1', 1_700_000_000_000, body, chat));
}

const chunk = (delta: ChunkChoice['delta'], extra: Partial<ChunkChoice> = {}): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, delta, finish_reason: null, ...extra }],
});

const usageChunk: ChatCompletionChunk = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o',
  choices: [],
  usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, completion_tokens_details: { reasoning_tokens: 2 } },
};

/** The SSE frames as events, each validated against its own schema and checked for its `event:` name. */
function parse(frames: string[]): Array<Record<string, unknown> & { type: string }> {
  return frames.map((f) => {
    const m = /^event: (\S+)\ndata: (.*)\n\n$/s.exec(f);
    if (m === null) throw new Error(`not one SSE event: ${f}`);
    const event = JSON.parse(m[2] ?? '') as Record<string, unknown> & { type: string };
    expect(event.type).toBe(m[1]);
    expect(schemaErrors(responseEventSchema(event.type), event), event.type).toEqual([]);
    return event;
  });
}

describe('chat chunks → Responses events', () => {
  it('opens the response once, then reasoning, message and function calls in order, numbered from 0', () => {
    const enc = encoder();
    const frames = [
      ...enc.chunk(chunk({ role: 'assistant', reasoning_content: 'think ' })),
      ...enc.chunk(chunk({ reasoning_content: 'hard' })),
      ...enc.chunk(chunk({ content: 'Let me ' })),
      ...enc.chunk(chunk({ content: 'check.' })),
      ...enc.chunk(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a"' } }] })),
      ...enc.chunk(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] })),
      // A late fragment of the first call, after the second began: still its own item's.
      ...enc.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] })),
      ...enc.chunk(chunk({}, { finish_reason: 'tool_calls' })),
      ...enc.chunk(usageChunk),
      ...enc.done(),
    ];
    const events = parse(frames);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = events.at(-1)?.['response'] as { output: Array<Record<string, unknown>>; usage: Record<string, unknown>; status: string };
    expect(completed.status).toBe('completed');
    expect(completed.output.map((o) => o['type'])).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(completed.output[2]).toMatchObject({ call_id: 'call_a', arguments: '{"a":1}' });
    expect(completed.usage).toEqual({
      input_tokens: 5,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 12,
    });
  });

  it('streams a refusal as its own content part, and log probabilities on the text deltas', () => {
    const enc = encoder();
    const logprobs = {
      content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }] }],
      refusal: null,
    };
    const events = parse([
      ...enc.chunk(chunk({ content: 'Hi' }, { logprobs })),
      ...enc.chunk(chunk({ refusal: 'I cannot ' })),
      ...enc.chunk(chunk({ refusal: 'help.' }, { finish_reason: 'stop' })),
      ...enc.done(),
    ]);
    expect(events.find((e) => e.type === 'response.output_text.delta')).toMatchObject({
      logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi' }] }],
    });
    expect(events.filter((e) => e.type === 'response.content_part.added').map((e) => (e['part'] as { type: string }).type)).toEqual(['output_text', 'refusal']);
    expect(events.find((e) => e.type === 'response.refusal.done')).toMatchObject({ refusal: 'I cannot help.', content_index: 1 });
    const message = (events.at(-1)?.['response'] as { output: Array<{ content: unknown[] }> }).output[0];
    expect(message?.content).toEqual([
      {
        type: 'output_text',
        text: 'Hi',
        annotations: [],
        logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }] }],
      },
      { type: 'refusal', refusal: 'I cannot help.' },
    ]);
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ] as const)('ends with response.incomplete when finish_reason is %s', (reason, detail) => {
    const enc = encoder();
    const events = parse([...enc.chunk(chunk({ content: 'cut' }, { finish_reason: reason })), ...enc.done()]);
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: detail } } });
    expect(events.find((e) => e.type === 'response.output_item.done')).toMatchObject({ item: { status: 'incomplete' } });
  });

  it('ends a failed stream with an error event and response.failed (rate limits keep their code)', () => {
    const enc = encoder();
    const events = parse([
      ...enc.chunk(chunk({ content: 'part' })),
      ...enc.failed({ message: 'Slow down.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' }),
    ]);
    expect(events.slice(-2)).toMatchObject([
      { type: 'error', code: 'rate_limit_exceeded', message: 'Slow down.' },
      { type: 'response.failed', response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down.' } } },
    ]);
  });
});

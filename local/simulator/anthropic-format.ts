/**
 * Renders a planned reply as a native Anthropic Messages response or event stream
 * (providers.md §2.5-2.6): `event:` + `data:` lines; message_start, per block content_block_start /
 * deltas / content_block_stop (a ping after the first block start), message_delta with cumulative
 * usage and the stop reason, message_stop.
 */
import { anthropicStreamError } from './anthropic-errors.js';
import type { AnthropicRequest } from './anthropic-input.js';
import { jsonEvent, type JsonReply, splitArguments, splitText, type SseEvent, type SseReply } from './deliver.js';
import type { JsonObject } from './json-narrowing.js';
import type { Finish, ReplyPlan } from './reply.js';
import type { SimCall } from './types.js';

/** Anthropic stop_reason for a neutral finish. */
export function anthropicStopReason(finish: Finish): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'tool_calls':
      return 'tool_use';
    case 'stop':
      return 'end_turn';
    default:
      return 'end_turn';
  }
}

function signature(call: SimCall): string {
  return Buffer.from(`sim-thinking-signature-${call.seq}`).toString('base64');
}

function toolUseId(call: SimCall, i: number): string {
  return `toolu_sim${call.seq.toString().padStart(4, '0')}x${i}`;
}

/** Anthropic's usage is additive: `input_tokens` excludes the cache read (a `[cached]` request's, reply.ts). */
function usage(plan: ReplyPlan, outputTokens: number): JsonObject {
  const read = plan.cachedTokens ?? 0;
  return { input_tokens: plan.promptTokens - read, cache_creation_input_tokens: 0, cache_read_input_tokens: read, output_tokens: outputTokens };
}

/** Content blocks of the finished message, in order: thinking, text (when not calling tools), tool_use. */
function contentBlocks(call: SimCall, plan: ReplyPlan): JsonObject[] {
  const blocks: JsonObject[] = [];
  if (plan.reasoning) blocks.push({ type: 'thinking', thinking: plan.reasoning, signature: signature(call) });
  if (plan.toolCalls.length === 0) blocks.push({ type: 'text', text: plan.text });
  plan.toolCalls.forEach((c, i) => blocks.push({ type: 'tool_use', id: toolUseId(call, i), name: c.name, input: c.args }));
  return blocks;
}

/** Buffered `message` body. */
export function anthropicMessage(call: SimCall, req: AnthropicRequest, plan: ReplyPlan): JsonReply {
  return {
    kind: 'json',
    status: 200,
    headers: { 'request-id': call.requestId },
    body: {
      id: `msg_sim${call.seq}`,
      type: 'message',
      role: 'assistant',
      model: req.model,
      content: contentBlocks(call, plan),
      stop_reason: anthropicStopReason(plan.finish),
      stop_sequence: plan.stopSequence ?? null,
      usage: { ...usage(plan, plan.completionTokens), service_tier: 'standard' },
    },
  };
}

function ev(type: string, payload: JsonObject, content = false): SseEvent {
  return jsonEvent({ type, ...payload }, { event: type, content });
}

function blockEvents(call: SimCall, block: JsonObject, index: number, plan: ReplyPlan): SseEvent[] {
  const delta = (d: JsonObject, content = true): SseEvent => ev('content_block_delta', { index, delta: d }, content);
  const events: SseEvent[] = [];
  switch (block['type']) {
    case 'thinking':
      events.push(ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      for (const piece of splitText(plan.reasoning ?? '')) events.push(delta({ type: 'thinking_delta', thinking: piece }));
      events.push(delta({ type: 'signature_delta', signature: signature(call) }, false));
      break;
    case 'text':
      events.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const piece of splitText(plan.text)) events.push(delta({ type: 'text_delta', text: piece }));
      break;
    case 'tool_use': {
      events.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: block['id'], name: block['name'], input: {} } }));
      // The first input_json_delta is often empty (§2.6); consumers must cope.
      events.push(delta({ type: 'input_json_delta', partial_json: '' }, false));
      for (const frag of splitArguments(JSON.stringify(block['input']))) events.push(delta({ type: 'input_json_delta', partial_json: frag }));
      break;
    }
  }
  events.push(ev('content_block_stop', { index }));
  return events;
}

/** The full event stream (§2.6). */
export function anthropicStream(call: SimCall, req: AnthropicRequest, plan: ReplyPlan): SseReply {
  const events: SseEvent[] = [
    ev('message_start', {
      message: { id: `msg_sim${call.seq}`, type: 'message', role: 'assistant', model: req.model, content: [], stop_reason: null, stop_sequence: null, usage: usage(plan, 1) },
    }),
  ];
  contentBlocks(call, plan).forEach((block, index) => {
    const blockEventsList = blockEvents(call, block, index, plan);
    events.push(blockEventsList[0]!);
    if (index === 0) events.push(ev('ping', {}));
    events.push(...blockEventsList.slice(1));
  });
  events.push(
    ev('message_delta', {
      delta: { stop_reason: anthropicStopReason(plan.finish), stop_sequence: plan.stopSequence ?? null },
      usage: usage(plan, plan.completionTokens),
    }),
    ev('message_stop', {}),
  );
  return {
    kind: 'sse',
    eol: '\n',
    headers: { 'request-id': call.requestId },
    events,
    errorEvent: jsonEvent(anthropicStreamError(call.requestId), { event: 'error' }),
  };
}

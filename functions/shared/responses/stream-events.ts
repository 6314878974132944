import type { ChatCompletionChunk, ChunkChoice, Usage } from '../openai/chat-response';
import type { OpenAIErrorBody } from '../openai/errors';
import {
  finish,
  itemId,
  responseShell,
  toResponsesLogprobs,
  toResponsesUsage,
  type ItemStatus,
  type OutputContent,
  type OutputItem,
  type ResponseContext,
  type ResponseObject,
} from './response-object';

/**
 * Turns the chat core's streamed chunks into the Responses API's typed events (OpenAI's OpenAPI
 * description `ResponseStreamEvent`; the order is OpenAI's):
 *
 * `response.created` → `response.in_progress` → per output item `response.output_item.added`, then
 * for a message `response.content_part.added` → `response.output_text.delta`… (or
 * `response.refusal.delta`…) → `…done` → `response.content_part.done`; for a function call
 * `response.function_call_arguments.delta`… → `…done`; for exposed reasoning a `reasoning` item with
 * `response.reasoning_text.delta`… — then `response.output_item.done`, and last `response.completed`
 * (`response.incomplete` when the output limit or a content filter cut the answer) with the whole
 * response and its usage — or, when the upstream failed mid-answer, an `error` event and then
 * `response.failed` carrying the same error.
 *
 * Every event carries `sequence_number` (0, 1, 2, … within the stream). Output order: reasoning,
 * then the message, then the function calls, each item closed before the next kind opens; calls stay
 * open until the end, so a late argument fragment is never lost. The encoder holds its state in a
 * closure; it does no I/O.
 */
export interface ResponsesStreamEncoder {
  /** Events for one chat chunk (the first one also opens the response). */
  chunk(chunk: ChatCompletionChunk): string[];
  /** Events once the chat stream finished (`[DONE]`). */
  done(): string[];
  /** Events for a failure after the stream started (the chat core's error event). */
  failed(error: OpenAIErrorBody['error']): string[];
  /**
   * The whole response as the last event (`response.completed`, `.incomplete` or `.failed`) carries
   * it, once {@link done} or {@link failed} ran; undefined before (the store writes it before that
   * event is sent, responses/stored-response-writer.ts).
   */
  final(): ResponseObject | undefined;
}

interface OpenMessage {
  index: number;
  id: string;
  parts: Array<{ kind: 'output_text'; text: string; logprobs: ReturnType<typeof toResponsesLogprobs> } | { kind: 'refusal'; text: string }>;
}

interface OpenCall {
  index: number;
  id: string;
  callId: string;
  name: string;
  args: string;
}

export function createResponsesStreamEncoder(ctx: ResponseContext): ResponsesStreamEncoder {
  let seq = 0;
  let started = false;
  let nextIndex = 0;
  let reasoning: { index: number; id: string; text: string } | undefined;
  let final: ResponseObject | undefined;
  let message: OpenMessage | undefined;
  const calls = new Map<number, OpenCall>();
  const items: OutputItem[] = [];
  let usage: Usage | undefined;
  let finishReason: ChunkChoice['finish_reason'] = null;
  const out: string[] = [];

  const emit = (type: string, fields: Record<string, unknown>): void => {
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`);
  };
  const snapshot = (status: ResponseObject['status']): ResponseObject => ({ ...responseShell(ctx, status), output: items.filter((i) => i !== undefined) });
  const start = (): void => {
    if (started) return;
    started = true;
    emit('response.created', { response: snapshot('in_progress') });
    emit('response.in_progress', { response: snapshot('in_progress') });
  };

  function closeReasoning(status: ItemStatus): void {
    if (reasoning === undefined) return;
    const r = reasoning;
    reasoning = undefined;
    const id = r.id;
    const part = { type: 'reasoning_text' as const, text: r.text };
    emit('response.reasoning_text.done', { item_id: id, output_index: r.index, content_index: 0, text: r.text });
    emit('response.content_part.done', { item_id: id, output_index: r.index, content_index: 0, part });
    const item: OutputItem = { type: 'reasoning', id, summary: [], content: [part], encrypted_content: null, status };
    items[r.index] = item;
    emit('response.output_item.done', { output_index: r.index, item });
  }

  function closePart(m: OpenMessage): void {
    const id = m.id;
    const content_index = m.parts.length - 1;
    const p = m.parts[content_index];
    if (p === undefined) return;
    if (p.kind === 'output_text') {
      emit('response.output_text.done', { item_id: id, output_index: m.index, content_index, text: p.text, logprobs: p.logprobs });
      emit('response.content_part.done', { item_id: id, output_index: m.index, content_index, part: contentOf(p) });
    } else {
      emit('response.refusal.done', { item_id: id, output_index: m.index, content_index, refusal: p.text });
      emit('response.content_part.done', { item_id: id, output_index: m.index, content_index, part: contentOf(p) });
    }
  }

  function closeMessage(status: ItemStatus): void {
    if (message === undefined) return;
    const m = message;
    message = undefined;
    closePart(m);
    const item: OutputItem = { type: 'message', id: m.id, role: 'assistant', status, content: m.parts.map(contentOf) };
    items[m.index] = item;
    emit('response.output_item.done', { output_index: m.index, item });
  }

  function closeCalls(status: ItemStatus): void {
    for (const c of [...calls.values()].sort((a, b) => a.index - b.index)) {
      emit('response.function_call_arguments.done', { item_id: c.id, output_index: c.index, name: c.name, arguments: c.args });
      const item: OutputItem = { type: 'function_call', id: c.id, call_id: c.callId, name: c.name, arguments: c.args, status };
      items[c.index] = item;
      emit('response.output_item.done', { output_index: c.index, item });
    }
    calls.clear();
  }

  function onReasoning(delta: string): void {
    if (reasoning === undefined) {
      const index = nextIndex++;
      reasoning = { index, id: itemId(ctx, 'reasoning', index), text: '' };
      const item = { type: 'reasoning', id: reasoning.id, summary: [], content: [], encrypted_content: null, status: 'in_progress' };
      emit('response.output_item.added', { output_index: reasoning.index, item });
      emit('response.content_part.added', { item_id: item.id, output_index: reasoning.index, content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    reasoning.text += delta;
    emit('response.reasoning_text.delta', { item_id: reasoning.id, output_index: reasoning.index, content_index: 0, delta });
  }

  function onText(kind: 'output_text' | 'refusal', delta: string, logprobs: unknown): void {
    closeReasoning('completed');
    if (message === undefined) {
      const index = nextIndex++;
      message = { index, id: itemId(ctx, 'message', index), parts: [] };
      emit('response.output_item.added', { output_index: message.index, item: { type: 'message', id: message.id, role: 'assistant', status: 'in_progress', content: [] } });
    }
    const m = message;
    const id = m.id;
    let part = m.parts.at(-1);
    if (part?.kind !== kind) {
      if (part !== undefined) closePart(m);
      part = kind === 'output_text' ? { kind, text: '', logprobs: [] } : { kind, text: '' };
      m.parts.push(part);
      emit('response.content_part.added', { item_id: id, output_index: m.index, content_index: m.parts.length - 1, part: contentOf(kind === 'output_text' ? { kind, text: '', logprobs: [] } : { kind, text: '' }) });
    }
    part.text += delta;
    const content_index = m.parts.length - 1;
    if (part.kind === 'output_text') {
      const lp = toResponsesLogprobs(logprobs);
      part.logprobs.push(...lp);
      emit('response.output_text.delta', { item_id: id, output_index: m.index, content_index, delta, logprobs: lp });
    } else emit('response.refusal.delta', { item_id: id, output_index: m.index, content_index, delta });
  }

  function onToolCall(t: NonNullable<ChunkChoice['delta']['tool_calls']>[number]): void {
    closeReasoning('completed');
    closeMessage('completed');
    let c = calls.get(t.index);
    if (c === undefined) {
      const index = nextIndex++;
      c = { index, id: itemId(ctx, 'function_call', index), callId: t.id ?? `call_${ctx.requestId}_${t.index}`, name: t.function?.name ?? '', args: '' };
      calls.set(t.index, c);
      emit('response.output_item.added', { output_index: index, item: { type: 'function_call', id: c.id, call_id: c.callId, name: c.name, arguments: '', status: 'in_progress' } });
    }
    const delta = t.function?.arguments ?? '';
    if (delta === '') return;
    c.args += delta;
    emit('response.function_call_arguments.delta', { item_id: c.id, output_index: c.index, delta });
  }

  const drain = (): string[] => out.splice(0, out.length);

  return {
    chunk(chunk) {
      start();
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices.find((c) => c.index === 0);
      if (choice !== undefined) {
        const d = choice.delta;
        if (d.reasoning_content) onReasoning(d.reasoning_content);
        if (d.content) onText('output_text', d.content, choice.logprobs);
        if (d.refusal) onText('refusal', d.refusal, undefined);
        for (const t of d.tool_calls ?? []) if (t.type !== 'custom' && t.custom === undefined) onToolCall(t);
        if (choice.finish_reason !== null) finishReason = choice.finish_reason;
      }
      return drain();
    },
    done() {
      start();
      const outcome = finish(finishReason);
      closeReasoning(outcome.itemStatus);
      closeMessage(outcome.itemStatus);
      closeCalls(outcome.itemStatus);
      const response = snapshot(outcome.status);
      response.incomplete_details = outcome.incomplete_details;
      if (outcome.status === 'completed') response.completed_at = Math.floor(Date.now() / 1000);
      if (usage !== undefined) response.usage = toResponsesUsage(usage);
      final = response;
      emit(outcome.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
      return drain();
    },
    failed(error) {
      start();
      const code = error.code === 'rate_limit_exceeded' || error.type === 'rate_limit_error' ? 'rate_limit_exceeded' : 'server_error';
      emit('error', { code, message: error.message, param: error.param });
      const response = snapshot('failed');
      response.error = { code, message: error.message };
      if (usage !== undefined) response.usage = toResponsesUsage(usage);
      final = response;
      emit('response.failed', { response });
      return drain();
    },
    final: () => final,
  };
}

function contentOf(p: OpenMessage['parts'][number]): OutputContent {
  return p.kind === 'output_text' ? { type: 'output_text', text: p.text, annotations: [], logprobs: p.logprobs } : { type: 'refusal', refusal: p.text };
}

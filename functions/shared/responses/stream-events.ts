import type { ChatCompletionChunk, ChunkChoice, Usage } from '../openai/chat-response';
import type { OpenAIErrorBody } from '../errors/gateway-errors';
import { finish, responseShell, toResponsesUsage, type ResponseContext, type ResponseObject } from './response-object';
import { StreamOutputItems } from './stream-output-items';

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

/** The encoder for one response (`ctx`: its ids, model and request echo). */
export function createResponsesStreamEncoder(ctx: ResponseContext): ResponsesStreamEncoder {
  let seq = 0;
  let started = false;
  let final: ResponseObject | undefined;
  let usage: Usage | undefined;
  let finishReason: ChunkChoice['finish_reason'] = null;
  const out: string[] = [];

  const emit = (type: string, fields: Record<string, unknown>): void => {
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`);
  };
  const items = new StreamOutputItems(ctx, emit);
  const snapshot = (status: ResponseObject['status']): ResponseObject => ({ ...responseShell(ctx, status), output: items.output() });
  const start = (): void => {
    if (started) return;
    started = true;
    emit('response.created', { response: snapshot('in_progress') });
    emit('response.in_progress', { response: snapshot('in_progress') });
  };
  const drain = (): string[] => out.splice(0, out.length);

  return {
    chunk(chunk) {
      start();
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices.find((c) => c.index === 0);
      if (choice !== undefined) {
        const d = choice.delta;
        if (d.reasoning_content) items.onReasoning(d.reasoning_content);
        if (d.content) items.onText('output_text', d.content, choice.logprobs);
        if (d.refusal) items.onText('refusal', d.refusal, undefined);
        for (const t of d.tool_calls ?? []) if (t.type !== 'custom' && t.custom === undefined) items.onToolCall(t);
        if (choice.finish_reason !== null) finishReason = choice.finish_reason;
      }
      return drain();
    },
    done() {
      start();
      const outcome = finish(finishReason);
      items.closeAll(outcome.itemStatus);
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

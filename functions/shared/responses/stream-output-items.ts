import type { ChunkChoice } from '../openai/chat-response';
import { declaredToolName } from './namespaced-tools';
import {
  itemId,
  reasoningItem,
  toResponsesLogprobs,
  wantsReasoningSummary,
  type ItemStatus,
  type OutputContent,
  type OutputItem,
  type ResponseContext,
} from './response-object';

/** Writes one server-sent event (`type` plus its fields; the encoder adds `sequence_number`). */
export type EmitEvent = (type: string, fields: Record<string, unknown>) => void;

interface OpenMessage {
  index: number;
  id: string;
  parts: Array<{ kind: 'output_text'; text: string; logprobs: ReturnType<typeof toResponsesLogprobs> } | { kind: 'refusal'; text: string }>;
}

interface OpenCall {
  index: number;
  id: string;
  callId: string;
  /** The name as declared, with its namespace when it has one (namespaced-tools.ts). */
  name: { name: string; namespace?: string };
  args: string;
}

/**
 * The output items of one streamed Responses answer, opened and closed as the chat deltas arrive
 * (OpenAI's `ResponseStreamEvent` order): a `reasoning` item for `reasoning_content` (its text a
 * summary part or a content part, response-object.ts `wantsReasoningSummary`), a `message` item
 * with `output_text` / `refusal` content parts, a `function_call` item per tool call. Reasoning comes
 * first, then the message, then the calls, each kind closed before the next opens; calls stay open
 * until {@link closeAll}, so a late argument fragment is never lost. `output_index` counts items in
 * the order they opened. No I/O: events go to the `emit` it was given.
 */
export class StreamOutputItems {
  private nextIndex = 0;
  private reasoning: { index: number; id: string; text: string; summary: boolean } | undefined;
  private message: OpenMessage | undefined;
  private readonly calls = new Map<number, OpenCall>();
  /** Closed items by output index (sparse while items are open). */
  private readonly items: OutputItem[] = [];

  constructor(
    private readonly ctx: ResponseContext,
    private readonly emit: EmitEvent,
  ) {}

  /** The items closed so far, in output order. */
  output(): OutputItem[] {
    return this.items.filter((i) => i !== undefined);
  }

  /** Closes every open item with `status` (the answer ended). */
  closeAll(status: ItemStatus): void {
    this.closeReasoning(status);
    this.closeMessage(status);
    this.closeCalls(status);
  }

  private closeReasoning(status: ItemStatus): void {
    if (this.reasoning === undefined) return;
    const r = this.reasoning;
    this.reasoning = undefined;
    const id = r.id;
    if (r.summary) {
      const part = { type: 'summary_text' as const, text: r.text };
      this.emit('response.reasoning_summary_text.done', { item_id: id, output_index: r.index, summary_index: 0, text: r.text });
      this.emit('response.reasoning_summary_part.done', { item_id: id, output_index: r.index, summary_index: 0, part });
    } else {
      const part = { type: 'reasoning_text' as const, text: r.text };
      this.emit('response.reasoning_text.done', { item_id: id, output_index: r.index, content_index: 0, text: r.text });
      this.emit('response.content_part.done', { item_id: id, output_index: r.index, content_index: 0, part });
    }
    const item = reasoningItem(this.ctx, id, r.text, status);
    this.items[r.index] = item;
    this.emit('response.output_item.done', { output_index: r.index, item });
  }

  private closePart(m: OpenMessage): void {
    const id = m.id;
    const content_index = m.parts.length - 1;
    const p = m.parts[content_index];
    if (p === undefined) return;
    if (p.kind === 'output_text') {
      this.emit('response.output_text.done', { item_id: id, output_index: m.index, content_index, text: p.text, logprobs: p.logprobs });
      this.emit('response.content_part.done', { item_id: id, output_index: m.index, content_index, part: contentOf(p) });
    } else {
      this.emit('response.refusal.done', { item_id: id, output_index: m.index, content_index, refusal: p.text });
      this.emit('response.content_part.done', { item_id: id, output_index: m.index, content_index, part: contentOf(p) });
    }
  }

  private closeMessage(status: ItemStatus): void {
    if (this.message === undefined) return;
    const m = this.message;
    this.message = undefined;
    this.closePart(m);
    const item: OutputItem = { type: 'message', id: m.id, role: 'assistant', status, content: m.parts.map(contentOf) };
    this.items[m.index] = item;
    this.emit('response.output_item.done', { output_index: m.index, item });
  }

  private closeCalls(status: ItemStatus): void {
    for (const c of [...this.calls.values()].sort((a, b) => a.index - b.index)) {
      this.emit('response.function_call_arguments.done', { item_id: c.id, output_index: c.index, name: c.name.name, arguments: c.args });
      const item: OutputItem = { type: 'function_call', id: c.id, call_id: c.callId, ...c.name, arguments: c.args, status };
      this.items[c.index] = item;
      this.emit('response.output_item.done', { output_index: c.index, item });
    }
    this.calls.clear();
  }

  /**
   * A `reasoning_content` delta: opens the reasoning item on the first one, its one part a summary
   * part when the request asked for a summary (response-object.ts `wantsReasoningSummary`).
   */
  onReasoning(delta: string): void {
    if (this.reasoning === undefined) {
      const index = this.nextIndex++;
      this.reasoning = { index, id: itemId(this.ctx, 'reasoning', index), text: '', summary: wantsReasoningSummary(this.ctx) };
      const item = { type: 'reasoning', id: this.reasoning.id, summary: [], content: [], encrypted_content: null, status: 'in_progress' };
      this.emit('response.output_item.added', { output_index: index, item });
      if (this.reasoning.summary)
        this.emit('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
      else this.emit('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    const r = this.reasoning;
    r.text += delta;
    if (r.summary) this.emit('response.reasoning_summary_text.delta', { item_id: r.id, output_index: r.index, summary_index: 0, delta });
    else this.emit('response.reasoning_text.delta', { item_id: r.id, output_index: r.index, content_index: 0, delta });
  }

  /** A `content` (`output_text`) or `refusal` delta: closes reasoning, opens the message or a new part. */
  onText(kind: 'output_text' | 'refusal', delta: string, logprobs: unknown): void {
    this.closeReasoning('completed');
    if (this.message === undefined) {
      const index = this.nextIndex++;
      this.message = { index, id: itemId(this.ctx, 'message', index), parts: [] };
      this.emit('response.output_item.added', {
        output_index: this.message.index,
        item: { type: 'message', id: this.message.id, role: 'assistant', status: 'in_progress', content: [] },
      });
    }
    const m = this.message;
    const id = m.id;
    let part = m.parts.at(-1);
    if (part?.kind !== kind) {
      if (part !== undefined) this.closePart(m);
      part = kind === 'output_text' ? { kind, text: '', logprobs: [] } : { kind, text: '' };
      m.parts.push(part);
      this.emit('response.content_part.added', {
        item_id: id,
        output_index: m.index,
        content_index: m.parts.length - 1,
        part: contentOf(kind === 'output_text' ? { kind, text: '', logprobs: [] } : { kind, text: '' }),
      });
    }
    part.text += delta;
    const content_index = m.parts.length - 1;
    if (part.kind === 'output_text') {
      const lp = toResponsesLogprobs(logprobs);
      part.logprobs.push(...lp);
      this.emit('response.output_text.delta', { item_id: id, output_index: m.index, content_index, delta, logprobs: lp });
    } else this.emit('response.refusal.delta', { item_id: id, output_index: m.index, content_index, delta });
  }

  /** A tool-call delta: closes reasoning and the message, opens the call on its first fragment. */
  onToolCall(t: NonNullable<ChunkChoice['delta']['tool_calls']>[number]): void {
    this.closeReasoning('completed');
    this.closeMessage('completed');
    let c = this.calls.get(t.index);
    if (c === undefined) {
      const index = this.nextIndex++;
      c = {
        index,
        id: itemId(this.ctx, 'function_call', index),
        callId: t.id ?? `call_${this.ctx.requestId}_${t.index}`,
        name: declaredToolName(this.ctx.body, t.function?.name ?? ''),
        args: '',
      };
      this.calls.set(t.index, c);
      this.emit('response.output_item.added', {
        output_index: index,
        item: { type: 'function_call', id: c.id, call_id: c.callId, ...c.name, arguments: '', status: 'in_progress' },
      });
    }
    const delta = t.function?.arguments ?? '';
    if (delta === '') return;
    c.args += delta;
    this.emit('response.function_call_arguments.delta', { item_id: c.id, output_index: c.index, delta });
  }
}

function contentOf(p: OpenMessage['parts'][number]): OutputContent {
  return p.kind === 'output_text' ? { type: 'output_text', text: p.text, annotations: [], logprobs: p.logprobs } : { type: 'refusal', refusal: p.text };
}

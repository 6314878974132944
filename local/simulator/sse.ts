/**
 * Server-sent events as the simulator writes them. Providers differ in framing: OpenAI-style hosts
 * send `data:` lines only, Anthropic adds an `event:` line per event (providers.md §2.6), Gemini
 * separates events with `\r\n\r\n` (§3.4), DeepSeek interleaves `: keep-alive` comments (§4.5).
 */

/** One event. `content` marks events that carry generated output (counted by chunk faults). */
export interface SseEvent {
  event?: string;
  /** The `data:` payload, already serialised (JSON text, or `[DONE]`). */
  data?: string;
  /** A comment line (`: <text>`), ignored by SSE parsers. */
  comment?: string;
  content?: boolean;
}

/** Line ending used inside and between events. */
export type SseEol = '\n' | '\r\n';

/** Wire form of one event, including the blank line that terminates it. */
export function serializeEvent(e: SseEvent, eol: SseEol): string {
  let out = '';
  if (e.comment !== undefined) out += `: ${e.comment}${eol}`;
  if (e.event !== undefined) out += `event: ${e.event}${eol}`;
  if (e.data !== undefined) out += `data: ${e.data}${eol}`;
  return out + eol;
}

/** A `data:` event carrying `payload` as JSON. */
export function jsonEvent(payload: unknown, opts: { event?: string; content?: boolean } = {}): SseEvent {
  return { ...opts, data: JSON.stringify(payload) };
}

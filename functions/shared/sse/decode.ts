import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { UpstreamSseEvent } from '../providers/types';

/**
 * Decodes an upstream `text/event-stream` body into events with `eventsource-parser` (the WHATWG
 * parsing rules: `\n`, `\r\n` and `\r` line ends, comment lines such as DeepSeek's `: keep-alive`
 * ignored, multi-line `data:` joined). Bytes are decoded with a streaming TextDecoder, so a UTF-8
 * character split across network chunks is reassembled, not replaced by U+FFFD.
 *
 * The events come in batches: every event one network read completed, in order, as one array. A fast
 * upstream packs many events into a read, and the router, the meter and the answer's writer then pay
 * their per-step cost (an async step, a gzip flush, a socket write) once per read instead of once per
 * event; a paced upstream's read is one event, so nothing waits for a batch to fill.
 *
 * @param body the upstream response body (bytes as they arrive).
 * @yields non-empty arrays of complete events, each as soon as the read that completed it has arrived.
 */
export async function* decodeSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamSseEvent[]> {
  let pending: UpstreamSseEvent[] = [];
  const parser = createParser({
    onEvent(e: EventSourceMessage) {
      pending.push({ event: e.event, data: e.data });
    },
  });
  const decoder = new TextDecoder('utf-8');
  const take = (): UpstreamSseEvent[] => {
    const batch = pending;
    pending = [];
    return batch;
  };
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (pending.length > 0) yield take();
  }
  const rest = decoder.decode();
  // A final event without its blank line is still delivered: some upstreams (Gemini) end the body
  // right after the last `data:` line.
  parser.feed(rest + '\n\n');
  if (pending.length > 0) yield take();
}

import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { UpstreamSseEvent } from '../providers/types';

/**
 * Decodes an upstream `text/event-stream` body into events with `eventsource-parser` (the WHATWG
 * parsing rules: `\n`, `\r\n` and `\r` line ends, comment lines such as DeepSeek's `: keep-alive`
 * ignored, multi-line `data:` joined). Bytes are decoded with a streaming TextDecoder, so a UTF-8
 * character split across network chunks is reassembled, not replaced by U+FFFD.
 *
 * @param body the upstream response body (bytes as they arrive).
 * @yields each complete event, as soon as its terminating blank line has arrived.
 */
export async function* decodeSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<UpstreamSseEvent> {
  const pending: UpstreamSseEvent[] = [];
  const parser = createParser({
    onEvent(e: EventSourceMessage) {
      pending.push({ event: e.event, data: e.data });
    },
  });
  const decoder = new TextDecoder('utf-8');
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (pending.length > 0) yield pending.shift() as UpstreamSseEvent;
  }
  const rest = decoder.decode();
  // A final event without its blank line is still delivered: some upstreams (Gemini) end the body
  // right after the last `data:` line.
  parser.feed(rest + '\n\n');
  while (pending.length > 0) yield pending.shift() as UpstreamSseEvent;
}

/**
 * Test helper: read a fetch Response body as SSE with a real parser (eventsource-parser), so tests
 * check what a conforming client sees rather than ad-hoc line splitting.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseRead {
  events: EventSourceMessage[];
  comments: string[];
  /** Set when reading the body failed (e.g. the socket was reset). */
  error?: unknown;
}

/** Read the whole body; a transport error is captured in `error`, not thrown. */
export async function readSse(res: Response): Promise<SseRead> {
  const out: SseRead = { events: [], comments: [] };
  const parser = createParser({
    onEvent: (e) => out.events.push(e),
    onComment: (c) => out.comments.push(c),
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
    }
  } catch (err) {
    out.error = err;
  }
  return out;
}

/**
 * Read events until `until` returns true, then report whether any further byte arrives within
 * `quietMs`. The reader is released (body cancelled) before returning.
 */
export async function readUntilThenListen(
  res: Response,
  until: (events: readonly EventSourceMessage[]) => boolean,
  quietMs: number,
): Promise<{ events: EventSourceMessage[]; bytesAfter: number }> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  while (!until(events)) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  let bytesAfter = 0;
  const timeout = new Promise<'quiet'>((resolve) => setTimeout(() => resolve('quiet'), quietMs));
  for (;;) {
    const next = await Promise.race([reader.read(), timeout]);
    if (next === 'quiet' || next.done) break;
    bytesAfter += next.value.length;
  }
  await reader.cancel().catch(() => undefined);
  return { events, bytesAfter };
}

/** Parse an event's data as JSON, or undefined when it is not JSON. */
export function jsonOf(e: EventSourceMessage): unknown {
  try {
    return JSON.parse(e.data) as unknown;
  } catch {
    return undefined;
  }
}

/** The raw text of the body received within `ms`; then the body is cancelled (the client leaves). */
export async function readRawFor(res: Response, ms: number): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const deadline = new Promise<'time'>((resolve) => setTimeout(() => resolve('time'), ms));
  let text = '';
  for (;;) {
    const next = await Promise.race([reader.read(), deadline]);
    if (next === 'time' || next.done) break;
    text += decoder.decode(next.value, { stream: true });
  }
  await reader.cancel().catch(() => undefined);
  return text;
}

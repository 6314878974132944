import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../functions/shared/errors/gateway-errors';
import type { UpstreamSseEvent } from '../../functions/shared/providers/types';
import { decodeSse } from '../../functions/shared/sse/decode';
import { DONE_FRAME, dataFrame, errorFrame } from '../../functions/shared/sse/encode';

/**
 * The SSE codec on its own: how upstream bytes become events (decode.ts), and our frames (encode.ts).
 * End to end these run under every stream; here each framing rule is pinned down by itself.
 */

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? bytes(p) : p;
}

async function decodeAll(body: AsyncIterable<Uint8Array>): Promise<UpstreamSseEvent[]> {
  const out: UpstreamSseEvent[] = [];
  for await (const batch of decodeSse(body)) {
    expect(batch.length).toBeGreaterThan(0);
    out.push(...batch);
  }
  return out;
}

/** A body the test feeds by hand, to see when each event comes out. */
function manualBody(): { body: AsyncIterable<Uint8Array>; push: (s: string) => void; end: () => void } {
  const queue: (Uint8Array | null)[] = [];
  let wake: (() => void) | undefined;
  const body = (async function* () {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((r) => (wake = r));
      const next = queue.shift();
      if (next === null || next === undefined) return;
      yield next;
    }
  })();
  const put = (v: Uint8Array | null): void => {
    queue.push(v);
    wake?.();
  };
  return { body, push: (s) => put(bytes(s)), end: () => put(null) };
}

describe('decodeSse: framing', () => {
  it('splits events on blank lines and keeps each data payload whole', async () => {
    const events = await decodeAll(chunks('data: {"a":1}\n\ndata: {"b":2}\n\n'));
    expect(events).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: undefined, data: '{"b":2}' },
    ]);
  });

  it('reassembles events cut at any byte, including inside a multi-byte UTF-8 character', async () => {
    const text = 'data: {"t":"héllo → 世界 🙂"}\n\nevent: ping\ndata: {}\n\n';
    const all = bytes(text);
    const oneByOne = all.reduce<Uint8Array[]>((acc, _b, i) => [...acc, all.slice(i, i + 1)], []);
    const events = await decodeAll(chunks(...oneByOne));
    expect(events).toEqual([
      { event: undefined, data: '{"t":"héllo → 世界 🙂"}' },
      { event: 'ping', data: '{}' },
    ]);
    expect(events[0]?.data).not.toContain('\uFFFD');
  });

  it('yields an event as soon as its blank line arrives, before the body ends', async () => {
    const { body, push, end } = manualBody();
    const it = decodeSse(body)[Symbol.asyncIterator]();
    push('data: first\n');
    const pending = it.next();
    const raced = await Promise.race([pending, new Promise((r) => setTimeout(() => r('waiting'), 30))]);
    expect(raced).toBe('waiting'); // no blank line yet: not an event
    push('\n');
    expect(await pending).toEqual({ done: false, value: [{ event: undefined, data: 'first' }] });
    end();
    expect((await it.next()).done).toBe(true);
  });

  it('gives the events one read completed as one batch, in order, and the next read its own', async () => {
    const batches: UpstreamSseEvent[][] = [];
    for await (const batch of decodeSse(chunks('data: 1\n\ndata: 2\n\ndata: 3', '\n\n', ': keep-alive\n\n', 'data: 4\n\n'))) batches.push(batch);
    // The keep-alive read completes no event: it makes no (empty) batch.
    expect(batches.map((b) => b.map((e) => e.data))).toEqual([['1', '2'], ['3'], ['4']]);
  });

  it('reads CRLF and lone CR line ends as LF', async () => {
    expect(await decodeAll(chunks('data: crlf\r\n\r\n', 'data: cr\r\r'))).toEqual([
      { event: undefined, data: 'crlf' },
      { event: undefined, data: 'cr' },
    ]);
    // Gemini's framing: `\r\n\r\n` between events, split across reads at the CR.
    expect(await decodeAll(chunks('data: {"x":1}\r', '\n\r\n', 'data: {"x":2}\r\n\r\n'))).toHaveLength(2);
  });

  it('joins multi-line data with line feeds and strips one space after the colon only', async () => {
    expect(await decodeAll(chunks('data: line one\ndata:line two\ndata:   three\n\n'))).toEqual([{ event: undefined, data: 'line one\nline two\n  three' }]);
  });

  it('ignores comments (DeepSeek keep-alives, our own) and fields it does not read', async () => {
    const body = chunks(': keep-alive\n\n', ':\n\n', 'id: 7\nretry: 100\n: note\ndata: {"ok":true}\n\n');
    expect(await decodeAll(body)).toEqual([{ event: undefined, data: '{"ok":true}' }]);
  });

  it('carries the event name (Anthropic) and passes [DONE] through as data for the adapter to read', async () => {
    const events = await decodeAll(chunks('event: message_stop\ndata: {"type":"message_stop"}\n\ndata: [DONE]\n\n'));
    expect(events).toEqual([
      { event: 'message_stop', data: '{"type":"message_stop"}' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('delivers a last event that ends without its blank line, and nothing for an empty or comment-only body', async () => {
    expect(await decodeAll(chunks('data: {"a":1}\n\ndata: {"last":true}'))).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: undefined, data: '{"last":true}' },
    ]);
    expect(await decodeAll(chunks())).toEqual([]);
    expect(await decodeAll(chunks(': keep-alive\n\n: keep-alive\n\n'))).toEqual([]);
  });
});

describe("encode: our frames are OpenAI's", () => {
  it('writes one `data:` line per chunk and the [DONE] marker, each ending in a blank line', () => {
    expect(dataFrame({ id: 'c', choices: [{ delta: { content: 'a\nb' } }] })).toBe('data: {"id":"c","choices":[{"delta":{"content":"a\\nb"}}]}\n\n');
    expect(DONE_FRAME).toBe('data: [DONE]\n\n');
  });

  it("writes a failure as a data event with OpenAI's top-level error object; unknown errors as a 500 server_error", () => {
    expect(JSON.parse(errorFrame(new NotFoundError('no such model', { param: 'model', code: 'model_not_found' })).slice('data: '.length))).toEqual({
      error: { message: 'no such model', type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    });
    const unknown = JSON.parse(errorFrame(new Error('secret internals')).slice('data: '.length)) as { error: { type: string; message: string } };
    expect(unknown.error.type).toBe('server_error');
    expect(unknown.error.message).not.toContain('secret internals');
  });

  it('round-trips through the decoder: what we encode is what an SSE client reads', async () => {
    const payloads = [{ a: 'x\r\ny' }, { emoji: '🙂', colon: ': not a comment' }];
    const wire = payloads.map(dataFrame).join('') + DONE_FRAME;
    const events = await decodeAll(chunks(wire));
    expect(events.map((e) => e.data)).toEqual([...payloads.map((p) => JSON.stringify(p)), '[DONE]']);
  });
});

/**
 * Writing replies on the wire: SSE framing, how replies are cut into deltas, abortable waits, the
 * body-level faults and the endless keep-alive.
 */
import type { ServerResponse } from 'node:http';
import type { Fault } from './types.js';

// Waits that end early when the exchange is cancelled (client gone, or simulator closing), so no
// timer outlives `close()`.
/** Resolve after `ms` milliseconds, or as soon as `signal` aborts. Never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  if (ms <= 0) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Resolve when `signal` aborts (a hang or a stall lasts until then). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

// Server-sent events as the simulator writes them. Providers differ in framing: OpenAI-style hosts
// send `data:` lines only, Anthropic adds an `event:` line per event (providers.md §2.6), Gemini
// separates events with `\r\n\r\n` (§3.4), DeepSeek interleaves `: keep-alive` comments (§4.5).
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

// How replies are cut into stream deltas. The pieces always concatenate back to the input exactly,
// which is what lets tests assert that joined deltas equal the buffered reply.
/** Split text into pieces of alternately one and two words (each piece keeps its trailing space). */
export function splitText(text: string): string[] {
  if (text === '') return [];
  const words = text.match(/\S+\s*/g);
  if (!words) return [text];
  const lead = text.slice(0, text.length - words.join('').length);
  const pieces: string[] = [];
  let i = 0;
  let take = 1;
  while (i < words.length) {
    pieces.push(words.slice(i, i + take).join(''));
    i += take;
    take = take === 1 ? 2 : 1;
  }
  pieces[0] = lead + pieces[0];
  return pieces;
}

/** Split a tool-call arguments string into 2 (short) or 3 fragments, the way providers stream them. */
export function splitArguments(json: string): string[] {
  if (json.length < 2) return [json];
  const parts = json.length < 12 ? 2 : 3;
  const size = Math.ceil(json.length / parts);
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

// Writes a planned reply (buffered JSON or an SSE stream) to the socket, applying the body-level
// faults: reset / stall / malformed event after K content events, and the mid-stream error event.
/** A buffered response. */
export interface JsonReply {
  kind: 'json';
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Bytes written before the JSON: DeepSeek's keep-alive blank lines (providers.md §4.5). */
  preamble?: string;
}

/** A streamed response (HTTP 200, `text/event-stream`). */
export interface SseReply {
  kind: 'sse';
  headers?: Record<string, string>;
  events: SseEvent[];
  eol: SseEol;
  /** The provider's own mid-stream error event, for `error-event-after-chunks`. */
  errorEvent: SseEvent;
}

export type Reply = JsonReply | SseReply;

/** Headers of every simulated event stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/** What `deliver` needs from the exchange it writes to. */
export interface ExchangeControl {
  /** Aborted when the client goes away or the simulator closes. */
  signal: AbortSignal;
  /** Current gap between events, ms (read per event so `setChunkDelay` applies mid-stream). */
  chunkDelayMs(): number;
  /** Server-initiated reset: destroys the socket without it counting as a client abort. */
  destroySocket(): void;
}

/** Faults `deliver` applies; the others act before a reply is planned. */
export type BodyFault = Extract<
  Fault,
  { kind: 'reset-after-chunks' | 'stall-after-chunks' | 'malformed' | 'error-event-after-chunks' }
>;

export function isBodyFault(fault: Fault | undefined): fault is BodyFault {
  return (
    fault !== undefined &&
    (fault.kind === 'reset-after-chunks' ||
      fault.kind === 'stall-after-chunks' ||
      fault.kind === 'malformed' ||
      fault.kind === 'error-event-after-chunks')
  );
}

/** Write `chunk`; resolves once it reaches the kernel, or at once when the exchange is over. */
export function write(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<void> {
  if (signal.aborted || res.destroyed) return Promise.resolve();
  // The write callback fires once the bytes reach the kernel, so a following reset cannot drop them.
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    res.write(chunk, () => done());
  });
}

async function deliverJson(res: ServerResponse, reply: JsonReply, fault: BodyFault | undefined, ctl: ExchangeControl): Promise<void> {
  const full = (reply.preamble ?? '') + JSON.stringify(reply.body);
  const cut = full.slice(0, Math.max(1, Math.floor(full.length / 2)));
  const text = fault?.kind === 'malformed' ? cut : full;
  res.writeHead(fault?.kind === 'malformed' ? 200 : reply.status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...reply.headers,
  });
  if (fault?.kind === 'reset-after-chunks' || fault?.kind === 'stall-after-chunks') {
    await write(res, cut, ctl.signal);
    if (fault.kind === 'reset-after-chunks') ctl.destroySocket();
    else await untilAborted(ctl.signal);
    return;
  }
  res.end(text);
}

/** Index of the event before which a K-chunk fault fires: the (K+1)-th content event, or the first
 * event after the last content event when the stream has K or fewer (so the fault always fires). */
function triggerIndex(events: readonly SseEvent[], k: number): number {
  let seen = 0;
  let lastContent = -1;
  for (let i = 0; i < events.length; i++) {
    if (!events[i]!.content) continue;
    if (seen === k) return i;
    seen++;
    lastContent = i;
  }
  return lastContent + 1;
}

/** How many content events go out whole before a body fault fires (-1: no body fault). `malformed`
 * keeps its historical default of one good chunk. */
function goodChunks(fault: BodyFault | undefined): number {
  if (fault === undefined) return -1;
  return Math.max(0, fault.kind === 'malformed' ? (fault.chunks ?? 1) : fault.chunks);
}

function malformedCopy(e: SseEvent | undefined): SseEvent {
  const data = e?.data ?? '{"choices":[{"delta":{"content":"x"}}]}';
  return { ...e, data: data.slice(0, Math.max(2, Math.floor(data.length / 2))) };
}

async function deliverSse(res: ServerResponse, reply: SseReply, fault: BodyFault | undefined, ctl: ExchangeControl): Promise<void> {
  res.writeHead(200, { ...SSE_HEADERS, ...reply.headers });
  res.flushHeaders();
  const { events } = reply;
  const k = goodChunks(fault);
  const trigger = k >= 0 ? triggerIndex(events, k) : -1;
  for (let i = 0; i <= events.length; i++) {
    if (i === trigger && fault) {
      switch (fault.kind) {
        case 'reset-after-chunks':
          ctl.destroySocket();
          return;
        case 'stall-after-chunks':
          await untilAborted(ctl.signal);
          return;
        case 'error-event-after-chunks':
          await sleep(ctl.chunkDelayMs(), ctl.signal);
          await write(res, serializeEvent(reply.errorEvent, reply.eol), ctl.signal);
          res.end();
          return;
        case 'malformed':
          await sleep(ctl.chunkDelayMs(), ctl.signal);
          await write(res, serializeEvent(malformedCopy(events[i]), reply.eol), ctl.signal);
          res.end();
          return;
      }
    }
    const e = events[i];
    if (!e) break;
    if (i > 0) await sleep(ctl.chunkDelayMs(), ctl.signal);
    if (ctl.signal.aborted) return;
    await write(res, serializeEvent(e, reply.eol), ctl.signal);
  }
  if (!ctl.signal.aborted) res.end();
}

/** Write `reply` to `res`, applying `fault` if it is a body-level fault. Resolves when done, reset,
 * or (for a stall) when the client leaves. Never rejects. */
export async function deliver(res: ServerResponse, reply: Reply, fault: Fault | undefined, ctl: ExchangeControl): Promise<void> {
  const bodyFault = isBodyFault(fault) ? fault : undefined;
  if (reply.kind === 'json') await deliverJson(res, reply, bodyFault, ctl);
  else await deliverSse(res, reply, bodyFault, ctl);
}

// The `keep-alive` fault. Under load DeepSeek holds the connection open before inference starts
// (providers.md §4.5): a non-stream response is preceded by empty lines (a JSON parser must trim
// them), a stream receives `: keep-alive` SSE comment lines; if inference has not started after
// 10 minutes the server closes the connection. The fault is that wait with no end: headers at once,
// then one beat every `everyMs`, never an answer, until the client gives up.
/** What a stream receives per beat: an SSE comment, which parsers ignore (WHATWG HTML, server-sent events). */
const SSE_BEAT = ': keep-alive\n\n';
/** What a buffered response receives per beat: an empty line, legal whitespace before a JSON text. */
const JSON_BEAT = '\n';

/** Send 200 headers, then a beat every `everyMs` (at least 1 ms) until the exchange is aborted. */
export async function keepAliveForever(res: ServerResponse, stream: boolean, everyMs: number, ctl: ExchangeControl): Promise<void> {
  res.writeHead(200, stream ? SSE_HEADERS : { 'content-type': 'application/json' });
  res.flushHeaders();
  const beat = stream ? SSE_BEAT : JSON_BEAT;
  while (!ctl.signal.aborted) {
    await write(res, beat, ctl.signal);
    await sleep(Math.max(1, everyMs), ctl.signal);
  }
}

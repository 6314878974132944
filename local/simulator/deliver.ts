/**
 * Writing replies on the wire: SSE framing, how replies are cut into deltas, abortable waits, the
 * body-level faults and the endless keep-alive.
 */
import type { ServerResponse } from 'node:http';
import type { Fault } from './types.js';

/** Resolve after `ms` milliseconds, or as soon as `signal` aborts (so no timer outlives `close()`). */
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
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * One server-sent event. Framing differs per provider: OpenAI-style hosts send `data:` lines only,
 * Anthropic adds `event:`, Gemini separates events with `\r\n\r\n`, DeepSeek adds `: keep-alive`
 * comments (providers.md §1.4, §2.6, §3.4, §4.5). `content` marks events carrying generated output
 * (counted by chunk faults).
 */
export interface SseEvent {
  event?: string;
  /** Serialised payload (JSON text, or `[DONE]`). */
  data?: string;
  comment?: string;
  content?: boolean;
}

function serializeEvent(e: SseEvent, eol: '\n' | '\r\n'): string {
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

/** Split text into pieces of alternately one and two words, each with its trailing space (they join back to `text`). */
export function splitText(text: string): string[] {
  if (text === '') return [];
  const words = text.match(/\S+\s*/g);
  if (!words) return [text];
  const pieces: string[] = [];
  for (let i = 0, take = 1; i < words.length; i += take, take = 3 - take) pieces.push(words.slice(i, i + take).join(''));
  pieces[0] = text.slice(0, text.length - words.join('').length) + pieces[0];
  return pieces;
}

/** Split a tool-call arguments string into 2 (short) or 3 fragments, the way providers stream them. */
export function splitArguments(json: string): string[] {
  if (json.length < 2) return [json];
  const size = Math.ceil(json.length / (json.length < 12 ? 2 : 3));
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

/** Several choices' lists in stream order: per step, the next item of each choice that has one. */
export function byStep<T>(lists: readonly T[][]): Array<Array<{ item: T; index: number; last: boolean }>> {
  return Array.from({ length: Math.max(0, ...lists.map((l) => l.length)) }, (_, step) =>
    lists.flatMap((list, index) => (step < list.length ? [{ item: list[step]!, index, last: step === list.length - 1 }] : [])),
  );
}

/** A buffered response; `preamble`: bytes before the JSON (DeepSeek's keep-alive blank lines). */
export interface JsonReply {
  kind: 'json';
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  preamble?: string;
}

/** A streamed response (HTTP 200); `errorEvent`: the provider's mid-stream error, for that fault. */
export interface SseReply {
  kind: 'sse';
  headers?: Record<string, string>;
  events: SseEvent[];
  eol: '\n' | '\r\n';
  errorEvent: SseEvent;
}

export type Reply = JsonReply | SseReply;

const SSE_HEADERS: Readonly<Record<string, string>> = {
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
  /** Called after each stream event has been written (counts `RecordedRequest.eventsSent`). */
  eventSent(): void;
}

type BodyFault = Extract<Fault, { kind: 'reset-after-chunks' | 'stall-after-chunks' | 'malformed' | 'error-event-after-chunks' }>;
const BODY_FAULTS = new Set(['reset-after-chunks', 'stall-after-chunks', 'malformed', 'error-event-after-chunks']);

/** Write `chunk`; resolves once it reaches the kernel (so a following reset cannot drop it), or at once when the exchange is over. */
function write(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<void> {
  if (signal.aborted || res.destroyed) return Promise.resolve();
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

/** Index of the event before which a K-chunk fault fires: the (K+1)-th content event, or the event after the last one. */
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

async function deliverSse(res: ServerResponse, reply: SseReply, fault: BodyFault | undefined, ctl: ExchangeControl): Promise<void> {
  res.writeHead(200, { ...SSE_HEADERS, ...reply.headers });
  res.flushHeaders();
  const { events } = reply;
  const send = async (e: SseEvent): Promise<void> => {
    await write(res, serializeEvent(e, reply.eol), ctl.signal);
    if (!ctl.signal.aborted && !res.destroyed) ctl.eventSent();
  };
  // `malformed` sends one good chunk unless told otherwise.
  const trigger = fault === undefined ? -1 : triggerIndex(events, Math.max(0, fault.kind === 'malformed' ? (fault.chunks ?? 1) : fault.chunks));
  for (let i = 0; i <= events.length; i++) {
    if (i === trigger && fault) {
      if (fault.kind === 'reset-after-chunks') return ctl.destroySocket();
      if (fault.kind === 'stall-after-chunks') return untilAborted(ctl.signal);
      await sleep(ctl.chunkDelayMs(), ctl.signal);
      if (fault.kind === 'error-event-after-chunks') await send(reply.errorEvent);
      else {
        const e = events[i];
        const data = e?.data ?? '{"choices":[{"delta":{"content":"x"}}]}';
        await send({ ...e, data: data.slice(0, Math.max(2, Math.floor(data.length / 2))) });
      }
      res.end();
      return;
    }
    const e = events[i];
    if (!e) break;
    if (i > 0) await sleep(ctl.chunkDelayMs(), ctl.signal);
    if (ctl.signal.aborted) return;
    await send(e);
  }
  if (!ctl.signal.aborted) res.end();
}

/** Write `reply`, applying `fault` if it is a body-level one. Resolves when done, reset, or (a stall) when the client leaves. */
export async function deliver(res: ServerResponse, reply: Reply, fault: Fault | undefined, ctl: ExchangeControl): Promise<void> {
  const bodyFault = fault !== undefined && BODY_FAULTS.has(fault.kind) ? (fault as BodyFault) : undefined;
  if (reply.kind === 'json') await deliverJson(res, reply, bodyFault, ctl);
  else await deliverSse(res, reply, bodyFault, ctl);
}

/**
 * The `keep-alive` fault: DeepSeek holds a busy connection open before inference starts, with blank
 * lines before a JSON body or `: keep-alive` SSE comments; here without end: 200 headers, then a beat
 * every `everyMs` (at least 1 ms) until the client leaves.
 */
export async function keepAliveForever(res: ServerResponse, stream: boolean, everyMs: number, ctl: ExchangeControl): Promise<void> {
  res.writeHead(200, stream ? SSE_HEADERS : { 'content-type': 'application/json' });
  res.flushHeaders();
  while (!ctl.signal.aborted) {
    await write(res, stream ? ': keep-alive\n\n' : '\n', ctl.signal);
    await sleep(Math.max(1, everyMs), ctl.signal);
  }
}

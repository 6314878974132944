/**
 * Writes a planned reply (buffered JSON or an SSE stream) to the socket, applying the body-level
 * faults: reset / stall / malformed event after K content events, and the mid-stream error event.
 */
import type { ServerResponse } from 'node:http';
import { sleep, untilAborted } from './abortable-wait.js';
import { serializeEvent, type SseEol, type SseEvent } from './sse.js';
import type { Fault } from './types.js';

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

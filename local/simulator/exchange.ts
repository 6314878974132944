/**
 * The life of one provider request: record it, apply an injected fault, check the key, plan and write
 * the reply in the provider's dialect. Faults come first (an upstream that hangs does so before it looks
 * at the key), then auth, then validation.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { handleAnthropic } from './anthropic.js';
import { deliver, type ExchangeControl, keepAliveForever, type Reply, sleep, untilAborted } from './deliver.js';
import { contextLengthProblem, overloadStatus, renderProblem } from './errors.js';
import { handleGemini } from './gemini.js';
import { isObject } from './json-narrowing.js';
import { handleOpenAI } from './openai.js';
import type { Route } from './routes.js';
import type { Fault, FaultMatch, Problem, RecordedRequest, SimCall } from './types.js';
import type { ProviderName } from '../../functions/shared/providers/manifest.js';

/** Simulator state an exchange reads and updates. */
export interface ExchangeContext {
  requests: RecordedRequest[];
  faults: FaultRegistry;
  replyWords: number;
  chunkDelayMs(): number;
  nextSeq(): number;
  /** Register a cancel hook run by `close()`; returns the unregister function. */
  onShutdown(cancel: () => void): () => void;
  /** Strict keys: when set, only these upstream keys are accepted. */
  acceptedKeys: ReadonlySet<string> | undefined;
}

/** Parsed request body: JSON value, or the raw text when it is not JSON. */
export interface ReadBody {
  json: unknown;
  raw: string;
  invalid: boolean;
}

const HANDLERS = { openai: handleOpenAI, anthropic: handleAnthropic, gemini: handleGemini } as const;

/** The key sentinel every simulated provider rejects. */
const BAD_KEY = 'bad-key';

/**
 * The problem with the call's key, read where its provider reads it: `Authorization: Bearer`; Anthropic
 * also `x-api-key` (the official SDK sends Bearer) and needs `anthropic-version`; Gemini `x-goog-api-key`
 * or `?key=`. Any non-empty key but `bad-key` works, or with strict keys only the listed ones.
 */
function checkAuth(call: SimCall, accepted: ReadonlySet<string> | undefined): Problem | undefined {
  const { headers, route } = call;
  const bearer = /^Bearer\s+(.+)$/i.exec(headers['authorization'] ?? '')?.[1]?.trim() || undefined;
  const key =
    route.wire === 'anthropic'
      ? headers['x-api-key'] || bearer
      : route.wire === 'gemini'
        ? headers['x-goog-api-key'] || call.url.searchParams.get('key') || undefined
        : bearer;
  if (!key) return { kind: 'auth', reason: 'missing' };
  if (key === BAD_KEY || (accepted !== undefined && !accepted.has(key))) return { kind: 'auth', reason: 'invalid', key };
  if (route.wire === 'anthropic' && !headers['anthropic-version']) return { kind: 'bad-request', message: 'anthropic-version: header is required' };
  return undefined;
}

/** The fault, as a problem when it answers before any reply is planned. */
function faultProblem(fault: Fault | undefined, call: SimCall, stream: boolean): Problem | undefined {
  if (fault?.kind === 'status') return { ...fault, kind: 'status' };
  if (fault?.kind === 'api-key-invalid') return { kind: 'auth', reason: 'invalid' };
  if (fault?.kind === 'context-length') return contextLengthProblem(fault, call.provider);
  // A buffered reply cannot carry a mid-stream error event: it fails up front as an overload.
  if (fault?.kind === 'error-event-after-chunks' && !stream) return { kind: 'status', status: overloadStatus(call.route) };
  return undefined;
}

/** Serve one provider request whose body has been read. Resolves when the exchange is over. */
export async function runExchange(ctx: ExchangeContext, route: Route, req: IncomingMessage, res: ServerResponse, url: URL, body: ReadBody): Promise<void> {
  const seq = ctx.nextSeq();
  const headers = normalizeHeaders(req.headers);
  const json = body.json;
  const model = route.pathModel ?? (isObject(json) && typeof json['model'] === 'string' ? json['model'] : undefined);
  const stream = route.op === 'gemini-stream' || (isObject(json) && json['stream'] === true);
  const record: RecordedRequest = {
    provider: route.provider,
    method: req.method ?? 'GET',
    path: req.url ?? url.pathname,
    model,
    stream,
    headers,
    body: body.invalid ? body.raw : json,
    receivedAt: Date.now(),
    aborted: false,
    completed: false,
    eventsSent: 0,
  };
  ctx.requests.push(record);

  const controller = new AbortController();
  let unregister = (): void => undefined;
  const lifecycle = trackLifecycle(req, res, record, () => {
    controller.abort();
    unregister();
  });
  unregister = ctx.onShutdown(() => {
    lifecycle.markServerClosing();
    controller.abort();
  });
  if (req.socket.destroyed) {
    // The client left while its body was being read: the close event has already fired.
    record.aborted = true;
    controller.abort();
    unregister();
    return;
  }
  // A paced fault sets this request's own rhythm and length; it is taken before anything is written.
  const fault = ctx.faults.take(route.provider, model);
  const paced = fault?.kind === 'paced' ? fault : undefined;
  const ctl: ExchangeControl = {
    signal: controller.signal,
    chunkDelayMs: paced === undefined ? ctx.chunkDelayMs : () => paced.everyMs,
    eventSent: () => void record.eventsSent++,
    destroySocket: () => {
      lifecycle.markServerClosing();
      res.socket?.destroy();
      res.destroy();
    },
  };
  const requestId = `req_sim_${seq.toString().padStart(6, '0')}`;
  const replyWords = paced?.words ?? ctx.replyWords;
  const call: SimCall = {
    provider: route.provider,
    route,
    method: record.method,
    url,
    headers,
    body: json,
    seq,
    requestId,
    replyWords,
    created: Math.floor(Date.now() / 1000),
  };

  if (fault) record.fault = describeFault(fault);
  if (await faultBeforeHeaders(fault, res, stream, call, ctl)) return;

  const problem =
    faultProblem(fault, call, stream) ??
    checkAuth(call, ctx.acceptedKeys) ??
    (body.invalid ? { kind: 'bad-request', message: 'We could not parse the JSON body of your request.' } : undefined);
  const result: Reply | Problem = problem ?? HANDLERS[route.wire](call);
  if (result.kind === 'json' || result.kind === 'sse') await deliver(res, result, fault, ctl);
  else await deliver(res, renderProblem(route, result, requestId), undefined, ctl);
}

/**
 * Plays a fault that acts before any headers: a reset, a hang, an endless keep-alive (each ends the
 * exchange), or a delay (slow headers; a paced buffered answer waits out its generation).
 * @returns true when the exchange is over.
 */
async function faultBeforeHeaders(fault: Fault | undefined, res: ServerResponse, stream: boolean, call: SimCall, ctl: ExchangeControl): Promise<boolean> {
  switch (fault?.kind) {
    case 'reset-before-headers':
      ctl.destroySocket();
      return true;
    case 'hang':
      await untilAborted(ctl.signal);
      return true;
    case 'keep-alive':
      await keepAliveForever(res, stream, fault.everyMs, ctl);
      return true;
    case 'slow-headers':
      await sleep(fault.delayMs, ctl.signal);
      return ctl.signal.aborted;
    case 'paced':
      // A buffered answer comes when the generation would have ended: one beat per 1-2 word piece.
      if (!stream) await sleep(fault.everyMs * Math.ceil((call.replyWords * 2) / 3), ctl.signal);
      return ctl.signal.aborted;
  }
  return false;
}

/** Ordered faults with use counts, consulted once per provider request. */
export class FaultRegistry {
  private entries: Array<{ match: FaultMatch; fault: Fault; remaining: number }> = [];

  add(match: FaultMatch, fault: Fault, times: number = Infinity): void {
    if (times > 0) this.entries.push({ match: { ...match }, fault: { ...fault }, remaining: times });
  }

  clear(): void {
    this.entries = [];
  }

  /** The fault for this request (the earliest-registered match), consuming one use, or undefined. */
  take(provider: ProviderName, model: string | undefined): Fault | undefined {
    const entry = this.entries.find((e) => (e.match.provider ?? provider) === provider && (e.match.model === undefined || e.match.model === model));
    if (!entry) return undefined;
    if (--entry.remaining <= 0) this.entries = this.entries.filter((e) => e !== entry);
    return entry.fault;
  }
}

/** Short label recorded on the request, e.g. `status:529`, `reset-after-chunks:2`, `paced:50x300`. */
function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'status':
      return `status:${fault.status}`;
    case 'slow-headers':
      return `slow-headers:${fault.delayMs}`;
    case 'reset-after-chunks':
    case 'stall-after-chunks':
    case 'error-event-after-chunks':
    case 'malformed':
      return fault.chunks === undefined ? fault.kind : `${fault.kind}:${fault.chunks}`;
    case 'keep-alive':
      return `${fault.kind}:${fault.everyMs}`;
    case 'paced':
      return `${fault.kind}:${fault.everyMs}${fault.words === undefined ? '' : `x${fault.words}`}`;
    default:
      return fault.kind;
  }
}

/** Lower-case header names; repeated headers joined with `, `. */
function normalizeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * Keep `record.aborted` / `record.completed` in step with the exchange (tests assert that a client gave
 * up on a hung upstream), and call `onEnd` once when the response closes for any reason.
 */
function trackLifecycle(req: IncomingMessage, res: ServerResponse, record: RecordedRequest, onEnd: () => void): { markServerClosing(): void } {
  let serverClosing = false;
  const clientGone = (): void => {
    if (!serverClosing && !res.writableFinished) record.aborted = true;
  };
  req.on('aborted', clientGone);
  res.on('finish', () => {
    record.completed = true;
  });
  res.on('close', () => {
    clientGone();
    onEnd();
  });
  // The simulator itself is about to cut the connection (reset fault, shutdown): not a client abort.
  return { markServerClosing: () => void (serverClosing = true) };
}

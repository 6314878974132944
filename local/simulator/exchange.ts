/**
 * The life of one provider request, with the fault registry and the request log it updates.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { handleAnthropic } from './anthropic.js';
import { checkAuth } from './auth.js';
import { deliver, type ExchangeControl, keepAliveForever, type Reply, sleep, untilAborted } from './deliver.js';
import { handleGemini } from './gemini.js';
import { isObject } from './json-narrowing.js';
import { handleOpenAIStyle } from './openai-compatible.js';
import { contextLengthProblem, overloadStatus, renderProblem } from './provider-errors.js';
import type { Route } from './routes.js';
import type { Fault, FaultMatch, Problem, RecordedRequest, SimCall, SimProvider } from './types.js';

// The life of one provider request: record it, apply an injected fault, check the key, plan and
// write the reply in the provider's format. Order matters: faults come first (an upstream that hangs
// does so before it looks at the key), then auth, then validation.
/** Simulator state an exchange reads and updates. */
export interface ExchangeContext {
  requests: RecordedRequest[];
  faults: FaultRegistry;
  replyWords: number;
  chunkDelayMs(): number;
  nextSeq(): number;
  /** Register a cancel hook run by `close()`; returns the unregister function. */
  onShutdown(cancel: () => void): () => void;
  /** Strict keys: when set, only these upstream keys are accepted (auth.ts). */
  acceptedKeys(): ReadonlySet<string> | undefined;
}

/** Parsed request body: JSON value, or the raw text when it is not JSON. */
export interface ReadBody {
  json: unknown;
  raw: string;
  invalid: boolean;
}

function isReply(result: Reply | Problem): result is Reply {
  return result.kind === 'json' || result.kind === 'sse';
}

function dispatch(call: SimCall): Reply | Problem {
  switch (call.route.wire) {
    case 'anthropic':
      return handleAnthropic(call);
    case 'gemini':
      return handleGemini(call);
    default:
      return handleOpenAIStyle(call);
  }
}

/** The fault, translated to a problem when it is one that answers before any reply is planned. */
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
  const record = recordOf(route, req, url, body, headers, model, stream);
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
    destroySocket: () => {
      lifecycle.markServerClosing();
      res.socket?.destroy();
      res.destroy();
    },
  };

  const call: SimCall = {
    provider: route.provider,
    route,
    method: record.method,
    url,
    headers,
    body: json,
    bodyInvalid: body.invalid,
    seq,
    requestId: `req_sim_${seq.toString().padStart(6, '0')}`,
    replyWords: paced?.words ?? ctx.replyWords,
    created: Math.floor(Date.now() / 1000),
  };

  if (fault) record.fault = describeFault(fault);
  if (await faultBeforeHeaders(fault, res, stream, call, ctl)) return;

  const problem =
    faultProblem(fault, call, stream) ??
    checkAuth(call, ctx.acceptedKeys()) ??
    (body.invalid ? { kind: 'bad-request', message: 'We could not parse the JSON body of your request.' } : undefined);
  const result = problem ?? dispatch(call);
  if (isReply(result)) await deliver(res, result, fault, ctl);
  else await deliver(res, renderProblem(route, result, call.requestId), undefined, ctl);
}

/** What the simulator records of a request (`sim.requests`), before its outcome is known. */
function recordOf(route: Route, req: IncomingMessage, url: URL, body: ReadBody, headers: RecordedRequest['headers'], model: string | undefined, stream: boolean): RecordedRequest {
  return {
    provider: route.provider,
    method: req.method ?? 'GET',
    path: req.url ?? url.pathname,
    model,
    stream,
    headers,
    body: body.invalid ? body.raw : body.json,
    receivedAt: Date.now(),
    aborted: false,
    completed: false,
  };
}

/**
 * Plays the part of a fault that acts before any headers: a reset, a hang, an endless keep-alive
 * (each ends the exchange), or a delay (slow headers; a paced buffered answer waits out its generation).
 * @returns true when the exchange is over (the fault ended it, or the client left while it waited).
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
      if (ctl.signal.aborted) return true;
      break;
    case 'paced':
      // A buffered answer comes when the generation would have ended: one beat per 1-2 word piece.
      if (!stream) await sleep(fault.everyMs * Math.ceil((call.replyWords * 2) / 3), ctl.signal);
      if (ctl.signal.aborted) return true;
      break;
  }
  return false;
}

// Injected faults: a registry consulted once per provider request.
interface Entry {
  match: FaultMatch;
  fault: Fault;
  remaining: number;
}

/** Ordered faults with use counts. The earliest-registered match with uses left applies. */
export class FaultRegistry {
  private entries: Entry[] = [];

  /** Register `fault` for requests matching `match`, for `times` requests (default Infinity). */
  add(match: FaultMatch, fault: Fault, times: number = Infinity): void {
    if (!(times > 0)) return;
    this.entries.push({ match: { ...match }, fault: { ...fault }, remaining: times });
  }

  clear(): void {
    this.entries = [];
  }

  /** The fault for this request, consuming one use, or undefined. */
  take(provider: SimProvider, model: string | undefined): Fault | undefined {
    const entry = this.entries.find(
      (e) => (e.match.provider === undefined || e.match.provider === provider) && (e.match.model === undefined || e.match.model === model),
    );
    if (!entry) return undefined;
    entry.remaining--;
    if (entry.remaining <= 0) this.entries = this.entries.filter((e) => e !== entry);
    return entry.fault;
  }
}

/** Short label recorded on the request, e.g. `status:529`, `reset-after-chunks:2`. */
export function describeFault(fault: Fault): string {
  switch (fault.kind) {
    case 'status':
      return `status:${fault.status}`;
    case 'slow-headers':
      return `slow-headers:${fault.delayMs}`;
    case 'reset-after-chunks':
    case 'stall-after-chunks':
    case 'error-event-after-chunks':
      return `${fault.kind}:${fault.chunks}`;
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

// The request log: one {@link RecordedRequest} per provider request, updated as the exchange ends so
// tests can assert that an upstream request was aborted by its client (e.g. the gateway giving up
// on a hung upstream) or completed.
/** Lower-case header names; repeated headers joined with `, `. */
export function normalizeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Exchange-end bookkeeping for one recorded request. */
export interface Lifecycle {
  /** The simulator itself is about to cut the connection (reset fault, shutdown): not a client abort. */
  markServerClosing(): void;
}

/**
 * Keep `record.aborted` / `record.completed` in step with the exchange, and call `onEnd` once when
 * the response closes for any reason (so waits and timers of the exchange can be cancelled).
 */
export function trackLifecycle(req: IncomingMessage, res: ServerResponse, record: RecordedRequest, onEnd: () => void): Lifecycle {
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
  return {
    markServerClosing: () => {
      serverClosing = true;
    },
  };
}

/**
 * The life of one provider request: record it, apply an injected fault, check the key, plan and
 * write the reply in the provider's format. Order matters: faults come first (an upstream that hangs
 * does so before it looks at the key), then auth, then validation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sleep, untilAborted } from './abortable-wait.js';
import { handleAnthropic } from './anthropic.js';
import { checkAuth } from './auth.js';
import type { SimCall } from './call.js';
import { contextLengthProblem } from './context-length.js';
import { deliver, type ExchangeControl, type Reply } from './deliver.js';
import { describeFault, type FaultRegistry } from './faults.js';
import { handleGemini } from './gemini.js';
import { isObject } from './json-narrowing.js';
import { keepAliveForever } from './keep-alive.js';
import { handleOpenAIStyle } from './openai-compatible.js';
import type { Problem } from './problem.js';
import { overloadStatus, renderProblem } from './provider-errors.js';
import { normalizeHeaders, trackLifecycle } from './request-log.js';
import type { Route } from './routes.js';
import type { Fault, RecordedRequest } from './types.js';

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

import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChunkParts, CompletionParts } from '../openai/chat-response';
import { GatewayError, UpstreamUnavailableError } from '../openai/errors';
import { decodeSse } from '../sse/decode';
import { UpstreamStreamError, type AdapterContext, type UpstreamFailure, type UpstreamHttpRequest } from '../providers/types';
import { transportFailure } from '../providers/upstream-failure';
import type { Attempt } from './attempt-plan';
import { AttemptAbortedError, bodyBytes, readText, startAttempt, type AttemptTimeouts, type LiveAttempt } from './upstream-call';

/**
 * Sends a chat request down an attempt plan until one target answers. Every failure before the
 * answer (for streams: before the first chunk) moves on to the next target; a failure the client
 * caused (an upstream 400 about the request) is returned at once. The router never names a provider.
 */

/** What happened to one attempt (for headers, logs and the ledger's fallback path). */
export interface AttemptRecord {
  publicModel: string;
  provider: string;
  upstreamModel: string;
  /** `ok`, or the failure kind. */
  outcome: 'ok' | UpstreamFailure['kind'];
  status: number;
  ms: number;
}

export interface RoutedBase {
  /** The attempt that answered. */
  attempt: Attempt;
  /** Every attempt, in order, the answering one last. */
  attempts: AttemptRecord[];
}

export interface BufferedOutcome extends RoutedBase {
  parts: CompletionParts;
}

/**
 * A stream whose first chunk has arrived. `rest` yields the following parts; it throws
 * {@link UpstreamStreamError} if the upstream fails later. `close` stops the upstream request.
 */
export interface StreamOutcome extends RoutedBase {
  first: ChunkParts[];
  rest: AsyncGenerator<ChunkParts[]>;
  close(): void;
}

/** Per-attempt limits (ms). Buffered calls wait for the whole generation before headers. */
export const DEFAULT_TIMEOUTS: { buffered: AttemptTimeouts; stream: AttemptTimeouts } = {
  buffered: { headersMs: 240_000, idleMs: 60_000 },
  stream: { headersMs: 60_000, idleMs: 60_000 },
};

/** Options of one routed call. */
export interface RouteOptions {
  signal: AbortSignal;
  timeouts?: AttemptTimeouts;
}

/**
 * A buffered call (chat or embeddings): the first attempt whose response parses wins.
 * `build` makes the upstream request (return undefined to skip a target that cannot serve it);
 * `parse` reads a 2xx body and throws UpstreamStreamError when it is unusable.
 * @throws GatewayError — the client's own error from an upstream 400, or 502/503/504 when every
 *   attempt failed (see {@link exhausted}).
 */
export async function routeBufferedCall<T>(
  plan: readonly Attempt[],
  opts: RouteOptions,
  build: (attempt: Attempt, ctx: AdapterContext) => UpstreamHttpRequest | undefined,
  parse: (text: string, attempt: Attempt, ctx: AdapterContext) => T,
): Promise<RoutedBase & { result: T }> {
  const records: AttemptRecord[] = [];
  for (const attempt of plan) {
    const started = Date.now();
    const ctx: AdapterContext = { target: attempt.target, endpoint: attempt.endpoint };
    const upstreamReq = build(attempt, ctx);
    if (upstreamReq === undefined) continue;
    let live: LiveAttempt | undefined;
    try {
      live = await startAttempt(upstreamReq, opts.signal, opts.timeouts ?? DEFAULT_TIMEOUTS.buffered);
      const text = await readText(live);
      if (!live.response.ok) throw new UpstreamStreamError(attempt.adapter.classifyError(live.response.status, text, live.response.headers));
      const result = parse(text, attempt, ctx);
      records.push(record(attempt, 'ok', live.response.status, started));
      return { attempt, attempts: records, result };
    } catch (err) {
      const failure = toFailure(err);
      records.push(record(attempt, failure.kind, failure.status, started));
      if (failure.clientError) throw failure.clientError;
      if (opts.signal.aborted) throw clientGone();
    } finally {
      live?.close();
    }
  }
  throw exhausted(records);
}

/** Buffered chat over {@link routeBufferedCall}. */
export async function routeBuffered(req: ChatCompletionRequest, plan: readonly Attempt[], opts: RouteOptions): Promise<BufferedOutcome> {
  const out = await routeBufferedCall(
    plan,
    opts,
    (a, ctx) => a.adapter.buildChatRequest(req, ctx, false),
    (text, a, ctx) => a.adapter.parseChatResponse(text, ctx),
  );
  return { attempt: out.attempt, attempts: out.attempts, parts: out.result };
}

/**
 * Streamed chat: an attempt counts once it has produced its first chunk; until then any failure —
 * an error status, a reset, a stall, a malformed or error event — moves on to the next target, so
 * the client's 200 is committed only for a stream that has started (peers.md B3).
 */
export async function routeStream(req: ChatCompletionRequest, plan: readonly Attempt[], opts: RouteOptions): Promise<StreamOutcome> {
  const records: AttemptRecord[] = [];
  for (const attempt of plan) {
    const started = Date.now();
    const ctx: AdapterContext = { target: attempt.target, endpoint: attempt.endpoint };
    let live: LiveAttempt | undefined;
    try {
      live = await startAttempt(attempt.adapter.buildChatRequest(req, ctx, true), opts.signal, opts.timeouts ?? DEFAULT_TIMEOUTS.stream);
      if (!live.response.ok) {
        const text = await readText(live);
        throw new UpstreamStreamError(attempt.adapter.classifyError(live.response.status, text, live.response.headers));
      }
      const rest = streamParts(live, attempt, ctx);
      const first = await rest.next();
      if (first.done === true) throw new UpstreamStreamError({ kind: 'server', retryable: true, status: 200, message: 'upstream stream was empty' });
      records.push(record(attempt, 'ok', live.response.status, started));
      const owned = live;
      return { attempt, attempts: records, first: first.value, rest, close: () => owned.close() };
    } catch (err) {
      live?.close();
      const failure = toFailure(err);
      records.push(record(attempt, failure.kind, failure.status, started));
      if (failure.clientError) throw failure.clientError;
      if (opts.signal.aborted) throw clientGone();
    }
  }
  throw exhausted(records);
}

/** Decodes, transforms and yields non-empty batches of parts; errors are normalised. */
async function* streamParts(live: LiveAttempt, attempt: Attempt, ctx: AdapterContext): AsyncGenerator<ChunkParts[]> {
  const transform = attempt.adapter.createStreamTransform(ctx);
  try {
    for await (const event of decodeSse(bodyBytes(live))) {
      const parts = transform.push(event);
      if (parts.length > 0) yield parts;
    }
    const tail = transform.end();
    if (tail.length > 0) yield tail;
  } catch (err) {
    throw err instanceof UpstreamStreamError ? err : new UpstreamStreamError(toFailure(err));
  } finally {
    live.close();
  }
}

/** Normalises anything an attempt threw into a verdict. */
export function toFailure(err: unknown): UpstreamFailure {
  if (err instanceof UpstreamStreamError) return err.failure;
  if (err instanceof AttemptAbortedError) {
    return transportFailure(err.cause ?? err, err.reason === 'headers-timeout' || err.reason === 'idle-timeout');
  }
  if (err instanceof GatewayError) return { kind: 'client', retryable: false, status: err.status, message: err.message, clientError: err };
  return transportFailure(err, false);
}

function record(attempt: Attempt, outcome: AttemptRecord['outcome'], status: number, started: number): AttemptRecord {
  return {
    publicModel: attempt.publicModel,
    provider: attempt.target.provider,
    upstreamModel: attempt.target.upstreamModel,
    outcome,
    status,
    ms: Date.now() - started,
  };
}

/** The client went away: nothing more to try, and nobody to answer. */
function clientGone(): GatewayError {
  return new GatewayError(499, 'invalid_request_error', 'The client closed the request.', { code: 'client_closed_request' });
}

/**
 * Every attempt failed: 504 when they all timed out, 503 when upstreams were overloaded, rate limited
 * or unreachable, 502 when an upstream answered badly.
 */
export function exhausted(records: readonly AttemptRecord[]): GatewayError {
  const kinds = new Set(records.map((r) => r.outcome));
  const tried = records.map((r) => r.publicModel).filter((m, i, a) => a.indexOf(m) === i).join(', ');
  if (kinds.size > 0 && [...kinds].every((k) => k === 'timeout')) {
    return new UpstreamUnavailableError(504, `Every upstream for ${tried} timed out. Please retry.`);
  }
  if ([...kinds].every((k) => k === 'rate-limit' || k === 'overloaded' || k === 'connection' || k === 'timeout')) {
    return new UpstreamUnavailableError(503, `Every upstream for ${tried} is unavailable or overloaded right now. Please retry.`);
  }
  return new UpstreamUnavailableError(502, `No upstream for ${tried} returned a usable answer. Please retry.`);
}

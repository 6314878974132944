import http from 'node:http';
import https from 'node:https';
import type { UpstreamHttpRequest } from '../providers/types';

/**
 * One upstream HTTP attempt over node:http(s), with its own timers and abort, so no socket or upstream
 * generation is left running once the router gives up on it.
 *
 * Why not global fetch: Node 20's fetch offers no connect timeout without bundling undici's Agent,
 * and adds per-request overhead (WHATWG streams) on the hot path. Keep-alive agents (one per
 * container) reuse upstream connections across requests.
 */

/** Time limits of one attempt (ms). */
export interface AttemptTimeouts {
  /** TCP + TLS connection establishment. */
  connectMs: number;
  /** From sending the request to the response headers (buffered calls: the whole generation). */
  headersMs: number;
  /**
   * Longest silence between two body chunks once headers arrived. A stream passes the larger of its
   * idle and first-token limits here and narrows it with {@link LiveAttempt.setIdle} once output flows.
   */
  idleMs: number;
  /**
   * The attempt's whole life, from sending the request to the last body byte, never reset by bytes
   * (ms; aborts with `deadline`). The request's remaining budget: an upstream that keeps its
   * connection alive with blank lines (DeepSeek, up to 10 min) must not outlive it. Absent = no cap.
   */
  totalMs?: number;
  /**
   * From sending the request to the first token (ms; aborts with `first-token-timeout`), never reset
   * by bytes that carry no token (keep-alive comments, a role preamble); stopped by
   * {@link LiveAttempt.markFirstToken}. Absent = no such limit (embeddings).
   */
  firstTokenMs?: number;
}

/** Why an attempt was aborted. */
export type AbortReason = 'client' | 'connect-timeout' | 'headers-timeout' | 'idle-timeout' | 'first-token-timeout' | 'deadline' | 'abandoned';

/** Thrown when an attempt fails without an HTTP answer: network error, timeout, abort. */
export class AttemptAbortedError extends Error {
  constructor(
    readonly reason: AbortReason | 'network',
    cause?: unknown,
  ) {
    super(`upstream attempt ${reason}`, cause === undefined ? undefined : { cause });
    this.name = 'AttemptAbortedError';
  }

  /** True when our own timer ended the attempt. */
  get timedOut(): boolean {
    return this.reason.endsWith('timeout') || this.reason === 'deadline';
  }
}

/** A started attempt whose headers have arrived. */
export interface LiveAttempt {
  status: number;
  ok: boolean;
  /** Response headers (built on demand; only error paths read them). */
  headers(): Headers;
  /** The body's bytes; a cut body throws AttemptAbortedError. Feeds the idle timer. */
  body: AsyncIterable<Uint8Array>;
  /** Aborts the attempt now, with a reason (no-op once it has finished). */
  abort(reason: AbortReason): void;
  /** Sets the idle limit between body chunks (ms) from now on, restarting the idle timer. */
  setIdle(ms: number): void;
  /** The first token has arrived: stops the first-token timer. */
  markFirstToken(): void;
  /** Why we aborted the attempt, if we did (a timer, the client, the deadline). */
  abortedBy(): AbortReason | undefined;
  /** Releases timers; aborts the request if its body has not been read to the end. */
  close(): void;
}

const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 10_000, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

/**
 * Sends `req` and resolves once the response headers have arrived.
 * @param clientSignal aborts the attempt when the client is gone.
 * @throws AttemptAbortedError on connection failure, a connect/headers timeout, or a client abort.
 */
export function startAttempt(req: UpstreamHttpRequest, clientSignal: AbortSignal, timeouts: AttemptTimeouts): Promise<LiveAttempt> {
  return new Promise<LiveAttempt>((resolve, reject) => {
    // Before any request or timer exists: nothing to clean up.
    if (clientSignal.aborted) {
      reject(new AttemptAbortedError('client'));
      return;
    }
    const isHttps = new URL(req.url).protocol === 'https:';
    const body = Buffer.from(req.body, 'utf8');
    let reason: AbortReason | undefined;
    let idleMs = timeouts.idleMs;
    let settled = false;
    let finished = false;

    const outgoing = openRequest(req, body.length);
    const timers = startAttemptTimers(timeouts, (why) => abort(why));
    const cleanup = (): void => {
      timers.clear();
      clientSignal.removeEventListener('abort', onClientAbort);
    };
    function abort(why: AbortReason): void {
      if (finished || reason !== undefined) return;
      reason = why;
      cleanup();
      outgoing.destroy(new AttemptAbortedError(why));
    }
    const onClientAbort = (): void => abort('client');
    clientSignal.addEventListener('abort', onClientAbort, { once: true });

    // Connect timer only for a new socket; a reused keep-alive socket goes straight to the headers timer.
    outgoing.once('socket', (socket) => {
      const connecting = (socket as { connecting?: boolean }).connecting === true;
      if (!connecting) return timers.arm(timeouts.headersMs, 'headers-timeout');
      timers.arm(timeouts.connectMs, 'connect-timeout');
      socket.once(isHttps ? 'secureConnect' : 'connect', () => {
        if (reason === undefined) timers.arm(timeouts.headersMs, 'headers-timeout');
      });
    });

    outgoing.once('error', (err) => {
      cleanup();
      if (!settled) {
        settled = true;
        reject(err instanceof AttemptAbortedError ? err : new AttemptAbortedError(reason ?? 'network', err));
      }
    });

    outgoing.once('response', (res) => {
      settled = true;
      timers.arm(idleMs, 'idle-timeout');
      const status = res.statusCode ?? 0;
      res.once('end', () => {
        finished = true;
        cleanup();
      });
      resolve({
        status,
        ok: status >= 200 && status < 300,
        headers: () => toHeaders(res.headers),
        body: responseBytes(res, timers, () => reason),
        abort,
        abortedBy: () => reason,
        setIdle: (ms) => {
          idleMs = ms;
          if (!finished && reason === undefined) timers.arm(ms, 'idle-timeout');
        },
        markFirstToken: () => timers.stopFirstToken(),
        close: () => {
          if (!finished) abort('abandoned');
          cleanup();
        },
      });
    });

    outgoing.end(body);
  });
}

/** The POST for `req` on this container's keep-alive agent (Nagle off), not yet sent. */
function openRequest(req: UpstreamHttpRequest, contentLength: number): http.ClientRequest {
  const url = new URL(req.url);
  const isHttps = url.protocol === 'https:';
  const outgoing = (isHttps ? https : http).request({
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: 'POST',
    agent: isHttps ? httpsAgent : httpAgent,
    headers: { ...req.headers, 'content-length': String(contentLength) },
  });
  outgoing.setNoDelay(true);
  return outgoing;
}

/**
 * The response body's chunks, each refreshing the idle timer.
 * @throws AttemptAbortedError (our abort's reason, else `network`) when the body is cut or reset.
 */
async function* responseBytes(res: http.IncomingMessage, timers: AttemptTimers, reason: () => AbortReason | undefined): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of res) {
      timers.refresh();
      yield chunk as Buffer;
    }
  } catch (err) {
    throw err instanceof AttemptAbortedError ? err : new AttemptAbortedError(reason() ?? 'network', err);
  }
  // A socket destroyed mid-body (upstream reset) ends the stream early instead of throwing.
  if (!res.complete) throw new AttemptAbortedError(reason() ?? 'network');
}

/** JSON's insignificant whitespace (RFC 8259 §2): what a keep-alive beat before a buffered body is made of. */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * Reads the whole body as text.
 *
 * `answerBy` (epoch ms), when given, bounds the wait for the answer's first byte that is not
 * whitespace: DeepSeek sends 200 headers at once under load and then blank lines for up to 10 minutes
 * before the JSON (providers.md §4.5), so for a buffered call "headers arrived" does not mean "the
 * answer began". Past `answerBy` the attempt is aborted with `headers-timeout`, as if no headers had
 * come: the same limit, the same fallback.
 * @throws AttemptAbortedError when the body is cut or `answerBy` passes first.
 */
export async function readText(live: LiveAttempt, answerBy?: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  let waiting = answerBy === undefined ? undefined : setTimeout(() => live.abort('headers-timeout'), Math.max(1, answerBy - Date.now()));
  try {
    for await (const bytes of live.body) {
      if (waiting !== undefined && bytes.some((b) => !JSON_WHITESPACE.has(b))) {
        clearTimeout(waiting);
        waiting = undefined;
      }
      text += decoder.decode(bytes, { stream: true });
    }
  } finally {
    if (waiting !== undefined) clearTimeout(waiting);
  }
  return text + decoder.decode();
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    h.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return h;
}

/** setTimeout's largest delay (ms); a longer one fires at once (Node.js timers docs). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The timers of one upstream attempt (routing/upstream-call.ts), each calling `onTimeout` with its
 * reason when it fires:
 * - the phase timer, re-armed per phase (connect → headers → idle between body chunks) and refreshed
 *   by each chunk;
 * - the total timer (`totalMs`, reason `deadline`), never refreshed: it bounds the attempt however
 *   its bytes trickle in;
 * - the first-token timer (`firstTokenMs`, reason `first-token-timeout`), started with the request and
 *   never refreshed: a hang before the headers is a missing first token too.
 */
export interface AttemptTimers {
  /** (Re)starts the phase timer: `why` after `ms` (ms) unless re-armed, refreshed or cleared. */
  arm(ms: number, why: AbortReason): void;
  /** Restarts the phase timer's count from now (a body chunk arrived). */
  refresh(): void;
  /** Stops the first-token timer (the first token arrived). */
  stopFirstToken(): void;
  /** Stops every timer. */
  clear(): void;
}

/** Starts the total and first-token timers now (the request is being sent); the phase timer waits for {@link AttemptTimers.arm}. */
export function startAttemptTimers(timeouts: AttemptTimeouts, onTimeout: (why: AbortReason) => void): AttemptTimers {
  let phase: NodeJS.Timeout | undefined;
  const total = once(timeouts.totalMs, () => onTimeout('deadline'));
  let firstToken = once(timeouts.firstTokenMs, () => onTimeout('first-token-timeout'));
  return {
    arm(ms, why) {
      if (phase !== undefined) clearTimeout(phase);
      phase = setTimeout(() => onTimeout(why), ms);
    },
    refresh: () => phase?.refresh(),
    stopFirstToken() {
      if (firstToken !== undefined) clearTimeout(firstToken);
      firstToken = undefined;
    },
    clear() {
      if (phase !== undefined) clearTimeout(phase);
      if (total !== undefined) clearTimeout(total);
      if (firstToken !== undefined) clearTimeout(firstToken);
    },
  };
}

/** A one-shot timer after `ms` (clamped to 1 … setTimeout's maximum), or none when `ms` is absent or infinite. */
function once(ms: number | undefined, fire: () => void): NodeJS.Timeout | undefined {
  return ms !== undefined && Number.isFinite(ms) ? setTimeout(fire, Math.min(MAX_TIMER_MS, Math.max(1, ms))) : undefined;
}

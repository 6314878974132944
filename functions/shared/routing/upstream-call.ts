import type { UpstreamHttpRequest } from '../providers/types';

/**
 * One upstream HTTP attempt with its own AbortController, aborted by the client's signal, by its
 * timers, or by the router when it gives up on the attempt, so no socket or upstream generation is
 * left running. Uses Node's global fetch (undici, keep-alive connection pool shared per container).
 */

/** Time limits of one attempt (ms). */
export interface AttemptTimeouts {
  /** From sending the request to the response headers (buffered calls: the whole generation). */
  headersMs: number;
  /** Longest silence between two body chunks once headers arrived (streams). */
  idleMs: number;
}

/** Why the attempt's controller was aborted. */
export type AbortReason = 'client' | 'headers-timeout' | 'idle-timeout' | 'abandoned';

/** A started attempt. */
export interface LiveAttempt {
  response: Response;
  /** Reset the idle timer (call on every body chunk). */
  touch(): void;
  /** Stop the timers; abort the request if it is still running (`reason` for the logs). */
  close(reason?: AbortReason): void;
  /** Set when the attempt was aborted, with why. */
  abortReason(): AbortReason | undefined;
  signal: AbortSignal;
}

/** Thrown when an attempt fails before a response (network error, timeout, client abort). */
export class AttemptAbortedError extends Error {
  constructor(readonly reason: AbortReason | 'network', cause?: unknown) {
    super(`upstream attempt ${reason}`, cause === undefined ? undefined : { cause });
    this.name = 'AttemptAbortedError';
  }
}

/**
 * Sends `req` and waits for the response headers.
 * @throws AttemptAbortedError on a network failure, a headers timeout, or a client abort.
 */
export async function startAttempt(req: UpstreamHttpRequest, clientSignal: AbortSignal, timeouts: AttemptTimeouts): Promise<LiveAttempt> {
  const controller = new AbortController();
  let reason: AbortReason | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  const abort = (why: AbortReason): void => {
    if (reason !== undefined) return;
    reason = why;
    controller.abort(new AttemptAbortedError(why));
  };
  const onClientAbort = (): void => abort('client');
  if (clientSignal.aborted) abort('client');
  else clientSignal.addEventListener('abort', onClientAbort, { once: true });
  const headersTimer = setTimeout(() => abort('headers-timeout'), timeouts.headersMs);

  const close = (why: AbortReason = 'abandoned'): void => {
    clearTimeout(headersTimer);
    if (idleTimer !== undefined) clearTimeout(idleTimer);
    clientSignal.removeEventListener('abort', onClientAbort);
    if (!controller.signal.aborted) abort(why);
  };

  let response: Response;
  try {
    response = await fetch(req.url, { method: 'POST', headers: req.headers, body: req.body, signal: controller.signal });
  } catch (err) {
    close();
    throw new AttemptAbortedError(reason ?? 'network', err);
  } finally {
    clearTimeout(headersTimer);
  }
  const touch = (): void => {
    if (idleTimer !== undefined) idleTimer.refresh();
    else idleTimer = setTimeout(() => abort('idle-timeout'), timeouts.idleMs);
  };
  touch();
  return { response, touch, close, abortReason: () => reason, signal: controller.signal };
}

/**
 * Reads the whole body as text, keeping the idle timer fed.
 * @throws AttemptAbortedError when the body is cut (reset, timeout, abort).
 */
export async function readText(live: LiveAttempt): Promise<string> {
  const body = live.response.body;
  if (body === null) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const bytes of body) {
      live.touch();
      text += decoder.decode(bytes, { stream: true });
    }
  } catch (err) {
    throw new AttemptAbortedError(live.abortReason() ?? 'network', err);
  }
  return text + decoder.decode();
}

/** Yields the body's bytes, feeding the idle timer; a cut body throws AttemptAbortedError. */
export async function* bodyBytes(live: LiveAttempt): AsyncGenerator<Uint8Array> {
  const body = live.response.body;
  if (body === null) return;
  try {
    for await (const bytes of body) {
      live.touch();
      yield bytes;
    }
  } catch (err) {
    throw new AttemptAbortedError(live.abortReason() ?? 'network', err);
  }
}

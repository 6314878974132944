/**
 * The request log: one {@link RecordedRequest} per provider request, updated as the exchange ends so
 * tests can assert that an upstream request was aborted by its client (e.g. the gateway giving up
 * on a hung upstream) or completed.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedRequest } from './types.js';

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

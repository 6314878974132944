/**
 * Closed-loop load: `concurrency` workers, each sending its next request as soon as the previous
 * answer has been read to the end, over keep-alive connections (an undici Pool with one connection
 * per worker). Bounded by a request count AND a time cap, so a slow target cannot stall the bench.
 */
import type { Pool } from 'undici';

/** One HTTP request, sent as is by every worker. */
export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Bounds of one load run. */
export interface LoadBounds {
  concurrency: number;
  /** Requests to send in total (the run stops early at the time cap). */
  requests: number;
  /** Longest the run may take, ms. */
  timeCapMs: number;
  /** Awaited before each request, outside its timing (e.g. wait until the gateway's ledger write is done). */
  beforeEach?: () => Promise<void>;
}

/** What one load run measured. */
export interface LoadResult {
  /** Latency of each successful (2xx, body read) request, ms, in completion order. */
  latenciesMs: number[];
  /** Requests that failed: non-2xx status or a transport error, by `status <n>` / error name. */
  failures: Record<string, number>;
  /** Wall time of the run, ms. */
  elapsedMs: number;
  /** Successful requests per second over the whole run. */
  reqPerSec: number;
  /** True when the time cap ended the run before `requests` were sent. */
  capped: boolean;
}

/** Sends the request once and resolves with (status, body text). */
async function send(pool: Pool, spec: RequestSpec): Promise<{ status: number; text: string }> {
  const res = await pool.request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

/**
 * Runs `bounds.requests` requests at `bounds.concurrency` and measures each one's latency (send to
 * last body byte, ms). `check` sees the first successful body and throws if it is not the expected
 * answer (a bench of error pages would be worthless).
 */
export async function runClosedLoop(pool: Pool, spec: RequestSpec, bounds: LoadBounds, check?: (body: string) => void): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};
  let issued = 0;
  let checked = check === undefined;
  let capped = false;
  const started = performance.now();
  const deadline = started + bounds.timeCapMs;

  const worker = async (): Promise<void> => {
    while (issued < bounds.requests) {
      if (performance.now() > deadline) {
        capped = true;
        return;
      }
      issued++;
      await bounds.beforeEach?.();
      const t0 = performance.now();
      let answer: { status: number; text: string };
      try {
        answer = await send(pool, spec);
      } catch (err) {
        const name = err instanceof Error ? `${err.name}: ${err.message}` : 'error';
        failures[name] = (failures[name] ?? 0) + 1;
        continue;
      }
      const t1 = performance.now();
      if (answer.status < 200 || answer.status >= 300) {
        failures[`status ${answer.status}`] = (failures[`status ${answer.status}`] ?? 0) + 1;
        continue;
      }
      latenciesMs.push(t1 - t0);
      if (!checked) {
        checked = true;
        check?.(answer.text); // throws: the whole run fails, loudly
      }
    }
  };
  await Promise.all(Array.from({ length: bounds.concurrency }, worker));
  const elapsedMs = performance.now() - started;
  return { latenciesMs, failures, elapsedMs, reqPerSec: (latenciesMs.length * 1000) / elapsedMs, capped };
}

import { UpstreamAttemptError, type FailureKind } from '../providers/types';
import type { CircuitBreaker, FailureOrigin } from './circuit-breaker';

/**
 * The breaker verdict of one allowed attempt, reported once (later calls are no-ops). A buffered
 * attempt reports as soon as its answer parses; a stream only when its end is known, so a target that
 * starts answers and then drops them is seen as failing (fallback-router.ts).
 */
export interface TargetHealth {
  success(): void;
  failure(kind: FailureKind): void;
  /** Neither: the client left, or we stopped it (deadline). Gives a half-open probe back. */
  release(): void;
}

/**
 * The once-only verdict of target `key` on `brk`.
 * @param onVerdict called once with the first verdict (the router ends the attempt's trace span there).
 * @param origin the request's account and body (circuit-breaker.ts: whose failure it is).
 */
export function healthOf(brk: CircuitBreaker, key: string, onVerdict: () => void = () => undefined, origin?: FailureOrigin): TargetHealth {
  let done = false;
  const once = (f: () => void) => (): void => {
    if (done) return;
    done = true;
    f();
    onVerdict();
  };
  return {
    success: once(() => brk.success(key, origin?.accountId)),
    failure: (kind) => once(() => brk.failure(key, kind, origin))(),
    release: once(() => brk.release(key, origin?.accountId)),
  };
}

/**
 * Passes a started stream through and tells the breaker how it ended: success at its end, failure
 * when the upstream broke it off ({@link UpstreamAttemptError}), nothing (release) when `ourStop()`
 * says the client or we stopped it, or when the consumer stops reading.
 */
export async function* reportingHealth<T>(rest: AsyncGenerator<T>, health: TargetHealth, ourStop: () => boolean): AsyncGenerator<T> {
  try {
    yield* rest;
    health.success();
  } catch (err) {
    if (err instanceof UpstreamAttemptError && !ourStop()) health.failure(err.failure.kind);
    throw err;
  } finally {
    health.release();
  }
}

import type { AbortReason, AttemptTimeouts } from './upstream-call';

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

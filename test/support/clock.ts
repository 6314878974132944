/**
 * Moves the billing clock (functions/shared/time/clock.ts) for tests that must be past a time limit the
 * code reads from it (a view's ACCOUNT_CACHE_TTL_MS, a rate-limit minute, a spend-limit day): the clock
 * jumps at once instead of the test waiting for wall time to pass.
 */
import { setClock } from '../../functions/shared/time/clock';

/** How far (ms) the billing clock stands ahead of wall time. */
let offset = 0;

/** Moves the billing clock `ms` (≥ 0) ahead of where it stands; it keeps running with wall time. */
export function advanceClock(ms: number): void {
  offset += ms;
  const ahead = offset;
  setClock(() => Date.now() + ahead);
}

/** Puts the billing clock back on wall time (an `afterAll`'s step). */
export function resetClock(): void {
  offset = 0;
  setClock(undefined);
}

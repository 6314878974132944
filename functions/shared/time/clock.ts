/**
 * The billing clock (epoch ms). Rate-limit minutes, key spend-limit windows, the age of a container's
 * account views (ACCOUNT_CACHE_TTL_MS: account-state.ts, hold.ts, lease.ts) and of its cached keys
 * (KEY_CACHE_TTL_MS: authenticate.ts) are read from it, so a test can move time (a day forward, to the
 * next window, past a TTL) without waiting. Production never sets it.
 */

let current: () => number = Date.now;

/** Now, epoch ms. */
export function now(): number {
  return current();
}

/** Replaces the clock (tests only); `undefined` restores `Date.now`. */
export function setClock(clock: (() => number) | undefined): void {
  current = clock ?? Date.now;
}

/**
 * The billing clock (epoch ms). Rate-limit minutes and key spend-limit windows are read from it, so a
 * test can move time (a day forward, to the next window) without waiting. Production never sets it.
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

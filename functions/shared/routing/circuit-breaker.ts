import { recordBreakerOpened } from '../observability/metrics';
import type { FailureKind } from '../providers/types';

/**
 * A per-container circuit breaker per upstream target (`provider:upstreamModel`): after
 * {@link BreakerOptions.failureThreshold} consecutive failures that say "this target is down"
 * (timeouts, connection errors, 5xx/overload, our key rejected, a retired model), the target is
 * skipped for a cooldown; then ONE request probes it (half-open): success closes it, failure opens it
 * again. A dead upstream thus costs one timeout per container per cooldown, not one per request.
 * Client errors and rate limits do not count: they say nothing about the target's health.
 */

/** Tuning (counts, ms). */
export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
}

/** Defaults: 3 consecutive failures, 30 s cooldown (Portkey's minimum cooldown, peers.md A). */
export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 3, cooldownMs: 30_000 };

/** One target's breaker state (routing/target-health.ts's TargetHealth is the per-attempt reporting view). */
interface BreakerState {
  consecutiveFailures: number;
  /** Epoch ms until which the target is skipped; 0 when closed. */
  openUntil: number;
  /** A half-open probe is in flight. */
  probing: boolean;
}

/** Failure kinds that count against a target's health. */
function countsAgainst(kind: FailureKind): boolean {
  switch (kind) {
    case 'timeout':
    case 'connection':
    case 'server':
    case 'overloaded':
    case 'auth-config':
    case 'not-found':
      return true;
    case 'client':
    case 'rate-limit':
    case 'context-length':
      return false;
    default:
      return false;
  }
}

/** One breaker per container (module state survives between warm invocations). */
export class CircuitBreaker {
  private readonly health = new Map<string, BreakerState>();

  /**
   * @param onOpen called with the target's key each time its breaker opens (closed or half-open to
   *   open); the container's breaker records the `BreakerOpened` metric.
   */
  constructor(
    private readonly opts: BreakerOptions = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
    private readonly onOpen: (key: string) => void = () => undefined,
  ) {}

  /**
   * May a request use this target now? Closed: yes. Open: no, until the cooldown ends; then the first
   * caller gets the half-open probe and the others keep skipping it until the probe reports.
   */
  allow(key: string): boolean {
    const h = this.health.get(key);
    if (h === undefined || h.openUntil === 0) return true;
    if (this.now() < h.openUntil || h.probing) return false;
    h.probing = true;
    return true;
  }

  /** The target answered. */
  success(key: string): void {
    this.health.delete(key);
  }

  /** The target failed with `kind`. */
  failure(key: string, kind: FailureKind): void {
    if (!countsAgainst(kind)) {
      const h = this.health.get(key);
      if (h) h.probing = false;
      return;
    }
    const h = this.health.get(key) ?? { consecutiveFailures: 0, openUntil: 0, probing: false };
    h.consecutiveFailures += 1;
    if (h.probing || h.consecutiveFailures >= this.opts.failureThreshold) {
      // Opening: from closed, or a failed half-open probe (its cooldown is over). Not while already open.
      const opening = h.openUntil === 0 || this.now() >= h.openUntil;
      h.openUntil = this.now() + this.opts.cooldownMs;
      if (opening) this.onOpen(key);
    }
    h.probing = false;
    this.health.set(key, h);
  }

  /** An allowed attempt that never ran (or never reported): give the half-open probe back. */
  release(key: string): void {
    const h = this.health.get(key);
    if (h) h.probing = false;
  }

  /** Whether the target is currently skipped (for logs and tests). */
  isOpen(key: string): boolean {
    const h = this.health.get(key);
    return h !== undefined && h.openUntil !== 0 && this.now() < h.openUntil;
  }

  /** Forgets all state (tests). */
  reset(): void {
    this.health.clear();
  }
}

/** The container's breaker; each opening is a `BreakerOpened` metric. */
export const breaker = new CircuitBreaker(DEFAULT_BREAKER, Date.now, recordBreakerOpened);

import { createHash } from 'node:crypto';
import { recordBreakerOpened } from '../observability/metrics';
import type { FailureKind } from '../providers/types';

/**
 * A per-container circuit breaker per upstream target (`provider:upstreamModel`): after
 * {@link BreakerOptions.failureThreshold} consecutive failures that say "this target is down"
 * (timeouts, connection errors, 5xx/overload, our key rejected, a retired model), the target is
 * skipped for a cooldown; then ONE request probes it (half-open): success closes it, failure opens it
 * again. A dead upstream thus costs one timeout per container per cooldown, not one per request.
 * Client errors and rate limits do not count: they say nothing about the target's health.
 *
 * One tenant cannot trip it for others (else three requests of one account whose content made the
 * upstream answer 5xx would re-route every account's gpt-4o for 30 s). A 5xx or overload answer may be
 * caused by the request itself, so it counts for everyone once per account and once per body: it
 * opens the target for everyone only when the consecutive failures came from `failureThreshold`
 * different accounts AND as many different request bodies. Every counting failure also counts for the
 * failing account alone, which has its own breaker per target (same threshold and cooldown), so an
 * account whose requests keep failing is re-routed by itself. A
 * timeout, a connection error, our key refused or a retired model is not attributable to the content:
 * it counts for everyone at once, as before.
 */

/** Tuning (counts, ms). */
export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
}

/** Defaults: 3 consecutive failures, 30 s cooldown (Portkey's minimum cooldown, peers.md A). */
export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 3, cooldownMs: 30_000 };

/** Most per-account breaker states kept per container; the oldest go first (they only re-route that account). */
export const MAX_ACCOUNT_STATES = 10_000;

/** Who sent the request a verdict is about: its account and its raw body (hashed only on a failure). */
export interface FailureOrigin {
  accountId: string;
  body: string;
}

/** One target's breaker state (routing/target-health.ts's TargetHealth is the per-attempt reporting view). */
interface BreakerState {
  /** Consecutive failures not attributable to a request's content (all failures, per account). */
  consecutiveFailures: number;
  /** Epoch ms until which the target is skipped; 0 when closed. */
  openUntil: number;
  /** A half-open probe is in flight. */
  probing: boolean;
  /** Distinct accounts and body hashes among the consecutive attributable failures (up to the threshold). */
  accounts: string[];
  bodies: string[];
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
    default:
      return false;
  }
}

/** Failure kinds a request's own content can cause (an upstream 5xx on a body it cannot handle). */
function contentCanCause(kind: FailureKind): boolean {
  return kind === 'server' || kind === 'overloaded';
}

function addDistinct(list: string[], value: string, max: number): void {
  if (list.length < max && !list.includes(value)) list.push(value);
}

/** Breaker states by key, with the half-open protocol. */
class BreakerTable {
  private readonly states = new Map<string, BreakerState>();

  constructor(
    private readonly opts: BreakerOptions,
    private readonly now: () => number,
    private readonly maxStates = Number.POSITIVE_INFINITY,
  ) {}

  allow(key: string): boolean {
    const h = this.states.get(key);
    if (h === undefined || h.openUntil === 0) return true;
    if (this.now() < h.openUntil || h.probing) return false;
    h.probing = true;
    return true;
  }

  success(key: string): void {
    this.states.delete(key);
  }

  release(key: string): void {
    const h = this.states.get(key);
    if (h) h.probing = false;
  }

  isOpen(key: string): boolean {
    const h = this.states.get(key);
    return h !== undefined && h.openUntil !== 0 && this.now() < h.openUntil;
  }

  /**
   * Counts one failure (`note` updates the counts); `opens(h)` (after) says whether it opens the breaker. A failed probe
   * that does not open it closes it again (counting from there).
   * @returns true when the breaker went from closed or half-open to open.
   */
  failure(key: string, note: (h: BreakerState) => void, opens: (h: BreakerState) => boolean): boolean {
    const h = this.states.get(key) ?? { consecutiveFailures: 0, openUntil: 0, probing: false, accounts: [], bodies: [] };
    note(h);
    let opened = false;
    if (opens(h)) {
      // Opening: from closed, or a failed half-open probe (its cooldown is over). Not while already open.
      opened = h.openUntil === 0 || this.now() >= h.openUntil;
      h.openUntil = this.now() + this.opts.cooldownMs;
      h.accounts = []; // a probe failing later must show the spread again
      h.bodies = [];
    } else if (h.probing) h.openUntil = 0;
    h.probing = false;
    this.states.delete(key); // re-insert: the newest last, so eviction takes the oldest
    this.states.set(key, h);
    if (this.states.size > this.maxStates) this.states.delete(this.states.keys().next().value as string);
    return opened;
  }

  clear(): void {
    this.states.clear();
  }
}

/** One breaker per container (module state survives between warm invocations). */
export class CircuitBreaker {
  private readonly shared: BreakerTable;
  private readonly perAccount: BreakerTable;

  /**
   * @param onOpen called with the target's key each time its shared breaker opens (closed or
   *   half-open to open); the container's breaker records the `BreakerOpened` metric.
   */
  constructor(
    private readonly opts: BreakerOptions = DEFAULT_BREAKER,
    now: () => number = Date.now,
    private readonly onOpen: (key: string) => void = () => undefined,
  ) {
    this.shared = new BreakerTable(opts, now);
    this.perAccount = new BreakerTable(opts, now, MAX_ACCOUNT_STATES);
  }

  /**
   * May a request (of `accountId`, when known) use this target now? Closed: yes. Open: no, until the
   * cooldown ends; then the first caller gets the half-open probe and the others keep skipping it
   * until the probe reports. Both the shared and the account's own breaker must allow it.
   */
  allow(key: string, accountId?: string): boolean {
    if (!this.shared.allow(key)) return false;
    if (accountId === undefined || this.perAccount.allow(accountKey(accountId, key))) return true;
    this.shared.release(key); // a shared probe this caller will not use
    return false;
  }

  /** The target answered. */
  success(key: string, accountId?: string): void {
    this.shared.success(key);
    if (accountId !== undefined) this.perAccount.success(accountKey(accountId, key));
  }

  /**
   * The target failed with `kind` on a request from `origin` (unknown origin: counted for everyone).
   * A 5xx/overload counts for everyone only once the consecutive failures span `failureThreshold`
   * accounts and bodies; every counting failure also counts for the origin's account.
   */
  failure(key: string, kind: FailureKind, origin?: FailureOrigin): void {
    if (!countsAgainst(kind)) {
      this.release(key, origin?.accountId);
      return;
    }
    const threshold = this.opts.failureThreshold;
    const count = (h: BreakerState): void => void (h.consecutiveFailures += 1);
    const plain = (h: BreakerState): boolean => h.probing || h.consecutiveFailures >= threshold;
    if (origin !== undefined) this.perAccount.failure(accountKey(origin.accountId, key), count, plain);
    const attributable = origin !== undefined && contentCanCause(kind);
    const opened = attributable
      ? this.shared.failure(
          key,
          (h) => {
            addDistinct(h.accounts, origin.accountId, threshold);
            if (h.bodies.length < threshold) addDistinct(h.bodies, bodyHash(origin.body), threshold);
          },
          (h) => h.accounts.length >= threshold && h.bodies.length >= threshold,
        )
      : this.shared.failure(key, count, plain);
    if (opened) this.onOpen(key);
  }

  /** An allowed attempt that never ran (or never reported): give the half-open probes back. */
  release(key: string, accountId?: string): void {
    this.shared.release(key);
    if (accountId !== undefined) this.perAccount.release(accountKey(accountId, key));
  }

  /** Whether the target is currently skipped, for everyone or (given) for this account (logs, tests, fail-open). */
  isOpen(key: string, accountId?: string): boolean {
    return this.shared.isOpen(key) || (accountId !== undefined && this.perAccount.isOpen(accountKey(accountId, key)));
  }

  /** Forgets all state (tests). */
  reset(): void {
    this.shared.clear();
    this.perAccount.clear();
  }
}

function accountKey(accountId: string, key: string): string {
  return `${accountId}\u0000${key}`;
}

/** A short fingerprint of a request body (only computed for a failure that content may have caused). */
function bodyHash(body: string): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 22);
}

/** The container's breaker; each opening is a `BreakerOpened` metric. */
export const breaker = new CircuitBreaker(DEFAULT_BREAKER, Date.now, recordBreakerOpened);

/**
 * TransactWriteItems under contention. DynamoDB cancels a transaction whose items are being written by
 * another transaction at the same time: `TransactionCanceledException` with a cancellation reason
 * `TransactionConflict` for that item (DynamoDB Developer Guide, "Transaction conflict handling").
 * The SDK does not retry those; the hot account item makes them routine, so we retry with jitter.
 */
import { backoffMs } from '../retry/backoff';
import { retrying, TryAgain, type RetryPolicy } from '../retry/retry';

/**
 * One item's reason in a cancelled TransactWriteItems: its code (`None`, `ConditionalCheckFailed`,
 * `TransactionConflict`, …) and the ALL_OLD image its failed condition returned
 * (`ReturnValuesOnConditionCheckFailure`; still marshalled, as lib-dynamodb passes errors through untouched).
 */
export interface CancellationReason {
  code: string | undefined;
  item: unknown;
}

/** The reasons of a cancelled transaction in `TransactItems` order, or undefined when `err` is not one. */
export function cancellationReasons(err: unknown): CancellationReason[] | undefined {
  if (typeof err !== 'object' || err === null || (err as { name?: unknown }).name !== 'TransactionCanceledException') return undefined;
  const reasons = (err as { CancellationReasons?: unknown }).CancellationReasons;
  if (!Array.isArray(reasons)) return [];
  return reasons.map((r: unknown) => {
    const o = (typeof r === 'object' && r !== null ? r : {}) as { Code?: unknown; Item?: unknown };
    return { code: typeof o.Code === 'string' ? o.Code : undefined, item: o.Item };
  });
}

/** Per-item codes of a cancelled transaction, in `TransactItems` order (e.g. `None`, `ConditionalCheckFailed`). */
export function cancellationCodes(err: unknown): ReadonlyArray<string | undefined> | undefined {
  return cancellationReasons(err)?.map((r) => r.code);
}

/**
 * True when retrying the same transaction may succeed: cancelled for `TransactionConflict`, or
 * `TransactionConflictException` (a single write collided with a transaction in flight).
 */
export function isTransactionConflict(err: unknown): boolean {
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TransactionConflictException') {
    return true;
  }
  return cancellationCodes(err)?.includes('TransactionConflict') ?? false;
}

/** Backoff settings for {@link retryOnConflict}; times in ms. */
export interface ConflictRetryOptions {
  /** Total attempts including the first. Default 8. */
  maxAttempts?: number;
  /** First backoff ceiling, ms; doubles each attempt. Default 15. */
  baseDelayMs?: number;
  /** Largest backoff ceiling, ms. Default 400. */
  maxDelayMs?: number;
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/**
 * Jittered delay before retry number `attempt` (1-based): uniform in [0, min(max, base·2^(attempt-1))]
 * ("full jitter", AWS Architecture Blog, "Exponential Backoff And Jitter"), so colliding writers spread out.
 */
export function backoffDelayMs(attempt: number, opts: ConflictRetryOptions = {}): number {
  return Math.floor(backoffMs(attempt - 1, { baseMs: opts.baseDelayMs ?? 15, capMs: opts.maxDelayMs ?? 400, jitter: 'full' }, opts.random));
}

/**
 * A settle's (or a lease return's) policy: a transaction conflict is retried after the shared backoff
 * (ceiling 250 ms) while fewer than `maxAttempts` tries have run; a {@link TryAgain} (the write planned
 * again: the key deleted, the minute turned, entries already written) is tried at once, at most
 * `replans` times beyond `maxAttempts` (each replan changes the plan once, so the count is bounded).
 */
export function settleConflictPolicy(maxAttempts: number, replans: number): RetryPolicy {
  return {
    maxAttempts: maxAttempts + replans,
    delayMs: (err, retry) =>
      err instanceof TryAgain ? 0 : isTransactionConflict(err) && retry + 1 < maxAttempts ? backoffDelayMs(retry + 1, { maxDelayMs: 250 }) : undefined,
  };
}

/**
 * Runs `op`, retrying while it fails with a transaction conflict (bounded by `maxAttempts`), through
 * the one retry loop (retry/retry.ts). Any other error, or the last conflict, is rethrown unchanged.
 */
export async function retryOnConflict<T>(op: () => Promise<T>, opts: ConflictRetryOptions = {}): Promise<T> {
  const policy: RetryPolicy = {
    maxAttempts: opts.maxAttempts ?? 8,
    delayMs: (err, retry) => (isTransactionConflict(err) ? backoffDelayMs(retry + 1, opts) : undefined),
  };
  return retrying(op, policy, opts.sleep === undefined ? {} : { sleep: opts.sleep });
}

import { sleep as abortableSleep } from './sleep';

/**
 * The one retry loop of modelmux: the same operation tried again, within a bounded number of tries,
 * after a wait its policy derives from the failure. Three callers share it:
 * - the AWS JSON client (aws/aws-json.ts): throttling, 5xx and dropped connections, the SDK's
 *   standard strategy;
 * - DynamoDB transaction conflicts (store/transaction-retry.ts);
 * - read-modify-write loops that plan their write again when the item moved (billing's settles and
 *   lease returns, key creation, update and delete, refunds, unprocessed batch keys): their try throws
 *   {@link TryAgain} after changing its plan, and a 0 ms wait is none;
 * - the router's retry of the same upstream target (routing/retry-policy.ts): the attempt loop
 *   (routing/attempt-loop.ts) runs its tries beside hedging and fallback, so it asks
 *   {@link nextRetryDelay} — the decision this loop makes — instead of looping here.
 *
 * A loop over DIFFERENT targets (fallback to the next target of a plan) is not a retry and stays in
 * the attempt loop.
 */

/** When to try again and after how long. `E` is what a failed try reports (an error, a verdict). */
export interface RetryPolicy<E = unknown> {
  /** Tries in all, the first included (1: no retry). */
  maxAttempts: number;
  /**
   * The wait before retry number `retry` (0-based) after `failure`, in ms; undefined when another
   * try cannot help (the failure is not retryable, or asks for a wait the policy will not make).
   */
  delayMs(failure: E, retry: number): number | undefined;
}

/**
 * The wait before retry number `retry` (0-based) after `failure`, in ms, or undefined: give up —
 * the tries are used up, the policy says another cannot help, or the wait would not end before
 * `remainingMs` (what is left of the caller's time).
 */
export function nextRetryDelay<E>(policy: RetryPolicy<E>, failure: E, retry: number, remainingMs = Number.POSITIVE_INFINITY): number | undefined {
  if (retry + 1 >= policy.maxAttempts) return undefined;
  const delay = policy.delayMs(failure, retry);
  return delay !== undefined && delay < remainingMs ? delay : undefined;
}

/** What {@link retrying} may be given besides its policy. */
export interface RetryOptions {
  /** Stops retrying when aborted: the last failure is thrown at once (also mid-wait). */
  signal?: AbortSignal;
  /** Injected by tests; default: a timer that ends early when `signal` aborts (false). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<boolean | void>;
}

/**
 * Thrown by a try that changed its plan for the next (the item it writes moved between its read and its
 * write, keys were left unprocessed): a policy retries it, {@link atOnce} without a wait. The last
 * TryAgain of tries used up is rethrown like any failure; its caller turns it into its own answer.
 */
export class TryAgain extends Error {
  constructor(message = 'try again') {
    super(message);
    this.name = 'TryAgain';
  }
}

/** `maxAttempts` tries in all, the next at once after a {@link TryAgain}; any other failure is rethrown. */
export function atOnce(maxAttempts: number): RetryPolicy {
  return { maxAttempts, delayMs: (failure) => (failure instanceof TryAgain ? 0 : undefined) };
}

/**
 * Runs `op` until it succeeds or {@link nextRetryDelay} gives up; then rethrows its last error unchanged.
 * @param op one try; given its number (1-based) and the ms waited between tries so far.
 */
export async function retrying<T>(op: (attempt: number, waitedMs: number) => Promise<T>, policy: RetryPolicy, opts: RetryOptions = {}): Promise<T> {
  let waited = 0;
  for (let retry = 0; ; retry++) {
    try {
      return await op(retry + 1, waited);
    } catch (err) {
      const delay = opts.signal?.aborted === true ? undefined : nextRetryDelay(policy, err, retry);
      if (delay === undefined) throw err;
      waited += delay;
      if (delay > 0 && (await (opts.sleep ?? abortableSleep)(delay, opts.signal)) === false) throw err;
    }
  }
}

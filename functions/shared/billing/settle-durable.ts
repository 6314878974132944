/**
 * No answer without a durable billing record. The hold is itself the record that a request started;
 * its settle is tried in-process for up to {@link IN_PROCESS_SETTLE_MS}, then handed to the settle queue
 * (settle-queue.ts), whose consumer retries until it lands. Only if SQS refuses too is the settle left
 * to the orphan sweep, which bills the hold's prompt estimate once it has expired (sweep.ts): the
 * request is never lost, only billed less exactly. Bounds (README, "Durable settle"): in-process ≤ 2.5 s;
 * queued settles retried for 24 h before the dead-letter queue; orphans within expiry + grace + 5 min (HOLD_SWEEP_INTERVAL_MINUTES).
 */
import { logger } from '../observability/logger';
import { StoreUnavailableError } from '../errors/gateway-errors';
import type { HoldRecord } from './hold-record';
import type { SettleOutcome, SettleResult } from './settle';
import { settleRecord } from './lease-settle';
import { queueBalanceAction, sendSettleMessage } from './settle-queue';
import { watchBalance } from './balance-watch';
import { markHoldQueued } from './pending-holds';
import { sleep } from '../retry/sleep';

/** How long a settle is retried in the request's own function before it is queued (ms). */
export const IN_PROCESS_SETTLE_MS = 2_500;

export { SETTLE_TIMEOUT_MS } from '../config/stack-contract';

/** Delay of a queued cancel of a hold whose write may still land (s): the store client's retries (3 × 3 s) first. */
export const UNKNOWN_HOLD_CANCEL_DELAY_S = 15;


/**
 * Settles durably. Never throws: it runs after the client has its answer. Returns the result when
 * the settle landed in-process, else undefined (queued, or left to the sweep — or, when `onUnqueued`
 * is given, to the caller: a leased request's entry then travels with its lease's return). A bill that
 * landed is followed by the balance watch (balance-watch.ts: in memory unless a threshold was crossed).
 */
export async function settleDurably(hold: HoldRecord, outcome: SettleOutcome, budgetMs = IN_PROCESS_SETTLE_MS, onUnqueued?: () => void): Promise<SettleResult | undefined> {
  const deadline = Date.now() + budgetMs;
  let lastError: unknown;
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    try {
      const r = await withTimeout(settleRecord(hold, outcome), deadline - Date.now());
      // A crossing's follow-up goes to the settle function (no read: this container's view decides).
      if (outcome.kind === 'bill' && !r.alreadySettled) await watchBalance(hold.accountId, { keyHash: hold.keyHash, heldNanoUsd: hold.holdNanoUsd }, queueBalanceAction);
      return r;
    } catch (err) {
      lastError = err;
      if (!(err instanceof StoreUnavailableError) && !(err instanceof SettleTimeout) && !isRetryable(err)) break;
      await sleep(Math.min(50 * 2 ** attempt, Math.max(0, deadline - Date.now())));
    }
  }
  if (!(await queue(hold, outcome, 0, lastError))) onUnqueued?.();
  return undefined;
}

/** Hands a settle to the queue (a cancel of an unknown hold is delayed). Never throws; false when SQS refused it. */
export async function queue(hold: HoldRecord, outcome: SettleOutcome, delaySeconds: number, cause?: unknown): Promise<boolean> {
  try {
    await sendSettleMessage(hold, outcome, delaySeconds);
    // The sweep leaves a hold marked queued to the queue (pending-holds.ts); best effort, never throws.
    // A leased request has no hold of its own on the account (its lease waits while the queue is not empty).
    if (hold.leaseId === undefined) await markHoldQueued(hold);
    logger.warn('settle queued', { requestId: hold.requestId, accountId: hold.accountId, kind: outcome.kind, error: describe(cause) });
    return true;
  } catch (err) {
    // The hold stays on the account: the sweep settles it from its prompt estimate once it expires
    // (a leased request's entry goes with its lease's return instead).
    logger.error(hold.leaseId === undefined ? 'settle could not be queued; the orphan sweep will settle the hold' : 'settle could not be queued; the lease\'s return will write it', { requestId: hold.requestId, accountId: hold.accountId, outcome, error: describe(err) });
    return false;
  }
}

/** Cancels a hold whose write may or may not have landed, durably. Never throws. */
export function cancelUnknownHold(hold: HoldRecord): void {
  void queue(hold, { kind: 'cancel' }, UNKNOWN_HOLD_CANCEL_DELAY_S);
}

class SettleTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SettleTimeout('settle timed out')), Math.max(1, ms));
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function isRetryable(err: unknown): boolean {
  const name = (err as { name?: unknown })?.name;
  return name === 'TransactionCanceledException' || name === 'TransactionConflictException' || name === 'TransactionInProgressException';
}

function describe(err: unknown): string | undefined {
  return err === undefined ? undefined : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

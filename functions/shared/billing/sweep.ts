/**
 * The orphan sweep: holds whose function died (no settle, no queued message) are settled from their
 * inline record on the account item (`holds.<requestId>`, hold-record.ts) — our prompt estimate,
 * completion unknown = 0, `usageEstimated: true`, status `orphaned` — once they are past their expiry
 * plus a grace (HOLD_SWEEP_GRACE_MS, default 2 min). Idempotent on the request id like every settle.
 *
 * Finding them: the accounts table's sparse `pendingHolds` index (hold-record.ts `findPendingHolds`), never a Scan, so
 * a run reads the items with holds in flight (and those that held since the last run), not the table.
 *
 * A queued settle is never pre-empted, and never blocks the others: a hold marked `queued` (its settle
 * is on the settle queue) is left to the queue for {@link QUEUED_HOLD_WAIT_MS} past its expiry (the
 * queue's 24 h of retries, then the dead-letter queue and its alarm); an unmarked hold (its mark may
 * have failed with the settle that was queued) waits, while the settle queue is not empty, at most
 * {@link UNMARKED_HOLD_QUEUE_WAIT_MS} past its expiry, then is settled like any orphan.
 * Orphan bound: a hold is settled at most its expiry (the request function's timeout: chat 300 s,
 * embeddings 30 s) + grace + one sweep interval after its request started: 5 + 2 + 5 = 12 min with
 * the defaults (+ up to 1 h while the settle queue holds messages and its queued mark did not land).
 */
import { logger } from '../observability/logger';
import { recordPendingHolds } from '../observability/metrics';
import { config } from '../config/env';
import { queryAccountKeys } from '../accounts/keys/api-key-store';
import { recordOfInline, type HoldRecord, type InlineHold, findPendingHolds } from './hold-record';
import { settleHold, type SettleOutcome } from './settle';
import { reconcileLease } from './lease-settle';
import { isLeaseId } from '../http/request-id';
import { deadLetterMessages, pendingSettleMessages } from './settle-queue';

/** How long past its expiry a hold marked `queued` is left to the settle queue (ms): its 24 h of retries, plus 1 h. */
export const QUEUED_HOLD_WAIT_MS = 25 * 60 * 60_000;

/** How long past its expiry an unmarked hold waits while the settle queue is not empty (ms): 1 h. */
export const UNMARKED_HOLD_QUEUE_WAIT_MS = 60 * 60_000;

/**
 * Holds in flight, from the pendingHolds index; only those expired before `expiredBefore` (epoch ms)
 * when given; oldest expiry first.
 * @throws StoreUnavailableError (503).
 */
export async function listInlineHolds(expiredBefore?: number): Promise<InlineHold[]> {
  const { holds } = await findPendingHolds();
  return holds.filter((h) => expiredBefore === undefined || h.holdExpiresAt < expiredBefore).sort((a, b) => a.holdExpiresAt - b.holdExpiresAt);
}

/**
 * Holds in flight as settleable records (see {@link listInlineHolds}): each key's full hash is found
 * through the keys table's `byAccount` index (one Query per account with holds; deleted keys' rows
 * stay there), so an orphan's ledger entry names its key like any other.
 * @throws StoreUnavailableError (503).
 */
export async function listPendingHolds(expiredBefore?: number): Promise<HoldRecord[]> {
  return recordsOf(await listInlineHolds(expiredBefore));
}

/** Inline holds as settleable records, each key's full hash looked up once per account. */
async function recordsOf(inline: readonly InlineHold[]): Promise<HoldRecord[]> {
  const hashes = new Map<string, Promise<string[]>>();
  const out: HoldRecord[] = [];
  for (const h of inline) {
    let list = hashes.get(h.ownerAccountId);
    if (list === undefined) hashes.set(h.ownerAccountId, (list = accountKeyHashes(h.ownerAccountId)));
    const keyHash = (await list).find((k) => k.startsWith(h.h16)) ?? h.h16;
    out.push(recordOfInline(h, keyHash));
  }
  return out;
}

/** Every key hash of the account (deleted keys' rows included), via the keys table's `byAccount` index. */
async function accountKeyHashes(accountId: string): Promise<string[]> {
  return (await queryAccountKeys(accountId)).map((k) => k.keyHash);
}

/** The settle of an orphaned hold: its prompt estimate at the hold's prices, no completion. */
export function orphanOutcome(hold: HoldRecord): SettleOutcome {
  return {
    kind: 'bill',
    entry: {
      publicModel: hold.publicModel,
      servedModel: hold.publicModel,
      provider: 'unknown',
      promptTokens: hold.promptTokensEstimate,
      completionTokens: 0,
      inputPrice: hold.holdInputPrice,
      outputPrice: hold.holdOutputPrice,
      usageEstimated: true,
      fallbackPath: [],
      status: 'orphaned',
    },
  };
}

/** What one sweep did. */
export interface SweepResult {
  settled: number;
  failed: number;
  /** Overdue holds left for now to the settle queue (marked queued, or waiting while it is not empty). */
  deferred?: number;
}

/**
 * Settles every hold expired more than the grace ago, except those left to the settle queue (see the
 * file comment). Also reads the dead-letter queue's depth (logged; the read keeps its metrics flowing
 * for the dead-letter alarm).
 * @param nowMs epoch ms (tests move it).
 */
export async function sweepOrphanedHolds(nowMs = Date.now()): Promise<SweepResult> {
  const found = await findPendingHolds();
  const overdue = found.holds.filter((h) => h.holdExpiresAt < nowMs - config().HOLD_SWEEP_GRACE_MS);
  recordPendingHolds({ pending: found.holds.length, overdue: overdue.length });
  const [queued, deadLetters] = await Promise.all([
    overdue.some((h) => !h.queued && h.holdExpiresAt >= nowMs - UNMARKED_HOLD_QUEUE_WAIT_MS) ? pendingSettleMessages() : 0,
    deadLetterMessages(),
  ]);
  const due = overdue.filter((h) =>
    h.queued ? h.holdExpiresAt < nowMs - QUEUED_HOLD_WAIT_MS : queued === 0 || h.holdExpiresAt < nowMs - UNMARKED_HOLD_QUEUE_WAIT_MS,
  );
  const deferred = overdue.length - due.length;
  logger.info('orphan sweep', {
    indexEntries: found.indexEntries,
    cleared: found.cleared,
    pending: found.holds.length,
    overdue: overdue.length,
    deferred,
    settleQueue: queued,
    deadLetters,
  });
  const holds = due.length === 0 ? [] : await recordsOf(due);
  let settled = 0;
  let failed = 0;
  for (const hold of holds) {
    try {
      // A lease whose container died: charged what the ledger entries that name it were (lease-settle.ts).
      const r = isLeaseId(hold.requestId) ? await reconcileLease(hold) : await settleHold(hold, orphanOutcome(hold));
      if (!r.alreadySettled) {
        settled++;
        logger.warn(isLeaseId(hold.requestId) ? 'orphaned lease reconciled' : 'orphaned hold settled', {
          requestId: hold.requestId,
          accountId: hold.accountId,
          costNanoUsd: r.costNanoUsd,
          freeTokensUsed: r.freeTokensUsed,
        });
      }
    } catch (err) {
      failed++;
      logger.error('orphaned hold could not be settled', { requestId: hold.requestId, error: err as Error });
    }
  }
  return deferred > 0 ? { settled, failed, deferred } : { settled, failed };
}

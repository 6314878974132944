/**
 * The orphan sweep: holds whose function died (no settle, no queued message) are settled from what
 * the hold recorded — our prompt estimate, completion unknown = 0, `usageEstimated: true`, status
 * `orphaned` — once they are past their expiry plus a grace (HOLD_SWEEP_GRACE_MS, default 2 min), and
 * only while the settle queue is empty, so a queued exact settle is never pre-empted. Idempotent on
 * the request id like every settle. Runs every minute (EventBridge schedule; `npm start`: a timer).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { logger } from '../observability/logger';
import { recordPendingHolds } from '../observability/metrics';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { billingConfig } from './billing-config';
import { HOLD_BUCKETS, holdRecordSchema, type HoldRecord } from './hold-record';
import { settleHold, type SettleOutcome } from './settle';
import { pendingSettleMessages } from './settle-queue';

/** The sparse index listing unsettled holds (ledger table; pk holdBucket, sk holdExpiresAt). */
export const PENDING_HOLDS_INDEX = 'pendingHolds';

/**
 * Unsettled holds, oldest expiry first per bucket; only those expired before `expiredBefore` (epoch
 * ms) when given. Reads the index (eventually consistent).
 * @throws StoreUnavailableError (503).
 */
export async function listPendingHolds(expiredBefore?: number): Promise<HoldRecord[]> {
  const out: HoldRecord[] = [];
  for (const bucket of HOLD_BUCKETS) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await storeCall(() =>
        documentClient().send(
          new QueryCommand({
            TableName: tableNames().ledger,
            IndexName: PENDING_HOLDS_INDEX,
            KeyConditionExpression: expiredBefore === undefined ? 'holdBucket = :b' : 'holdBucket = :b AND holdExpiresAt < :t',
            ExpressionAttributeValues: { ':b': bucket, ...(expiredBefore === undefined ? {} : { ':t': expiredBefore }) },
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      for (const raw of page.Items ?? []) {
        const parsed = holdRecordSchema.safeParse(raw);
        if (parsed.success && raw.status === 'held') out.push(parsed.data);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  return out;
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
  skipped?: 'queue-not-empty';
  settled: number;
  failed: number;
}

/**
 * Settles every hold expired more than the grace ago, unless the settle queue has messages.
 * @param nowMs epoch ms (tests move it).
 */
export async function sweepOrphanedHolds(nowMs = Date.now()): Promise<SweepResult> {
  const all = await listPendingHolds();
  const holds = all.filter((h) => h.holdExpiresAt < nowMs - billingConfig().sweepGraceMs);
  recordPendingHolds({ pending: all.length, overdue: holds.length });
  const pending = await pendingSettleMessages();
  if (pending > 0) {
    logger.info('orphan sweep skipped: settle queue not empty', { pending, overdueHolds: holds.length });
    return { skipped: 'queue-not-empty', settled: 0, failed: 0 };
  }
  let settled = 0;
  let failed = 0;
  for (const hold of holds) {
    try {
      const r = await settleHold(hold, orphanOutcome(hold));
      if (!r.alreadySettled) {
        settled++;
        logger.warn('orphaned hold settled', { requestId: hold.requestId, accountId: hold.accountId, costNanoUsd: r.costNanoUsd, freeTokensUsed: r.freeTokensUsed });
      }
    } catch (err) {
      failed++;
      logger.error('orphaned hold could not be settled', { requestId: hold.requestId, error: err as Error });
    }
  }
  return { settled, failed };
}

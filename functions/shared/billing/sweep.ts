/**
 * The orphan sweep: holds whose function died (no settle, no queued message) are settled from their
 * inline record on the account item (`holds.<requestId>`, hold-record.ts) — our prompt estimate,
 * completion unknown = 0, `usageEstimated: true`, status `orphaned` — once they are past their expiry
 * plus a grace (HOLD_SWEEP_GRACE_MS, default 2 min), and only while the settle queue is empty, so a
 * queued exact settle is never pre-empted. Idempotent on the request id like every settle.
 *
 * Finding them: a paginated, eventually consistent Scan of the accounts table (projection `accountId`
 * + `holds`, filter: items with a non-empty `holds` map). No index is kept for holds in flight, so a
 * request writes no index item (the hold is 1 WRU, the settle 4). A Scan is billed by the data read,
 * not by what the filter keeps: 1 RRU per 8 KB (eventually consistent, 4 KB units halved) of every
 * item. 100,000 accounts of ~1 KB read ≈ 12,500 RRU ≈ $0.0016 per run at $0.125 per million RRU,
 * ≈ $13.50 a month at one run every 5 minutes (HOLD_SWEEP_INTERVAL_MINUTES, config/stack-contract.ts).
 * Orphan bound: a hold is settled at most its expiry (the request function's timeout: chat 300 s,
 * embeddings 30 s) + grace + one sweep interval after its request started: 5 + 2 + 5 = 12 min with
 * the defaults, while the settle queue is empty.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { logger } from '../observability/logger';
import { recordPendingHolds } from '../observability/metrics';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { billingConfig } from './billing-config';
import { queryAccountKeys } from '../accounts/key-list';
import { decodeInlineHold, HOLDS_MAP, recordOfInline, type HoldRecord, type InlineHold } from './hold-record';
import { settleHold, type SettleOutcome } from './settle';
import { pendingSettleMessages } from './settle-queue';

/**
 * Holds in flight, from every account item's inline records; only those expired before
 * `expiredBefore` (epoch ms) when given. One eventually consistent Scan of the accounts table.
 * @throws StoreUnavailableError (503).
 */
export async function listInlineHolds(expiredBefore?: number): Promise<InlineHold[]> {
  const out: InlineHold[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() =>
      documentClient().send(
        new ScanCommand({
          TableName: tableNames().accounts,
          ProjectionExpression: 'accountId, #holds',
          FilterExpression: 'size(#holds) > :zero',
          ExpressionAttributeNames: { '#holds': HOLDS_MAP },
          ExpressionAttributeValues: { ':zero': 0 },
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      const accountId = String(item.accountId);
      for (const [requestId, value] of Object.entries((item[HOLDS_MAP] ?? {}) as Record<string, unknown>)) {
        const hold = decodeInlineHold(accountId, requestId, value);
        if (hold === undefined) logger.error('malformed inline hold', { accountId, requestId });
        else if (expiredBefore === undefined || hold.holdExpiresAt < expiredBefore) out.push(hold);
      }
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return out.sort((a, b) => a.holdExpiresAt - b.holdExpiresAt);
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
  skipped?: 'queue-not-empty';
  settled: number;
  failed: number;
}

/**
 * Settles every hold expired more than the grace ago, unless the settle queue has messages.
 * @param nowMs epoch ms (tests move it).
 */
export async function sweepOrphanedHolds(nowMs = Date.now()): Promise<SweepResult> {
  const all = await listInlineHolds();
  const overdue = all.filter((h) => h.holdExpiresAt < nowMs - billingConfig().sweepGraceMs);
  recordPendingHolds({ pending: all.length, overdue: overdue.length });
  const pending = await pendingSettleMessages();
  if (pending > 0) {
    logger.info('orphan sweep skipped: settle queue not empty', { pending, overdueHolds: overdue.length });
    return { skipped: 'queue-not-empty', settled: 0, failed: 0 };
  }
  const holds = overdue.length === 0 ? [] : await recordsOf(overdue);
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

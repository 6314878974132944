/**
 * Holds placed before issue 14 (a ledger item `status: held`, indexed by the dropped `pendingHolds`
 * GSI, and no inline record on the account item) can still be in flight, or queued for settle, when
 * this version is deployed. Their settle is the old one: ONE TransactWriteItems that turns the held
 * ledger item into the entry (or deletes it, for a cancel) under HOLD_WAS_LEDGER_ITEM and releases the
 * hold on the account item (without the inline condition). settle.ts switches to it when it meets a
 * held ledger item. Those whose function died before the upgrade are no longer found by the sweep:
 * the admin CLI's `holds list|settle --legacy` finds them ({@link listLegacyHolds}, a ledger Scan) and
 * settles them the same way; run it once after the upgrade.
 */
import { ScanCommand } from '../store/commands';
import { HOLD_WAS_LEDGER_ITEM } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import type { TransactItems } from '../store/transact-write';
import { holdRecordSchema, type HoldRecord } from './hold-record';
import type { Charge } from '../money/price';
import type { SettleOutcome } from './settle';
import { UpdateBuilder } from '../store/update-builder';

/** The old settle's items: [ledger Update or Delete, account Update] (`account` built by the caller). */
export function legacySettleTransaction(hold: HoldRecord, outcome: SettleOutcome, charge: Charge, account: ReturnType<UpdateBuilder['build']>): TransactItems {
  const tables = tableNames();
  const key = { accountId: hold.accountId, requestId: hold.requestId };
  const pending = { ConditionExpression: HOLD_WAS_LEDGER_ITEM, ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':held': 'held' }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
  let ledger: TransactItems[number];
  if (outcome.kind === 'cancel') {
    ledger = { Delete: { TableName: tables.ledger, Key: key, ...pending } };
  } else {
    const b = new UpdateBuilder();
    const fields: Record<string, unknown> = { ...outcome.entry, byok: outcome.entry.byok === true, freeTokensUsed: charge.freeTokensUsed, costNanoUsd: charge.costNanoUsd, settledAt: new Date().toISOString() };
    for (const [k, v] of Object.entries(fields)) b.set(`${b.name(k)} = ${b.value(v)}`);
    b.remove(b.name('holdBucket'));
    b.remove(b.name('holdExpiresAt'));
    b.when(`${b.name('status')} = ${b.value('held')}`);
    ledger = { Update: { TableName: tables.ledger, Key: key, ...b.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
  }
  return [ledger, { Update: { TableName: tables.accounts, Key: { accountId: hold.accountId }, ...account, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }];
}

/**
 * Holds placed before issue 14 still unsettled: held ledger items, found by a Scan of the whole ledger
 * (read units by ledger size: for the admin CLI once after the upgrade, `holds list|settle --legacy`,
 * never on a schedule). Expired before `expiredBefore` (epoch ms) when given.
 * @throws StoreUnavailableError (503).
 */
export async function listLegacyHolds(expiredBefore?: number): Promise<HoldRecord[]> {
  const out: HoldRecord[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() =>
      documentClient().send(
        new ScanCommand({ TableName: tableNames().ledger, FilterExpression: '#status = :held', ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':held': 'held' }, ExclusiveStartKey: startKey }),
      ),
    );
    for (const raw of page.Items ?? []) {
      const parsed = holdRecordSchema.safeParse(raw);
      if (parsed.success && (expiredBefore === undefined || parsed.data.holdExpiresAt < expiredBefore)) out.push(parsed.data);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return out;
}

/**
 * Settling a hold (DATA-MODEL §4): ONE TransactWriteItems turns the held ledger item into the ledger
 * entry (condition `status = held`: idempotent on the request id) and, on the same account item,
 * replaces the hold by the actual cost — free tokens used ≤ the free tokens held, the rest credit —
 * releasing the remainder, the concurrency slots and the key's allowance. A cancel (the request got
 * no answer) deletes the held item and releases everything instead.
 *
 * Exact billing: when the upstream counted more prompt tokens than our margin reserved, the actual
 * cost is still charged (available credit may then dip below zero by that difference) and the excess
 * is logged (`hold exceeded`).
 */
import { HOLD_IS_PENDING } from '../store/conditions';
import { tableNames } from '../store/tables';
import { transactWrite, type TransactItems } from '../store/transact-write';
import { isTransactionConflict, backoffDelayMs } from '../store/transaction-retry';
import { logger } from '../observability/logger';
import { updateView, unmarshallItem } from './account-state';
import { cancellationReasons } from './cancellation';
import { keyEntryId, type HoldRecord } from './hold-record';
import { computeCharge, type Charge } from './price';
import { UpdateBuilder } from './update-builder';
import { sleep } from '../retry/sleep';

/** Positions of the items in {@link settleTransaction} (cancellation reasons come in this order). */
const SETTLE_ITEM = { ledgerEntry: 0, account: 1 } as const;

/** How a request ended, for its ledger entry. `orphaned`: settled by the sweep from the hold alone. */
export type SettledStatus = 'complete' | 'partial' | 'aborted' | 'orphaned';

/** What the ledger entry records about an answered request. Tokens; prices µUSD per 1M tokens. */
export interface UsageEntry {
  publicModel: string;
  servedModel: string;
  provider: string;
  promptTokens: number;
  completionTokens: number;
  inputPrice: number;
  outputPrice: number;
  usageEstimated: boolean;
  fallbackPath: string[];
  status: SettledStatus;
  /** Served with the account's own provider key (BYOK): the prices are the platform fee alone. */
  byok?: boolean;
}

/** A settle: bill the usage, or cancel the hold (no answer was produced). */
export type SettleOutcome = { kind: 'bill'; entry: UsageEntry } | { kind: 'cancel' };

/** The result of {@link settleHold}. */
export interface SettleResult {
  /** The hold was already settled or cancelled (or never landed): nothing was written now. */
  alreadySettled: boolean;
  freeTokensUsed: number;
  costNanoUsd: number;
}

/** The charge of a usage against its hold: free tokens only from those held, prompt first. */
export function chargeFor(hold: Pick<HoldRecord, 'holdFreeTokens'>, entry: Pick<UsageEntry, 'promptTokens' | 'completionTokens' | 'inputPrice' | 'outputPrice'>): Charge {
  return computeCharge({ ...entry, freeTokensAvailable: hold.holdFreeTokens });
}


/**
 * Settles (or cancels) one hold, retrying transaction conflicts up to `maxAttempts`.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable; the SDK's error otherwise.
 */
export async function settleHold(hold: HoldRecord, outcome: SettleOutcome, maxAttempts = 30): Promise<SettleResult> {
  const charge = outcome.kind === 'bill' ? chargeFor(hold, outcome.entry) : { freeTokensUsed: 0, costNanoUsd: 0, freePromptTokens: 0, freeCompletionTokens: 0 };
  let withKey = true;
  for (let attempt = 1; ; attempt++) {
    try {
      await transactWrite(settleTransaction(hold, outcome, charge, withKey), { retryConflicts: false });
      updateView(hold.accountId, (s) => {
        s.freeTokens += hold.holdFreeTokens - charge.freeTokensUsed;
        s.creditNanoUsd += hold.holdNanoUsd - charge.costNanoUsd;
        s.heldNanoUsd -= hold.holdNanoUsd;
        if (hold.accountSlot && s.inflight !== undefined) s.inflight -= 1;
        const key = s.keys?.[keyEntryId(hold.keyHash)];
        if (key) {
          key.heldNanoUsd -= hold.holdNanoUsd;
          if (hold.keyLimited && key.leftNanoUsd !== undefined) key.leftNanoUsd += hold.holdNanoUsd - charge.costNanoUsd;
          if (hold.keySlot && key.inflight !== undefined) key.inflight -= 1;
        }
      });
      if (charge.costNanoUsd > hold.holdNanoUsd || charge.freeTokensUsed > hold.holdFreeTokens) {
        logger.warn('hold exceeded', { requestId: hold.requestId, heldNanoUsd: hold.holdNanoUsd, costNanoUsd: charge.costNanoUsd, promptTokensHeld: hold.promptTokensHeld });
      }
      return { alreadySettled: false, freeTokensUsed: charge.freeTokensUsed, costNanoUsd: charge.costNanoUsd };
    } catch (err) {
      const reasons = cancellationReasons(err);
      const ledgerReason = reasons?.[SETTLE_ITEM.ledgerEntry];
      if (ledgerReason?.code === 'ConditionalCheckFailed') {
        const old = unmarshallItem(ledgerReason.item);
        return { alreadySettled: true, freeTokensUsed: Number(old?.freeTokensUsed ?? 0), costNanoUsd: Number(old?.costNanoUsd ?? 0) };
      }
      if (reasons?.[SETTLE_ITEM.account]?.code === 'ConditionalCheckFailed' && withKey) {
        withKey = false; // the key was deleted while the request ran: settle the account alone
        continue;
      }
      if (!isTransactionConflict(err) || attempt >= maxAttempts) throw err;
      await sleep(backoffDelayMs(attempt, { maxDelayMs: 250 }));
    }
  }
}

function settleTransaction(hold: HoldRecord, outcome: SettleOutcome, charge: Charge, withKey: boolean): TransactItems {
  const tables = tableNames();
  const ledgerKey = { accountId: hold.accountId, requestId: hold.requestId };
  const pending = { ConditionExpression: HOLD_IS_PENDING, ExpressionAttributeNames: { '#status': 'status' }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
  const ledger =
    outcome.kind === 'cancel'
      ? { Delete: { TableName: tables.ledger, Key: ledgerKey, ...pending, ExpressionAttributeValues: { ':held': 'held' } } }
      : { Update: { TableName: tables.ledger, Key: ledgerKey, ...ledgerEntryUpdate(outcome.entry, charge) } };
  return [ledger, { Update: { TableName: tables.accounts, Key: { accountId: hold.accountId }, ...accountSettleUpdate(hold, charge, withKey).build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }];
}

function ledgerEntryUpdate(entry: UsageEntry, charge: Charge) {
  const b = new UpdateBuilder();
  const fields: Record<string, unknown> = {
    ...entry,
    status: entry.status,
    byok: entry.byok === true,
    freeTokensUsed: charge.freeTokensUsed,
    costNanoUsd: charge.costNanoUsd,
    settledAt: new Date().toISOString(),
  };
  for (const [k, v] of Object.entries(fields)) b.set(`${b.name(k)} = ${b.value(v)}`);
  b.remove(b.name('holdBucket'));
  b.remove(b.name('holdExpiresAt'));
  b.when(`${b.name('status')} = ${b.value('held')}`);
  return { ...b.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
}

function accountSettleUpdate(hold: HoldRecord, charge: Charge, withKey: boolean): UpdateBuilder {
  const b = new UpdateBuilder();
  b.add('freeTokens', hold.holdFreeTokens - charge.freeTokensUsed);
  b.add('heldFreeTokens', -hold.holdFreeTokens);
  b.add('creditNanoUsd', hold.holdNanoUsd - charge.costNanoUsd);
  b.add('heldNanoUsd', -hold.holdNanoUsd);
  b.add('usedNanoUsd', charge.costNanoUsd);
  b.add('usedFreeTokens', charge.freeTokensUsed);
  if (hold.accountSlot) b.add(b.name('inflight'), -1);
  if (!withKey) return b;
  const h16 = keyEntryId(hold.keyHash);
  const key = (attr: string) => b.path('keys', h16, attr);
  b.when(`attribute_exists(${b.path('keys', h16)})`);
  b.add(key('heldNanoUsd'), -hold.holdNanoUsd);
  b.add(key('usedNanoUsd'), charge.costNanoUsd);
  if (hold.keyLimited) b.add(key('leftNanoUsd'), hold.holdNanoUsd - charge.costNanoUsd);
  if (hold.keySlot) b.add(key('inflight'), -1);
  b.set(`${key('lastUsedAt')} = ${b.value(new Date().toISOString())}`);
  return b;
}

/**
 * Settling a request: the ledger entry and the account debit are written in ONE TransactWriteItems,
 * idempotent on the request id, so the sum of ledger costs always equals the credit spent and a replay
 * never charges twice (DynamoDB Developer Guide, "Amazon DynamoDB Transactions").
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ACCOUNT_EXISTS_AND_HAS_FREE_TOKENS, LEDGER_ENTRY_IS_NEW } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { backoffDelayMs, cancellationCodes, isTransactionConflict } from '../store/transaction-retry';
import { AccountNotFoundError } from '../accounts/account-errors';
import { KEYS_MAP, keyStateId } from '../accounts/key-state';
import { isMissingDocumentPath } from '../accounts/keys-map';
import { applyDebit, cachedBalance, readBalance, type CachedBalance } from './balance-cache';
import { ledgerItemSchema, LedgerWriteError, type LedgerEntryInput, type LedgerItem } from './ledger-entry';
import { computeCharge } from './price';

export { newRequestId } from './request-id';
export { usageSummary, type UsageSummary, type UsageTotals } from './usage-summary';
export { LedgerWriteError, type LedgerEntryInput, type LedgerStatus } from './ledger-entry';

/** The outcome of {@link settle}. */
export interface SettleResult {
  /** True when this request id was already in the ledger: nothing was written or charged now. */
  alreadySettled: boolean;
  /** Free tokens consumed by the entry. */
  freeTokensUsed: number;
  /** Credit charged by the entry, nano-USD. */
  costNanoUsd: number;
}

/** Attempts per settle: transaction conflicts on the hot account item, and free-token re-reads, share it. */
const MAX_SETTLE_ATTEMPTS = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Bills one finished request. Free tokens pay first (prompt before completion), the rest is charged in
 * nano-USD by price.ts's rounding rule. The free split uses this container's last-known balance; if
 * the store holds fewer free tokens (the `freeTokens >= :free` condition fails) it re-reads the account
 * and recomputes. Credit may go below zero (see admit.ts). Retries are bounded.
 * @throws LedgerWriteError carrying the full entry when the entry cannot be written (store unavailable,
 *         retries exhausted, account missing, invalid numbers); log it for replay.
 */
export async function settle(entry: LedgerEntryInput): Promise<SettleResult> {
  try {
    return await settleOnce(entry);
  } catch (err) {
    throw err instanceof LedgerWriteError ? err : new LedgerWriteError(entry, err);
  }
}

async function settleOnce(entry: LedgerEntryInput): Promise<SettleResult> {
  const tables = tableNames();
  let balance = cachedBalance(entry.accountId);
  // Free tokens only ever decrease, so a store read can only be stale-high (caught by the condition);
  // a locally debited value may be low, which would charge credit where free tokens remain.
  if (!balance || (!balance.freeTokensExact && balance.freeTokens < entry.promptTokens + entry.completionTokens)) {
    balance = await mustReadBalance(entry.accountId);
  }
  let lastError: unknown;
  // [issue 11] The key's lifetime usage and last use on the account's `keys.<h16>` entry, in the same
  // transaction; dropped for a key whose entry is gone (deleted while this request ran, or a key older
  // than the per-key map). Issue 10's settle owns this entry; this is the minimal form until it lands.
  let keyUsage = entry.keyHash !== undefined;
  for (let attempt = 1; attempt <= MAX_SETTLE_ATTEMPTS; attempt++) {
    const charge = computeCharge({ ...entry, freeTokensAvailable: balance.freeTokens });
    const item: LedgerItem = {
      ...entry,
      status: entry.status ?? 'complete',
      freeTokensUsed: charge.freeTokensUsed,
      costNanoUsd: charge.costNanoUsd,
      createdAt: new Date().toISOString(),
    };
    try {
      await transactWrite(
        [
          { Put: { TableName: tables.ledger, Item: item, ConditionExpression: LEDGER_ENTRY_IS_NEW } },
          {
            Update: {
              TableName: tables.accounts,
              Key: { accountId: entry.accountId },
              ConditionExpression: ACCOUNT_EXISTS_AND_HAS_FREE_TOKENS,
              ...(keyUsage && entry.keyHash !== undefined
                ? {
                    UpdateExpression: 'SET freeTokens = freeTokens - :free, creditNanoUsd = creditNanoUsd - :cost, #keys.#h.lastUsedAt = :at ADD #keys.#h.usedNanoUsd :cost',
                    ExpressionAttributeNames: { '#keys': KEYS_MAP, '#h': keyStateId(entry.keyHash) },
                    ExpressionAttributeValues: { ':free': charge.freeTokensUsed, ':cost': charge.costNanoUsd, ':at': item.createdAt },
                  }
                : {
                    UpdateExpression: 'SET freeTokens = freeTokens - :free, creditNanoUsd = creditNanoUsd - :cost',
                    ExpressionAttributeValues: { ':free': charge.freeTokensUsed, ':cost': charge.costNanoUsd },
                  }),
            },
          },
        ],
        { retryConflicts: false }, // this loop retries conflicts itself, sharing the budget with free-token re-reads
      );
      applyDebit(entry.accountId, charge);
      return { alreadySettled: false, freeTokensUsed: charge.freeTokensUsed, costNanoUsd: charge.costNanoUsd };
    } catch (err) {
      lastError = err;
      if (keyUsage && isMissingDocumentPath(err)) {
        keyUsage = false;
        continue;
      }
      const codes = cancellationCodes(err);
      if (codes?.[0] === 'ConditionalCheckFailed') return replayResult(entry);
      if (codes?.[1] === 'ConditionalCheckFailed') {
        balance = await mustReadBalance(entry.accountId); // fewer free tokens than we thought (or no account)
        continue;
      }
      if (!isTransactionConflict(err)) throw err;
      await sleep(backoffDelayMs(attempt));
    }
  }
  throw new LedgerWriteError(entry, lastError);
}

async function mustReadBalance(accountId: string): Promise<CachedBalance> {
  const balance = await readBalance(accountId, { consistent: true });
  if (!balance) throw new AccountNotFoundError(accountId);
  return balance;
}

/** The charge of an entry already in the ledger (the first settle's numbers, not this replay's). */
async function replayResult(entry: LedgerEntryInput): Promise<SettleResult> {
  const out = await storeCall(() =>
    documentClient().send(
      new GetCommand({
        TableName: tableNames().ledger,
        Key: { accountId: entry.accountId, requestId: entry.requestId },
        ConsistentRead: true,
      }),
    ),
  );
  const existing = ledgerItemSchema.parse(out.Item);
  return { alreadySettled: true, freeTokensUsed: existing.freeTokensUsed, costNanoUsd: existing.costNanoUsd };
}

/**
 * Reading an account's ledger for the account API (credits, month usage, activity): every page of a
 * Query, strongly consistent (a user checking right after a request sees it), in time order, from a
 * time onwards (the request id is time-ordered: request-id.ts). Items still `held` (issue 10's holds,
 * not yet settled) are skipped: they are reservations, not charges.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { ledgerItemSchema, type LedgerItem } from './ledger-entry';
import { requestIdFloor } from './request-id';

/**
 * Calls `visit` for each settled ledger entry of `accountId` made at or after `sinceMs` (epoch ms; all
 * when undefined), oldest first.
 * @throws UpstreamUnavailableError (503).
 */
export async function forEachLedgerEntry(accountId: string, sinceMs: number | undefined, visit: (e: LedgerItem) => void): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() =>
      documentClient().send(
        new QueryCommand({
          TableName: tableNames().ledger,
          KeyConditionExpression: sinceMs === undefined ? 'accountId = :a' : 'accountId = :a AND requestId >= :from',
          ExpressionAttributeValues: { ':a': accountId, ...(sinceMs === undefined ? {} : { ':from': requestIdFloor(sinceMs) }) },
          ExclusiveStartKey: startKey,
          ConsistentRead: true,
        }),
      ),
    );
    for (const raw of page.Items ?? []) {
      if ((raw as { status?: unknown }).status === 'held') continue;
      visit(ledgerItemSchema.parse(raw));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Total charges of an account, nano-USD: all time, and since `monthStartMs`. */
export interface LedgerTotals {
  totalNanoUsd: number;
  monthNanoUsd: number;
}

/**
 * Sums the account's charges (one pass over its ledger).
 * @param monthStartMs epoch ms of the current month's start (UTC).
 * @throws UpstreamUnavailableError (503).
 */
export async function ledgerTotals(accountId: string, monthStartMs: number): Promise<LedgerTotals> {
  const totals: LedgerTotals = { totalNanoUsd: 0, monthNanoUsd: 0 };
  await forEachLedgerEntry(accountId, undefined, (e) => {
    totals.totalNanoUsd += e.costNanoUsd;
    if (Date.parse(e.createdAt) >= monthStartMs) totals.monthNanoUsd += e.costNanoUsd;
  });
  return totals;
}

/** Epoch ms of the first instant of `now`'s month, UTC. */
export function monthStartMs(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}

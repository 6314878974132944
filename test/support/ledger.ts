import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { vi } from 'vitest';
import type { Account } from '../../functions/shared/accounts/account-store';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';

/** Time between two reads of {@link pollLedgerEntry} (`vi.waitFor`'s interval, ms). */
const POLL_MS = 30;
/** What {@link pollLedgerEntry}'s look throws while the entry is missing or still held. */
const NOT_YET = 'no settled entry yet';

/**
 * The settled ledger entry of one request, read from this container's ledger table (test/support/tables.ts
 * or the gateway's env). The hold is written before the call and settled after the response has gone
 * out, so the entry is awaited (`vi.waitFor`) until it is no longer `held`, for `tries` × {@link POLL_MS}
 * ms (100 tries: 3 s).
 * @returns the item, or undefined when no settled entry appeared (a request that must not be billed).
 */
export async function pollLedgerEntry(accountId: string, requestId: string | null, tries = 100): Promise<Record<string, unknown> | undefined> {
  return vi
    .waitFor(
      async () => {
        const out = await documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId, requestId } }));
        if (!out.Item || out.Item.status === 'held') throw new Error(NOT_YET);
        return out.Item;
      },
      { timeout: tries * POLL_MS, interval: POLL_MS },
    )
    .catch((err: unknown) => {
      if (err instanceof Error && err.message === NOT_YET) return undefined; // a store failure still fails the test
      throw err;
    });
}

/**
 * Resolves once the account holds nothing (`heldNanoUsd` and `heldFreeTokens` both 0 on a consistent
 * read): every settle of its requests has landed. Unlike `holdsReturned` (settle-queue.ts) it returns no
 * credit lease itself, so an account with a live lease keeps it waiting. Polled with `vi.waitFor`.
 * @returns the account as `getAccount` reads it once nothing is held.
 * @throws Error when a hold stays on the account for `timeout` ms.
 */
export async function untilSettled(accountId: string, { timeout = 15_000, interval = 50 } = {}): Promise<Account> {
  const { getAccount } = await import('../../functions/shared/accounts/account-store');
  return vi.waitFor(
    async () => {
      const a = await getAccount(accountId, { consistent: true });
      if (a === undefined || a.heldNanoUsd !== 0 || a.heldFreeTokens !== 0) throw new Error(`holds never settled on ${accountId}`);
      return a;
    },
    { timeout, interval },
  );
}

/** One stored item, as DynamoDB holds it (numbers as numbers). */
export type StoredItem = Record<string, any>;

/**
 * Every ledger entry of one account (holds, settled requests, credits, refunds, lease items), read with
 * consistent reads and followed through every page (a 1 MB page holds about 2,000 entries).
 * @returns the items in sort-key order; `[]` for an account with no entries.
 */
export async function ledgerEntries(accountId: string): Promise<StoredItem[]> {
  const items: StoredItem[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new QueryCommand({
        TableName: tableNames().ledger,
        KeyConditionExpression: 'accountId = :a',
        ExpressionAttributeValues: { ':a': accountId },
        ConsistentRead: true,
        ExclusiveStartKey,
      }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/**
 * The raw account item (every attribute, inline holds and leases included), read consistently.
 * @throws Error when the account does not exist.
 */
export async function accountItem(accountId: string): Promise<StoredItem> {
  const out = await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }));
  if (out.Item === undefined) throw new Error(`no account item ${accountId}`);
  return out.Item;
}

/** The sum of `costNanoUsd` over ledger entries (nano-USD; a credit is negative). */
export const costSum = (items: StoredItem[]): number => items.reduce((n, i) => n + Number(i.costNanoUsd ?? 0), 0);

/** Σ payments − Σ request costs over ledger entries (nano-USD): what the entries added to the balance. */
export const netSum = (items: StoredItem[]): number =>
  items.reduce((n, i) => n + (typeof i.amountNanoUsd === 'number' ? i.amountNanoUsd : 0) - (typeof i.costNanoUsd === 'number' ? i.costNanoUsd : 0), 0);

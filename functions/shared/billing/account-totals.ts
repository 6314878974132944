/**
 * An account's balances as readers show them (the account API, key info, the admin CLI): the root item
 * plus, for an account with fund shards (DATA-MODEL §5), every other shard item, summed. Money moves
 * only between an account's items, so the sums are exact at any instant each item was read.
 */
import { GetCommand } from '../store/commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { shardPks } from '../accounts/key-state';

/** Sums over the account's items. Tokens and nano-USD. */
export interface AccountTotals {
  /** Free tokens available (not held). */
  freeTokens: number;
  heldFreeTokens: number;
  /** Credit available (not held). */
  creditNanoUsd: number;
  heldNanoUsd: number;
  /** Lifetime credit spent (Σ ledger costs: every settle ADDs it in its own transaction). */
  usedNanoUsd: number;
  usedFreeTokens: number;
}

/** The root's counters as read by the caller (an account item parsed by account-store.ts). */
export interface RootCounters extends AccountTotals {
  accountId: string;
  shards: number;
}

const FIELDS: ReadonlyArray<keyof AccountTotals> = ['freeTokens', 'heldFreeTokens', 'creditNanoUsd', 'heldNanoUsd', 'usedNanoUsd', 'usedFreeTokens'];

/**
 * The account's totals: the root's counters, plus the other shards' (read strongly consistent, in
 * parallel, projected to the counters) when it has more than one.
 * @throws StoreUnavailableError (503).
 */
export async function accountTotals(root: RootCounters): Promise<AccountTotals> {
  const totals = Object.fromEntries(FIELDS.map((f) => [f, root[f] ?? 0])) as unknown as AccountTotals;
  if (root.shards <= 1) return totals;
  const others = await Promise.all(
    shardPks(root.accountId, root.shards)
      .slice(1)
      .map((pk) =>
        storeCall(() =>
          documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId: pk }, ProjectionExpression: FIELDS.join(', '), ConsistentRead: true })),
        ),
      ),
  );
  for (const out of others) for (const f of FIELDS) totals[f] += typeof out.Item?.[f] === 'number' ? (out.Item[f] as number) : 0;
  return totals;
}

/**
 * Fund shards for hot accounts (DATA-MODEL §5). One account item takes about 3 WCU per request (the
 * hold, a single write of a ≤ 1 KB item: 1 WCU; the settle, a transactional write: 2 WCU) and DynamoDB
 * serves at most 1,000 WCU/s per partition, so a single item carries ~330 requests/s. An account with `shards = S` spreads
 * its funds over S items — `accountId` (shard 0, the bank, where top-ups land) and `accountId#1…#S-1`
 * — and each request holds on one picked at random, so S shards carry ~S × 330 requests/s (S = 4 is
 * ample for 1,000/s). A shard short of funds borrows from the bank, then from every shard, in one
 * transaction each; money only moves between items, so Σ over shards of available + held, plus Σ of
 * the ledger's costs, always equals what was granted and purchased. Rate limits are split 1/S per
 * shard. Keys with a spend limit are served by shard 0 only (their allowance is not split).
 */
import { InvalidRequestError } from '../errors/gateway-errors';
import { transactWrite, type TransactItems } from '../store/transact-write';
import { shardKeyState } from '../accounts/keys/key-account-entry';
import { shardPk } from '../accounts/keys/key-account-entry';
import { ACCOUNT_KEYS_UNCHANGED } from '../store/conditions';
import { readState, updateView, type ShardState } from './account-state';
import type { HoldDemand } from './hold-plan';
import { computeCharge } from '../money/price';
import { accountPutItem, accountUpdateItem } from '../store/account-item';

/** Largest number of shards an account may have (a gather transaction touches every shard: ≤ 100 items). */
export const MAX_SHARDS = 32;

/**
 * The shard a request holds on: random among S; shard 0 when S = 1, the key has a spend limit, or the
 * bank is below zero (a refund or dispute took back credit already spent: the bank gathers every
 * shard's funds against the debt, then serves the request or refuses it with the debt's 402, hold-plan.ts).
 */
export function pickShard(root: ShardState, h16?: string): number {
  if (root.shards <= 1 || root.creditNanoUsd < 0) return 0;
  if (h16 !== undefined && root.keys?.[h16]?.limitNanoUsd !== undefined) return 0;
  return Math.floor(Math.random() * root.shards);
}

/**
 * Moves funds to shard `k` so it can hold `demand`: from the bank first (a share of what it has, at
 * least what is missing), else everything every other shard has. A bank below zero lends nothing: every
 * shard's funds go to the bank instead (its debt is never moved to, nor hidden by, a shard). Returns
 * shard k's state after.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function refillShard(accountId: string, k: number, demand: HoldDemand): Promise<ShardState> {
  const root = await readState(accountId, { consistent: true });
  if (root.creditNanoUsd < 0) {
    // A bank in debt: every shard's funds go to the bank against it, none to this shard (the hold moves to the bank).
    await gatherInto(accountId, root.shards, 0);
    return readState(shardPk(accountId, k), { consistent: true });
  }
  const target = await readState(shardPk(accountId, k), { consistent: true });
  const need = computeCharge({
    promptTokens: demand.promptTokens,
    completionTokens: demand.outputTokens,
    freeTokensAvailable: 0,
    inputPrice: demand.inputPrice,
    outputPrice: demand.outputPrice,
  });
  const tokensNeeded = demand.promptTokens + demand.outputTokens;
  const credit = Math.min(root.creditNanoUsd, Math.max(need.costNanoUsd, Math.floor(root.creditNanoUsd / root.shards)));
  const free = Math.min(root.freeTokens, Math.max(tokensNeeded, Math.floor(root.freeTokens / root.shards)));
  const enough = target.creditNanoUsd + credit >= need.costNanoUsd || target.freeTokens + free >= tokensNeeded;
  if (enough && (credit > 0 || free > 0)) {
    await move([{ pk: accountId, credit, free }], shardPk(accountId, k));
  } else {
    await gatherInto(accountId, root.shards, k);
  }
  return readState(shardPk(accountId, k), { consistent: true });
}

/** Moves everything every other shard has available into shard `k` (conflicts retried; a changed source cancels). */
export async function gatherInto(accountId: string, shards: number, k: number): Promise<void> {
  const sources: Array<{ pk: string; credit: number; free: number }> = [];
  for (let j = 0; j < shards; j++) {
    if (j === k) continue;
    const s = await readState(shardPk(accountId, j), { consistent: true });
    if (s.creditNanoUsd > 0 || s.freeTokens > 0)
      sources.push({ pk: shardPk(accountId, j), credit: Math.max(0, s.creditNanoUsd), free: Math.max(0, s.freeTokens) });
  }
  if (sources.length > 0) await move(sources, shardPk(accountId, k));
}

/**
 * One transaction: each source gives (credit, free) under `>=` conditions, the destination receives
 * the sum. A source that changed meanwhile cancels the move (nothing moves); the caller plans again.
 */
async function move(sources: Array<{ pk: string; credit: number; free: number }>, dest: string): Promise<void> {
  const items: TransactItems = sources.map((s) =>
    accountUpdateItem(s.pk, {
      UpdateExpression: 'SET creditNanoUsd = creditNanoUsd - :c, freeTokens = freeTokens - :f',
      ConditionExpression: 'creditNanoUsd >= :c AND freeTokens >= :f',
      ExpressionAttributeValues: { ':c': s.credit, ':f': s.free },
    }),
  );
  const credit = sources.reduce((a, s) => a + s.credit, 0);
  const free = sources.reduce((a, s) => a + s.free, 0);
  items.push(
    accountUpdateItem(dest, {
      UpdateExpression: 'SET creditNanoUsd = creditNanoUsd + :c, freeTokens = freeTokens + :f',
      ConditionExpression: 'attribute_exists(accountId)',
      ExpressionAttributeValues: { ':c': credit, ':f': free },
    }),
  );
  // Conflicts are retried (transactWrite); a source that changed below its amount cancels the move: plan again.
  await transactWrite(items).catch((err: unknown) => {
    if ((err as { name?: unknown }).name === 'TransactionCanceledException') return;
    throw err;
  });
}

/**
 * Sets an account's number of fund shards (admin CLI). Only upward: new shard items start empty (they
 * borrow from the bank on first use) with the root's keys (status, and the limit as a marker: limited
 * keys stay on shard 0). A key change meanwhile cancels it (TransactionCanceledException: run it again).
 * @throws InvalidRequestError for a count outside 1..MAX_SHARDS or below the current one;
 *   StoreUnavailableError (503).
 */
export async function setShards(accountId: string, count: number): Promise<number> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS) throw new InvalidRequestError(`shards must be 1..${MAX_SHARDS}.`);
  const root = await readState(accountId, { consistent: true });
  if (!root.exists) throw new InvalidRequestError(`No account ${accountId}.`);
  if (count < root.shards) throw new InvalidRequestError(`The account has ${root.shards} shards; shards can only be added (funds held there are in flight).`);
  if (count === root.shards) return count;
  // The new shards get every key's entry (status, and the limit as a marker: limited keys stay on the
  // root). The root's condition proves no key was created, deleted, (dis)abled or (un)limited since.
  const keys: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const unchanged: string[] = [root.keyCount === undefined ? 'attribute_not_exists(keyCount)' : ACCOUNT_KEYS_UNCHANGED];
  if (root.keyCount !== undefined) values[':keyCount'] = root.keyCount;
  Object.entries(root.keys ?? {}).forEach(([h16, k], i) => {
    keys[h16] = shardKeyState(k.status, k.limitNanoUsd);
    names[`#k${i}`] = h16;
    values[`:s${i}`] = k.status;
    if (k.limitNanoUsd === undefined) unchanged.push(`#keys.#k${i}.#status = :s${i} AND attribute_not_exists(#keys.#k${i}.limitNanoUsd)`);
    else {
      unchanged.push(`#keys.#k${i}.#status = :s${i} AND #keys.#k${i}.limitNanoUsd = :l${i}`);
      values[`:l${i}`] = k.limitNanoUsd;
    }
  });
  const items: TransactItems = [];
  for (let j = root.shards; j < count; j++) {
    items.push(
      accountPutItem({
        Item: {
          accountId: shardPk(accountId, j),
          ownerAccountId: accountId,
          shard: j,
          freeTokens: 0,
          heldFreeTokens: 0,
          creditNanoUsd: 0,
          heldNanoUsd: 0,
          usedNanoUsd: 0,
          usedFreeTokens: 0,
          inflight: 0,
          keys,
          holds: {},
        },
        ConditionExpression: 'attribute_not_exists(accountId)',
      }),
    );
  }
  const hasKeys = Object.keys(names).length > 0;
  items.push(
    accountUpdateItem(accountId, {
      UpdateExpression: 'SET shards = :n',
      ConditionExpression: `${root.shards === 1 ? '(attribute_not_exists(shards) OR shards = :one)' : 'shards = :old'} AND ${unchanged.join(' AND ')}`,
      ...(hasKeys ? { ExpressionAttributeNames: { '#keys': 'keys', '#status': 'status', ...names } } : {}),
      ExpressionAttributeValues: { ...values, ...(root.shards === 1 ? { ':n': count, ':one': 1 } : { ':n': count, ':old': root.shards }) },
    }),
  );
  await transactWrite(items);
  updateView(accountId, (s) => (s.shards = count));
  return count;
}

import { AuthenticationError } from '../errors/gateway-errors';
import { readState, type ShardState } from './account-state';
import type { HoldPlan } from './hold-plan';
import type { HoldRequest } from './hold';
import { repairKeyEntry } from '../accounts/key-state';
import { gatherInto, refillShard } from './shards';

/**
 * Where one hold stands between its plans (billing/hold.ts `placeHold`): the account item it targets,
 * what is known of that item, and the loop's counters. Only the store's own numbers (`fromStore`) may
 * refuse a hold; a container's view can only grant one.
 */
export interface HoldCursor {
  /** The fund shard held on (0 = the root item, the bank). */
  shard: number;
  /** That shard's partition key. */
  pk: string;
  /** The item's state the next plan runs on. */
  state: ShardState;
  /** True when `state` came from the store (a read or a failed condition's ALL_OLD), not the view. */
  fromStore: boolean;
  /** The key's missing entry was already made once from its key row. */
  repaired: boolean;
  /** Funds moved from the bank into this shard so far (at most 2). */
  refills: number;
  /** The bank already gathered every shard's funds. */
  gathered: boolean;
  /** Plans that counted against MAX_PLANS (a move or a re-read does not count). */
  plans: number;
  /** Transaction conflicts retried so far. */
  conflicts: number;
}

/** Re-reads the cursor's item (strongly consistent): the next plan runs on the store's own numbers. */
export async function rereadFromStore(c: HoldCursor): Promise<void> {
  c.state = await readState(c.pk, { consistent: true });
  c.fromStore = true;
}

/** Moves the hold to the root item (the bank, shard 0) and reads it from the store. */
export async function moveToRoot(c: HoldCursor, accountId: string): Promise<void> {
  c.shard = 0;
  c.pk = accountId;
  await rereadFromStore(c);
}

/**
 * A plan that was refused: finds the next plan worth making, in this order — a view that predates the
 * key (re-read), a key older than per-key state (its entry made once from the key row), a plan refused
 * on the view (re-read), and for a 402 on a sharded account: refill the shard from the bank (twice),
 * hold on the bank, gather every shard into the bank (once) (billing/shards.ts). None of these counts
 * as a failed plan.
 * @param shards the account's fund shard count (root item).
 * @returns true when the cursor moved (plan again); false when the refusal stands, decided on the store's numbers.
 * @throws AuthenticationError (401) when the key's entry is still missing after its repair (a deleted key).
 */
export async function replanAfterRefusal(c: HoldCursor, req: HoldRequest, shards: number, plan: Exclude<HoldPlan, { ok: true }>): Promise<boolean> {
  if ('missingKey' in plan) {
    // An item without the key's entry: this container's view predates the key, or (read from the
    // store) a key older than per-key state, whose entry is made from the key row, once.
    if (!c.fromStore) {
      c.plans--;
      await rereadFromStore(c);
      return true;
    }
    if (c.repaired) throw new AuthenticationError('This API key has been deleted.', 'invalid_api_key');
    c.repaired = true;
    await repairKeyEntry(c.pk, req.keyHash, c.shard);
    await rereadFromStore(c);
    return true;
  }
  if (!c.fromStore) {
    await rereadFromStore(c);
    c.plans--;
    return true;
  }
  // A fund shard short of funds borrows from the bank (shard 0), then holds on the bank itself;
  // the bank gathers every shard's funds before anything is refused (shards.ts).
  if (plan.error.status !== 402 || shards <= 1) return false;
  if (c.shard > 0 && c.refills < 2) {
    c.refills++;
    c.plans--; // moving funds is not a failed plan
    c.state = await refillShard(req.accountId, c.shard, req.demand);
    c.fromStore = true;
    return true;
  }
  if (c.shard > 0) {
    c.plans--;
    await moveToRoot(c, req.accountId);
    return true;
  }
  if (!c.gathered) {
    c.plans--;
    c.gathered = true;
    await gatherInto(req.accountId, shards, 0);
    await rereadFromStore(c);
    return true;
  }
  return false;
}

/**
 * Placing a hold before the call (DATA-MODEL §1, §4): the most a request can cost is reserved on the
 * account by ONE conditional UpdateItem (hold-plan.ts `holdUpdate`; it also keeps the hold's compact
 * inline record on the account item, `holds.<requestId>`, for the orphan sweep), which also enforces the
 * key's status and spend limit and the rate limits. The amounts are planned from this container's view
 * of the account (hold-plan.ts `planHold`); when a condition fails, the account's ALL_OLD image replaces the view and the
 * hold is planned again from the store's own numbers — so a refusal (402, 429, 401) is always decided
 * on real data, and a stale view costs one extra write, never an overdraft. A refused plan may first
 * move the hold (a re-read, a key entry repaired, funds moved between fund shards: `replanAfterRefusal`).
 */
import { AuthenticationError, StoreUnavailableError, type GatewayError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { repairKeyEntry, shardPk, withAccountMap } from '../accounts/keys/key-account-entry';
import { backoffDelayMs, isTransactionConflict } from '../store/transaction-retry';
import { config, rateLimitsFor } from '../config/env';
import { now } from '../time/clock';
import { isLeaseId } from '../http/request-id';
import { sleep } from '../retry/sleep';
import { readState, rememberState, shardStateOf, unmarshallItem, updateView, viewOf, type ShardState } from './account-state';
import { holdUpdate, planHold, type HoldDemand, type HoldPlan, type HoldSpec, type LeaseSlice, type RateGrant } from './hold-plan';
import { decodeInlineHold, HOLDS_MAP, keyEntryId, type HoldRecord } from './hold-record';
import { rateHeadersOf, type RateHeaders, type RpmBranch } from './rate-limit';
import { gatherInto, pickShard, refillShard } from './shards';
import { hasStrandedLeases, reclaimStrandedLeases } from './lease-reclaim';
import { countUnwritten, lessUnwritten } from './unwritten-holds';
import { updateAccountItem } from '../store/account-item';
import { storeRecentlyFailed } from '../store/store-errors';

/** What to hold, for whom. */
export interface HoldRequest {
  accountId: string;
  keyHash: string;
  requestId: string;
  publicModel: string;
  demand: HoldDemand;
  /** Our best prompt estimate (tokens), billed if the request is orphaned. */
  promptTokensEstimate: number;
  /** Epoch ms after which the request's own function cannot settle it any more. */
  expiresAt: number;
  /** A credit lease's ask of the rate limits (lease.ts); a request takes 1 and 1. */
  grant?: RateGrant;
  /** A lease's exact slice (hold-plan.ts {@link LeaseSlice}), instead of the demand's charge. */
  slice?: LeaseSlice;
}

/** Plans of one hold: each failed condition brings the store's numbers for one more plan. */
const MAX_PLANS = 20;
/** From this plan on, a hold may take fewer free tokens than the item has (`>=`), so racing requests progress. */
const RELAX_FREE_FROM_PLAN = 3;
/**
 * How many transaction conflicts a hold retries: DynamoDB rejects a single write to an item that a
 * transaction (a settle, a shard refill) is writing at that moment (TransactionConflictException,
 * "Transaction conflict handling"); jittered retries (≤ 500 ms each) spread them out. Past this, a
 * 503 to retry.
 */
const MAX_CONFLICTS = 30;

/**
 * When a hold condition last failed per account item (epoch ms). A failed condition means other
 * writers are racing this container's view (a refused or re-planned hold, a stale ALL_OLD possibly
 * overwriting fresher local arithmetic): for a view TTL after it, no prediction is made, so near
 * exhaustion every request holds first and a refused one never reaches an upstream.
 */
const contendedAt = new Map<string, number>();

/** The x-ratelimit-* headers of each hold this container wrote (kept off the record, which the ledger copies). */
const rateHeaders = new WeakMap<HoldRecord, RateHeaders>();

/** The request-rate headers of a hold {@link placeHold} returned (none when the limit is off). */
export function rateHeadersOfHold(record: HoldRecord): RateHeaders | undefined {
  return rateHeaders.get(record);
}

/**
 * True when this container's fresh view (younger than ACCOUNT_CACHE_TTL_MS), less its holds still
 * being written (unwritten-holds.ts: from the account's credit and free tokens and from the key's
 * spend limit), predicts the hold will be granted: the caller may then connect upstream while the
 * hold is written (nothing reaches the client before it is confirmed).
 */
export function holdPredicted(req: HoldRequest): boolean {
  const view = viewOf(req.accountId);
  const ttl = config().ACCOUNT_CACHE_TTL_MS;
  if (view === undefined || view.state.shards > 1 || storeRecentlyFailed() || now() - view.readAt > ttl) return false;
  if (now() - (contendedAt.get(req.accountId) ?? 0) < ttl) return false;
  const state = lessUnwritten(req.accountId, view.state);
  return planHold({ state, h16: keyEntryId(req.keyHash), demand: req.demand, limits: rateLimitsFor(view.state.purchasedNanoUsd), now: now() }).ok;
}

/**
 * Holds what the request may cost. Resolves with the hold's record once it is written.
 * @throws InsufficientCreditError (402) when the account (or the key's spend limit) cannot cover it;
 *   RateLimitError (429); AuthenticationError (401) for a disabled or deleted key or a deleted account;
 *   StoreUnavailableError (503) when DynamoDB is unavailable or too contended — after a write whose
 *   fate is unknown, a cancel is handed to the durable settle path (`onUnknown`).
 */
export async function placeHold(req: HoldRequest, onUnknown: (record: HoldRecord) => void): Promise<HoldRecord> {
  // The root's shard count and rate-limit tier are read again once the view is older than its TTL.
  const rootEntry = viewOf(req.accountId);
  const rootView = rootEntry !== undefined && now() - rootEntry.readAt <= config().ACCOUNT_CACHE_TTL_MS ? rootEntry.state : undefined;
  const root = rootView ?? (await readState(req.accountId));
  const shard = pickShard(root, keyEntryId(req.keyHash));
  const pk = shardPk(req.accountId, shard);
  const shardView = shard === 0 ? rootView : viewOf(pk)?.state;
  const c: HoldCursor = {
    shard,
    pk,
    state: shardView ?? (shard === 0 ? root : await readState(pk)),
    // A refusal is only ever decided on the store's own numbers, never on this container's view.
    fromStore: shardView === undefined,
    repaired: false,
    refills: 0,
    gathered: false,
    reclaimed: false,
    plans: 0,
    conflicts: 0,
  };
  while (c.plans < MAX_PLANS && c.conflicts <= MAX_CONFLICTS) {
    c.plans++;
    const limits = rateLimitsFor(root.purchasedNanoUsd);
    const shardLimits = root.shards > 1 ? { rpm: Math.ceil(limits.rpm / root.shards), concurrent: Math.ceil(limits.concurrent / root.shards) } : limits;
    if (c.shard > 0 && c.state.keys?.[keyEntryId(req.keyHash)]?.limitNanoUsd !== undefined) {
      // A key with a spend limit is served by the root, which alone keeps its allowance (shards.ts);
      // this container's view of the root predated the limit.
      c.plans--;
      await moveToRoot(c, req.accountId);
      continue;
    }
    const plan = planHold({
      state: c.state,
      h16: keyEntryId(req.keyHash),
      demand: req.demand,
      limits: shardLimits,
      now: now(),
      relaxFree: c.plans >= RELAX_FREE_FROM_PLAN,
      ...(req.grant !== undefined ? { grant: req.grant } : {}),
      ...(req.slice !== undefined ? { slice: req.slice } : {}),
    });
    if (!plan.ok) {
      if (await replanAfterRefusal(c, req, root.shards, plan)) continue;
      contendedAt.set(c.pk, now()); // a refusal: the account is at a limit, predict nothing for a while
      throw (plan as { error: GatewayError }).error; // a missing key never stands: it was re-read, repaired or refused with 401
    }
    const record = recordOf(req, c.pk, c.shard, plan.spec);
    countUnwritten(c.pk, keyEntryId(req.keyHash), plan.spec, 1);
    try {
      // UPDATED_NEW: the counters this write set, for the answer's x-ratelimit-* headers (no extra read).
      const input = { ...holdUpdate(record, plan.spec), ReturnValues: 'UPDATED_NEW' as const };
      const attributes = await withAccountMap(c.pk, HOLDS_MAP, () => updateAccountItem(record.accountId, input));
      updateView(c.pk, (s) => applyHold(s, record, plan.spec));
      const headers = rateHeadersOf(attributes, plan.spec, req.keyHash, shardLimits.rpm, now());
      if (headers !== undefined) rateHeaders.set(record, headers);
      return record;
    } catch (err) {
      const standing = await afterFailedWrite(err, c, record, onUnknown);
      if (standing !== undefined) return standing;
    } finally {
      countUnwritten(c.pk, keyEntryId(req.keyHash), plan.spec, -1);
    }
  }
  logger.warn('hold gave up after repeated conflicts', { requestId: req.requestId, accountId: req.accountId, plans: c.plans, conflicts: c.conflicts });
  throw new StoreUnavailableError('Too many concurrent requests on this account right now. Please retry.', { headers: { 'retry-after': '1' } });
}

/**
 * A hold write that failed. A failed condition brings the item's ALL_OLD image as the next plan's
 * numbers (the account is contended: no predictions for a while; racing requests back off); a
 * conflict with a transaction in flight on the item (a settle, a refill) is retried with jittered
 * backoff (≤ 500 ms).
 * @returns the hold that stands when an earlier attempt of this request landed after all (its answer
 *   was lost); undefined to plan again.
 * @throws StoreUnavailableError when the request id was already used by another hold, or when
 *   DynamoDB failed (the write may have landed: `onUnknown` releases it durably); any other error as is.
 */
async function afterFailedWrite(err: unknown, c: HoldCursor, record: HoldRecord, onUnknown: (record: HoldRecord) => void): Promise<HoldRecord | undefined> {
  if (err instanceof ConditionalCheckFailedException) {
    const old = unmarshallItem(err.Item);
    const inline = (old?.[HOLDS_MAP] as Record<string, unknown> | undefined)?.[record.requestId];
    if (inline !== undefined) {
      // Our own earlier attempt (an SDK retry of this very write) landed after all: that hold stands.
      const stood = decodeInlineHold(c.pk, record.requestId, inline);
      if (stood === undefined) throw new StoreUnavailableError('This request id was already used. Please retry.');
      return {
        ...record,
        holdFreeTokens: stood.holdFreeTokens,
        holdNanoUsd: stood.holdNanoUsd,
        keyLimited: stood.keyLimited,
        accountSlot: stood.accountSlot,
        keySlot: stood.keySlot,
      };
    }
    if (contendedAt.size > 1_000) contendedAt.clear();
    contendedAt.set(c.pk, now());
    c.state = shardStateOf(old);
    c.fromStore = true;
    if (c.state.exists) rememberState(c.pk, c.state);
    // Racing requests of the account met on the same numbers: spread the next round out.
    if (c.plans > 1) await sleep(backoffDelayMs(c.plans, { maxDelayMs: 100 }));
    return undefined;
  }
  if (isTransactionConflict(err)) {
    c.plans--; // a conflict says nothing about the plan
    c.conflicts++;
    await sleep(backoffDelayMs(c.conflicts, { maxDelayMs: 500 }));
    return undefined;
  }
  if (err instanceof StoreUnavailableError) {
    // The write may have landed: release it durably if it did (a cancel of a missing hold is a no-op).
    onUnknown(record);
  }
  throw err;
}

/**
 * Where one hold stands between its plans ({@link placeHold}): the account item it targets,
 * what is known of that item, and the loop's counters. Only the store's own numbers (`fromStore`) may
 * refuse a hold; a container's view can only grant one.
 */
interface HoldCursor {
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
  /** Stranded leases were already looked for (lease-reclaim.ts). */
  reclaimed: boolean;
  /** Plans that counted against MAX_PLANS (a move or a re-read does not count). */
  plans: number;
  /** Transaction conflicts retried so far. */
  conflicts: number;
}

/** Re-reads the cursor's item (strongly consistent): the next plan runs on the store's own numbers. */
async function rereadFromStore(c: HoldCursor): Promise<void> {
  c.state = await readState(c.pk, { consistent: true });
  c.fromStore = true;
}

/** Moves the hold to the root item (the bank, shard 0) and reads it from the store. */
async function moveToRoot(c: HoldCursor, accountId: string): Promise<void> {
  c.shard = 0;
  c.pk = accountId;
  await rereadFromStore(c);
}

/**
 * A plan that was refused: finds the next plan worth making, in this order — a view that predates the
 * key (re-read), a key older than per-key state (its entry made once from the key row), a plan refused
 * on the view (re-read), a 402 while leases of other containers are past their expiry (reconciled
 * once: lease-reclaim.ts), and for a 402 on a sharded account: refill the shard from the bank (twice),
 * hold on the bank, gather every shard into the bank (once) (shards.ts). None of these counts as a failed plan.
 * @param shards the account's fund shard count (root item).
 * @returns true when the cursor moved (plan again); false when the refusal stands, decided on the store's numbers.
 * @throws AuthenticationError (401) when the key's entry is still missing after its repair (a deleted key).
 */
async function replanAfterRefusal(c: HoldCursor, req: HoldRequest, shards: number, plan: Exclude<HoldPlan, { ok: true }>): Promise<boolean> {
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
  if (plan.error.status === 402 && !c.reclaimed && c.shard === 0 && hasStrandedLeases(c.state)) {
    // Leases other containers left past their expiry hold what is refused: reconciled, then planned again.
    c.reclaimed = true;
    if ((await reclaimStrandedLeases(req.accountId)) > 0) {
      c.plans--;
      await rereadFromStore(c);
      return true;
    }
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

function recordOf(req: HoldRequest, pk: string, shard: number, spec: HoldSpec): HoldRecord {
  return {
    ownerAccountId: req.accountId,
    accountId: pk,
    shard,
    requestId: req.requestId,
    keyHash: req.keyHash,
    holdFreeTokens: spec.freeTokens,
    holdNanoUsd: spec.nanoUsd,
    keyLimited: spec.keyLimit.kind !== 'none',
    ...(spec.keyLimit.kind !== 'none' ? { keyWindow: spec.keyLimit.window } : {}),
    accountSlot: spec.accountSlot !== undefined,
    keySlot: spec.keySlot !== undefined,
    ...(spec.slots > 1 ? { slots: spec.slots } : {}),
    ...(req.grant !== undefined ? rpmGrantOf(spec.accountRpm.kind !== 'off' ? spec.accountRpm : spec.keyRpm) : {}),
    promptTokensEstimate: req.promptTokensEstimate,
    promptTokensHeld: req.demand.promptTokens,
    maxCompletionTokens: req.demand.outputTokens,
    holdInputPrice: req.demand.inputPrice,
    holdOutputPrice: req.demand.outputPrice,
    publicModel: req.publicModel,
    createdAt: new Date().toISOString(),
    holdExpiresAt: req.expiresAt,
  };
}

/** A lease's request-rate grant on its record. */
function rpmGrantOf(branch: RpmBranch): Pick<HoldRecord, 'rpmUnits' | 'rpmWindow'> {
  return branch.kind === 'off' ? {} : { rpmUnits: branch.units, rpmWindow: branch.window };
}

/** This container's own hold, applied to its view (what the write did, as far as it is known). */
function applyHold(s: ShardState, record: HoldRecord, spec: HoldSpec): void {
  s.freeTokens -= spec.freeTokens;
  s.creditNanoUsd -= spec.nanoUsd;
  s.heldNanoUsd += spec.nanoUsd;
  if (isLeaseId(record.requestId)) s.leasedNanoUsd = (s.leasedNanoUsd ?? 0) + spec.nanoUsd;
  const key = s.keys?.[keyEntryId(record.keyHash)];
  if (spec.accountRpm.kind !== 'off') {
    s.rpmCount = spec.accountRpm.kind === 'new' ? spec.accountRpm.units : (s.rpmCount ?? 0) + spec.accountRpm.units;
    s.rpmWindow = spec.accountRpm.window;
  }
  if (spec.accountSlot !== undefined) s.inflight = (s.inflight ?? 0) + spec.slots;
  if (key === undefined) return;
  key.heldNanoUsd += spec.nanoUsd;
  if (spec.keyLimit.kind === 'same') key.leftNanoUsd = (key.leftNanoUsd ?? 0) - spec.nanoUsd;
  if (spec.keyLimit.kind === 'roll') {
    key.window = spec.keyLimit.window;
    key.leftNanoUsd = spec.keyLimit.limit - key.heldNanoUsd;
  }
  if (spec.keyRpm.kind !== 'off') {
    key.rpmCount = spec.keyRpm.kind === 'new' ? spec.keyRpm.units : (key.rpmCount ?? 0) + spec.keyRpm.units;
    key.rpmWindow = spec.keyRpm.window;
  }
  if (spec.keySlot !== undefined) key.inflight = (key.inflight ?? 0) + spec.slots;
}

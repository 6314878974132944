/**
 * Credit leases (docs/credit-leases.md; RFC 4006 credit control, 3GPP TS 32.299): this module instance
 * (a container, or one Lambda Managed Instances environment serving many invocations at once) takes a
 * slice of an account's credit — and of the key's spend limit — with ONE conditional write (the lease
 * is a hold, placed by hold.ts under the same conditions: Granted-Service-Unit), then admits that
 * account's requests against the slice in memory, with no store write before the answer. Each
 * request's bill is its own ledger entry (lease-settle.ts: Used-Service-Unit). A lease admits requests
 * for CREDIT_LEASE_VALIDITY_MS (Validity-Time), is topped up by a new lease when a quarter is left, and
 * is returned — charged the sum of its requests' bills, the rest released — when it expires, is
 * replaced, or sits unused for CREDIT_LEASE_IDLE_MS (Quota-Holding-Time). A container that dies leaves
 * its lease on the account item: the orphan sweep reconciles it from the ledger after its expiry.
 *
 * Admission is synchronous (check and reserve in one turn of the event loop), so concurrent requests
 * of one instance can never reserve more than the slice. Overdraft stays impossible: the slice left the
 * balance (and the key's allowance) before any of it is spent, and each request's bill is capped at
 * its own reservation (settle.ts `chargeFor`).
 *
 * Per request, exactly as without leases: accounts with free tokens, rate limits or fund shards, small
 * or nearly empty accounts (a slice must cover {@link MIN_REQUESTS_PER_LEASE} of the request's most),
 * and any request a lease cannot admit.
 */
import { logger } from '../observability/logger';
import { readState, viewOf, type ShardState } from './account-state';
import { config, rateLimitsFor, type Config } from '../config/env';
import { now as billingNow } from '../time/clock';
import { placeHold, type HoldRequest } from './hold';
import { keyAllowance, type HoldDemand } from './hold-plan';
import { keyEntryId, type HoldRecord } from './hold-record';
import { LEASE_ADMIT_SKEW_MS, LEASE_ID_PREFIX, returnLease } from './lease-settle';
import { computeCharge } from '../money/price';
import { newRequestId, REQUEST_ID_PREFIX } from '../http/request-id';
import { cancelUnknownHold } from './settle-durable';

/** A slice must cover at least this many of the request's most (else the account leases per request). */
const MIN_REQUESTS_PER_LEASE = 8;

/** The public model a lease's record names (an account's activity never shows it: a lease has no ledger entry). */
const LEASE_MODEL = 'credit-lease';

/** What a request asks of a lease: what it would hold (hold.ts), with its end instead of an expiry. Tokens, nano-USD, epoch ms. */
export interface LeaseAsk extends Omit<HoldRequest, 'expiresAt'> {
  /** When the request's function ends (its hold's expiry). */
  endsAt: number;
  /** The request's most (nano-USD): its reservation inside the lease. */
  costNanoUsd: number;
}

/** One lease of this instance. */
interface Lease {
  record: HoldRecord;
  slot: string;
  takenAt: number;
  validUntil: number;
  /** nano-USD of the slice not reserved by a request in flight nor spent. */
  available: number;
  /** nano-USD billed to its settled requests. */
  spent: number;
  inflight: number;
  lastUsed: number;
  state: 'open' | 'retired' | 'returned';
  timer?: NodeJS.Timeout;
}

/** A request admitted against a lease: its per-request record (a reservation inside the lease). */
export interface Admission {
  record: HoldRecord;
  lease: Lease;
}

const current = new Map<string, Lease>();
const acquiring = new Map<string, Promise<Lease | undefined>>();
/** Slots (account + key) that lease per request until the epoch ms stored here. */
const declined = new Map<string, number>();
/** Every lease not yet returned (tests drain them). */
const outstanding = new Set<Lease>();

const slotOf = (accountId: string, keyHash: string) => `${accountId}|${keyHash}`;

/** The request's most, nano-USD, with no free tokens (a lease is credit only). */
export function requestCost(demand: HoldDemand): number {
  return computeCharge({ promptTokens: demand.promptTokens, completionTokens: demand.outputTokens, freeTokensAvailable: 0, inputPrice: demand.inputPrice, outputPrice: demand.outputPrice }).costNanoUsd;
}

/**
 * The slice one lease would take from an account item (nano-USD), or undefined when the account
 * leases per request: leases off, free tokens, rate limits, fund shards, an inactive key, or a slice
 * smaller than {@link MIN_REQUESTS_PER_LEASE} of the request's most.
 */
export function leaseSlice(state: ShardState, h16: string, costNanoUsd: number, cfg: Config, now: number): number | undefined {
  if (cfg.CREDIT_LEASE_VALIDITY_MS <= 0 || !state.exists || state.shards > 1 || state.freeTokens > 0) return undefined;
  const limits = rateLimitsFor(state.purchasedNanoUsd, cfg);
  if (limits.rpm > 0 || limits.concurrent > 0) return undefined;
  const key = state.keys?.[h16];
  if (key === undefined || key.status !== 'active') return undefined;
  const available = Math.min(state.creditNanoUsd, keyAllowance(key, now));
  const slice = Math.floor((available * cfg.CREDIT_LEASE_SHARE_PERCENT) / 100);
  return slice >= MIN_REQUESTS_PER_LEASE * Math.max(1, costNanoUsd) ? slice : undefined;
}

/** Admits the request against this instance's lease of its account and key, if one can take it now. */
export function admitNow(ask: LeaseAsk): Admission | undefined {
  const lease = current.get(slotOf(ask.accountId, ask.keyHash));
  if (lease === undefined || !admits(lease, ask)) return undefined;
  lease.available -= ask.costNanoUsd;
  lease.inflight++;
  lease.lastUsed = Date.now();
  if (lease.available < lease.record.holdNanoUsd / 4) void acquire(ask); // top up before it runs out
  return { lease, record: admittedRecord(lease, ask) };
}

function admits(lease: Lease, ask: LeaseAsk): boolean {
  const arrived = Number(/^req_(\d{13})_/.exec(ask.requestId)?.[1] ?? Number.NaN);
  return lease.state === 'open' && Date.now() < lease.validUntil && ask.endsAt <= lease.record.holdExpiresAt && arrived >= lease.takenAt - LEASE_ADMIT_SKEW_MS && ask.costNanoUsd <= lease.available;
}

/**
 * Whether the request should wait for a lease (true) or hold per request at once (false): from this
 * instance's fresh view of the account when it has one, else worth a try.
 */
export function worthLeasing(ask: LeaseAsk): boolean {
  const cfg = config();
  if (cfg.CREDIT_LEASE_VALIDITY_MS <= 0 || (declined.get(slotOf(ask.accountId, ask.keyHash)) ?? 0) > Date.now()) return false;
  const view = viewOf(ask.accountId);
  if (view === undefined || Date.now() - view.readAt > cfg.ACCOUNT_CACHE_TTL_MS) return true;
  return leaseSlice(view.state, keyEntryId(ask.keyHash), ask.costNanoUsd, cfg, billingNow()) !== undefined;
}

/** Takes a lease (one in flight per account and key) and admits the request; undefined: hold per request. */
export async function admitAfterLease(ask: LeaseAsk): Promise<Admission | undefined> {
  for (let round = 0; round < 2; round++) {
    const admitted = admitNow(ask);
    if (admitted !== undefined) return admitted;
    if ((await acquire(ask)) === undefined) return undefined;
  }
  return admitNow(ask);
}

function acquire(ask: LeaseAsk): Promise<Lease | undefined> {
  const slot = slotOf(ask.accountId, ask.keyHash);
  let taking = acquiring.get(slot);
  if (taking === undefined) {
    taking = take(slot, ask)
      .catch((err: unknown) => {
        logger.warn('lease not taken; holding per request', { accountId: ask.accountId, error: err as Error });
        return undefined;
      })
      .finally(() => acquiring.delete(slot));
    acquiring.set(slot, taking);
  }
  return taking;
}

/** One lease write: the slice as a hold named `lease_…`, expiring a validity after the asking request's end. */
async function take(slot: string, ask: LeaseAsk): Promise<Lease | undefined> {
  const cfg = config();
  const view = viewOf(ask.accountId);
  const state = view !== undefined && Date.now() - view.readAt <= cfg.ACCOUNT_CACHE_TTL_MS ? view.state : await readState(ask.accountId).catch(() => undefined);
  const slice = state === undefined ? undefined : leaseSlice(state, keyEntryId(ask.keyHash), ask.costNanoUsd, cfg, billingNow());
  if (slice === undefined) return decline(slot, cfg);
  const takenAt = Date.now();
  const leaseId = LEASE_ID_PREFIX + newRequestId(takenAt).slice(REQUEST_ID_PREFIX.length);
  const demand: HoldDemand = { promptTokens: 0, outputTokens: slice, outputLimitPerChoice: slice, choices: 1, inputPrice: 0, outputPrice: 1_000 }; // 1,000 µUSD/MTok = 1 nano-USD a token
  let record: HoldRecord;
  try {
    record = await placeHold({ accountId: ask.accountId, keyHash: ask.keyHash, requestId: leaseId, publicModel: LEASE_MODEL, demand, promptTokensEstimate: 0, expiresAt: ask.endsAt + cfg.CREDIT_LEASE_VALIDITY_MS }, cancelUnknownHold);
  } catch (err) {
    logger.debug('no lease; holding per request', { accountId: ask.accountId, error: err as Error });
    return decline(slot, cfg);
  }
  if (record.holdFreeTokens > 0 || record.accountSlot || record.keySlot || record.shard > 0) {
    // The store's numbers differed from the view (free tokens, limits, shards): give it back at once.
    await returnLease(record, 0).catch(() => undefined);
    return decline(slot, cfg);
  }
  const lease: Lease = { record, slot, takenAt, validUntil: takenAt + cfg.CREDIT_LEASE_VALIDITY_MS, available: record.holdNanoUsd, spent: 0, inflight: 0, lastUsed: takenAt, state: 'open' };
  outstanding.add(lease);
  const old = current.get(slot);
  current.set(slot, lease);
  if (old !== undefined) {
    old.state = 'retired';
    void maybeReturn(old);
  }
  schedule(lease, cfg);
  return lease;
}

function decline(slot: string, cfg: Config): undefined {
  if (declined.size > 10_000) declined.clear();
  declined.set(slot, Date.now() + cfg.ACCOUNT_CACHE_TTL_MS);
  return undefined;
}

/** The per-request record of an admitted request: its most as the hold, no free tokens, no slots. */
function admittedRecord(lease: Lease, ask: LeaseAsk): HoldRecord {
  const l = lease.record;
  return {
    ownerAccountId: l.ownerAccountId,
    accountId: l.accountId,
    shard: l.shard,
    requestId: ask.requestId,
    keyHash: ask.keyHash,
    holdFreeTokens: 0,
    holdNanoUsd: ask.costNanoUsd,
    keyLimited: l.keyLimited,
    ...(l.keyWindow !== undefined ? { keyWindow: l.keyWindow } : {}),
    accountSlot: false,
    keySlot: false,
    promptTokensEstimate: ask.promptTokensEstimate,
    promptTokensHeld: ask.demand.promptTokens,
    maxCompletionTokens: ask.demand.outputTokens,
    holdInputPrice: ask.demand.inputPrice,
    holdOutputPrice: ask.demand.outputPrice,
    publicModel: ask.publicModel,
    createdAt: new Date().toISOString(),
    holdExpiresAt: l.holdExpiresAt,
    leaseId: l.requestId,
  };
}

/**
 * An admitted request ended: `costNanoUsd` billed (0 for a cancel), the rest of its reservation back in
 * the slice. Resolves once the lease is returned when this was its last request and it is spent,
 * expired or replaced. Never throws.
 */
export function releaseAdmission(a: Admission, costNanoUsd: number): Promise<void> {
  const lease = a.lease;
  const cost = Math.min(costNanoUsd, a.record.holdNanoUsd);
  lease.inflight--;
  lease.spent += cost;
  lease.available += a.record.holdNanoUsd - cost;
  lease.lastUsed = Date.now();
  return maybeReturn(lease);
}

async function maybeReturn(lease: Lease, idle = false): Promise<void> {
  if (lease.state === 'returned' || lease.inflight > 0) return;
  if (lease.state === 'open' && !idle && Date.now() < lease.validUntil) return;
  lease.state = 'returned';
  clearTimeout(lease.timer);
  if (current.get(lease.slot) === lease) current.delete(lease.slot);
  outstanding.delete(lease);
  try {
    await returnLease(lease.record, lease.spent);
  } catch (err) {
    // Left on the account item: the orphan sweep reconciles it from the ledger after its expiry.
    logger.warn('lease not returned; the sweep will reconcile it', { leaseId: lease.record.requestId, accountId: lease.record.accountId, error: err as Error });
  }
}

/** Returns the lease when it expires or sits unused (timers never keep the process alive). */
function schedule(lease: Lease, cfg: Config): void {
  clearTimeout(lease.timer);
  if (lease.state !== 'open') return;
  // With requests in flight, the last one's settle returns an expired lease: look again an idle time later.
  const at = lease.inflight > 0 ? Date.now() + cfg.CREDIT_LEASE_IDLE_MS : Math.min(lease.validUntil, lease.lastUsed + cfg.CREDIT_LEASE_IDLE_MS);
  lease.timer = setTimeout(() => {
    const idle = Date.now() - lease.lastUsed >= cfg.CREDIT_LEASE_IDLE_MS;
    if (lease.inflight === 0 && (idle || Date.now() >= lease.validUntil)) void maybeReturn(lease, true);
    else schedule(lease, cfg);
  }, Math.max(50, at - Date.now()));
  lease.timer.unref();
}

/** Returns every lease of this instance now, waiting for none in flight (tests, and a graceful shutdown). */
export async function returnAllLeases(): Promise<void> {
  await Promise.all([...acquiring.values()]);
  await Promise.all([...outstanding].filter((l) => l.inflight === 0).map((l) => maybeReturn(l, true)));
}

/** Forgets this instance's leases without returning them, as a container that died would (tests). */
export function abandonLeasesForTests(): void {
  for (const l of outstanding) clearTimeout(l.timer);
  outstanding.clear();
  current.clear();
  acquiring.clear();
  declined.clear();
}


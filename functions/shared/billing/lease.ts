/**
 * Credit leases (docs/credit-leases.md; RFC 4006 credit control, 3GPP TS 32.299): this module instance
 * (a container, or one Lambda Managed Instances environment serving many invocations at once) takes a
 * slice of an account's credit — and of the key's spend limit — with ONE conditional write (the lease
 * is a hold, placed by hold.ts under the same conditions: Granted-Service-Unit), then admits that
 * account's requests against the slice in memory, with no store write before the answer. Each
 * request's bill is its own ledger entry (lease-settle.ts: Used-Service-Unit). A lease admits requests
 * for CREDIT_LEASE_VALIDITY_MS (Validity-Time), is topped up by a new lease when a quarter is left, and
 * is returned — charged the sum of its requests' bills, the rest released — when it expires, is
 * replaced, or sits unused for CREDIT_LEASE_IDLE_MS (Quota-Holding-Time). A container that dies or stays
 * frozen leaves its lease on the account item: the account's next use (lease-reclaim.ts) or the orphan
 * sweep reconciles it from the ledger after its expiry.
 *
 * Admission is synchronous (check and reserve in one turn of the event loop), so concurrent requests
 * of one instance can never reserve more than the slice. Overdraft stays impossible: the slice left the
 * balance (and the key's allowance) before any of it is spent, and each request's bill is capped at
 * its own reservation (settle.ts `chargeFor`).
 *
 * Rate limits are leased with the credit (lease-settle.ts `leaseTerms`): the lease's write counts n request-rate
 * units of the current minute and m concurrency slots; admission spends them in the same synchronous
 * step, so this instance never admits more than it was granted; unused units and the slots go back
 * with the return.
 *
 * Free tokens are leased alike (lease-settle.ts `leaseTerms`, docs/credit-leases.md "Free tokens"): a
 * slice of them and no credit; a request is admitted only when the slice holds its whole most, so free
 * tokens alone pay it, as the per-request path would. Per request, as without leases: fund shards,
 * free tokens nearly gone, small credit, a rate limit reached, any request a lease cannot admit.
 */
import { logger } from '../observability/logger';
import { readState, viewOf } from './account-state';
import { config, type Config } from '../config/env';
import { now as billingNow } from '../time/clock';
import { placeHold, rateHeadersOfHold, type HoldRequest } from './hold';
import type { HoldDemand } from './hold-plan';
import { keyEntryId, type HoldRecord } from './hold-record';
import { LEASE_ADMIT_SKEW_MS, leasedRequestRecord, leaseTerms, needOf, returnLease, type LeaseTerms, type UnwrittenEntry } from './lease-settle';
import { epochMinute, leasedRateHeaders } from './rate-limit';
import { LEASE_ID_PREFIX, newRequestId, REQUEST_ID_PREFIX } from '../http/request-id';
import { cancelUnknownHold, queueBalanceAction } from './settle-queue';
import { watchBalance } from './balance-watch';
import { afterReclaim } from './lease-reclaim';

/** The public model a lease's record names (an account's activity never shows it: a lease has no ledger entry). */
const LEASE_MODEL = 'credit-lease';

/** Most ledger entries a lease carries to its return (one TransactWriteItems holds 100 items): past this it admits no more. */
const MAX_UNWRITTEN = 99;

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
  /** Free tokens of the slice not reserved by a request in flight nor used (a free-token lease). */
  freeAvailable: number;
  /** Free tokens used by its settled requests. */
  freeSpent: number;
  /** Requests admitted whose ledger entry's fate is not known yet (each holds one of `slots`). */
  inflight: number;
  /** Concurrency slots granted (undefined: the limit is off). */
  slots?: number;
  /** Request-rate units of minute `record.rpmWindow` left (undefined: the limit is off), and the limit. */
  rpmLeft?: number;
  rpmLimit: number;
  /** `x-ratelimit-remaining-requests` right after the grant. */
  rpmAfterGrant: number;
  /** Ledger entries neither DynamoDB nor the settle queue took: written by the return, in its transaction. */
  unwritten: UnwrittenEntry[];
  lastUsed: number;
  state: 'open' | 'retired' | 'returned';
  timer?: NodeJS.Timeout;
}

/** A request admitted against a lease: its per-request record (a reservation inside the lease). */
export interface Admission {
  record: HoldRecord;
  lease: Lease;
  /** Its x-ratelimit-* headers (empty with the request-rate limit off). */
  rateHeaders: Record<string, string>;
}

const current = new Map<string, Lease>();
const acquiring = new Map<string, Promise<Lease | undefined>>();
/** Requests waiting for a lease, per slot (a lease's concurrency ask counts them). */
const waiting = new Map<string, number>();
/** Slots (account + key) that lease per request until the epoch ms stored here. */
const declined = new Map<string, number>();
/** Every lease not yet returned (tests drain them). */
const outstanding = new Set<Lease>();

const slotOf = (accountId: string, keyHash: string) => `${accountId}|${keyHash}`;

/** Admits the request against this instance's lease of its account and key, if one can take it now. */
export function admitNow(ask: LeaseAsk): Admission | undefined {
  const lease = current.get(slotOf(ask.accountId, ask.keyHash));
  if (lease === undefined || !admits(lease, ask)) return undefined;
  const free = isFreeLease(lease);
  if (free) lease.freeAvailable -= askTokens(ask);
  else lease.available -= ask.costNanoUsd;
  lease.inflight++;
  if (lease.rpmLeft !== undefined) lease.rpmLeft--;
  lease.lastUsed = Date.now();
  const low =
    (free ? lease.freeAvailable < Math.max(lease.record.holdFreeTokens / 4, askTokens(ask)) : lease.available < lease.record.holdNanoUsd / 4) ||
    (lease.rpmLeft !== undefined && lease.rpmLeft < (lease.record.rpmUnits ?? 0) / 4);
  if (low) void acquire(ask); // top up before it runs out
  const rateHeaders =
    lease.rpmLeft === undefined ? {} : leasedRateHeaders(lease.rpmLimit, lease.rpmAfterGrant, lease.rpmLeft, lease.record.rpmWindow ?? 0, billingNow());
  return { lease, record: leasedRequestRecord(lease.record, ask, needOf(ask)), rateHeaders };
}

function admits(lease: Lease, ask: LeaseAsk): boolean {
  const arrived = Number(/^req_(\d{13})_/.exec(ask.requestId)?.[1] ?? Number.NaN);
  if (lease.state !== 'open' || Date.now() >= lease.validUntil || ask.endsAt > lease.record.holdExpiresAt || arrived < lease.takenAt - LEASE_ADMIT_SKEW_MS)
    return false;
  if (isFreeLease(lease) ? askTokens(ask) > lease.freeAvailable : ask.costNanoUsd > lease.available) return false;
  if (lease.slots !== undefined && lease.inflight >= lease.slots) return false;
  return lease.rpmLeft === undefined || (lease.rpmLeft > 0 && epochMinute(billingNow()) === lease.record.rpmWindow);
}

/** A lease of free tokens (its admitted requests hold free tokens, no credit). */
const isFreeLease = (lease: Lease): boolean => lease.record.holdFreeTokens > 0;
const askTokens = (ask: LeaseAsk): number => needOf(ask).tokens;

/**
 * Whether the request should wait for a lease (true) or hold per request at once (false): from this
 * instance's fresh view of the account when it has one, else worth a try.
 */
export function worthLeasing(ask: LeaseAsk): boolean {
  const cfg = config();
  if (cfg.CREDIT_LEASE_VALIDITY_MS <= 0 || (declined.get(slotOf(ask.accountId, ask.keyHash)) ?? 0) > billingNow()) return false;
  const view = viewOf(ask.accountId);
  if (view === undefined || billingNow() - view.readAt > cfg.ACCOUNT_CACHE_TTL_MS) return true;
  return leaseTerms(view.state, keyEntryId(ask.keyHash), needOf(ask), cfg, billingNow()) !== undefined;
}

/** Takes a lease (one in flight per account and key) and admits the request; undefined: hold per request. */
export async function admitAfterLease(ask: LeaseAsk): Promise<Admission | undefined> {
  const slot = slotOf(ask.accountId, ask.keyHash);
  waiting.set(slot, (waiting.get(slot) ?? 0) + 1);
  try {
    for (let round = 0; round < 2; round++) {
      const admitted = admitNow(ask);
      if (admitted !== undefined) return admitted;
      if ((await acquire(ask)) === undefined) return undefined;
    }
    return admitNow(ask);
  } finally {
    const n = (waiting.get(slot) ?? 1) - 1;
    if (n > 0) waiting.set(slot, n);
    else waiting.delete(slot);
  }
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

/** This instance's requests of a slot in flight or waiting: what a lease's concurrency ask covers. */
function demandOf(slot: string): number {
  let n = waiting.get(slot) ?? 0;
  for (const l of outstanding) if (l.slot === slot) n += l.inflight;
  return Math.max(1, n);
}

/** One lease write: the slice (and the rate grant) as a hold named `lease_…`, expiring a validity after the asking request's end. */
async function take(slot: string, ask: LeaseAsk): Promise<Lease | undefined> {
  const cfg = config();
  const view = viewOf(ask.accountId);
  const fresh =
    view !== undefined && billingNow() - view.readAt <= cfg.ACCOUNT_CACHE_TTL_MS ? view.state : await readState(ask.accountId).catch(() => undefined);
  const state = await afterReclaim(ask.accountId, fresh); // leases other containers left past their expiry come back first
  const terms = state === undefined ? undefined : leaseTerms(state, keyEntryId(ask.keyHash), needOf(ask), cfg, billingNow(), demandOf(slot));
  if (terms === undefined) return decline(slot, cfg);
  const takenAt = Date.now();
  const record = await placeLease(ask, terms, takenAt, cfg);
  if (record === undefined) return decline(slot, cfg);
  if (record.shard > 0) {
    // The store's numbers differed from the view (shards): give it back at once.
    await returnLease(record, NOTHING_SPENT, { unusedRpm: record.rpmUnits ?? 0 }).catch(() => undefined);
    return decline(slot, cfg);
  }
  const headers = rateHeadersOfHold(record);
  const lease: Lease = {
    record,
    slot,
    takenAt,
    validUntil: takenAt + cfg.CREDIT_LEASE_VALIDITY_MS,
    available: record.holdNanoUsd,
    spent: 0,
    freeAvailable: record.holdFreeTokens,
    freeSpent: 0,
    inflight: 0,
    ...(record.accountSlot ? { slots: record.slots ?? 1 } : {}),
    ...(record.rpmUnits !== undefined ? { rpmLeft: record.rpmUnits } : {}),
    rpmLimit: Number(headers?.['x-ratelimit-limit-requests'] ?? 0),
    rpmAfterGrant: Number(headers?.['x-ratelimit-remaining-requests'] ?? 0),
    unwritten: [],
    lastUsed: takenAt,
    state: 'open',
  };
  outstanding.add(lease);
  returnLeasesOnShutdown();
  const old = current.get(slot);
  current.set(slot, lease);
  if (old !== undefined) {
    old.state = 'retired';
    void maybeReturn(old);
  }
  schedule(lease, cfg);
  return lease;
}

async function placeLease(ask: LeaseAsk, terms: LeaseTerms, takenAt: number, cfg: Config): Promise<HoldRecord | undefined> {
  const leaseId = LEASE_ID_PREFIX + newRequestId(takenAt).slice(REQUEST_ID_PREFIX.length);
  // The slice is written exactly (hold-plan.ts `slice`); the demand only words a 402, which a lease never shows.
  const demand: HoldDemand = {
    promptTokens: 0,
    outputTokens: terms.freeTokens,
    outputLimitPerChoice: terms.freeTokens,
    choices: 1,
    inputPrice: 0,
    outputPrice: 0,
  };
  try {
    return await placeHold(
      {
        accountId: ask.accountId,
        keyHash: ask.keyHash,
        requestId: leaseId,
        publicModel: LEASE_MODEL,
        demand,
        promptTokensEstimate: 0,
        expiresAt: ask.endsAt + cfg.CREDIT_LEASE_VALIDITY_MS,
        grant: { rpm: terms.rpm, slots: terms.slots },
        slice: { freeTokens: terms.freeTokens, nanoUsd: terms.nanoUsd },
      },
      cancelUnknownHold,
    );
  } catch (err) {
    logger.debug('no lease; holding per request', { accountId: ask.accountId, error: err as Error });
    return undefined;
  }
}

function decline(slot: string, cfg: Config): undefined {
  if (declined.size > 10_000) declined.clear();
  declined.set(slot, billingNow() + cfg.ACCOUNT_CACHE_TTL_MS);
  return undefined;
}

/**
 * An admitted request's bill is known: its charge (nano-USD and free tokens; zeros for a cancel) is
 * added to what the lease spent, the rest of its reservation goes back to the slice. Its slot stays
 * taken until {@link endAdmission}.
 */
export function billAdmission(a: Admission, charge: { costNanoUsd: number; freeTokensUsed: number }): void {
  const cost = Math.min(charge.costNanoUsd, a.record.holdNanoUsd);
  const free = Math.min(charge.freeTokensUsed, a.record.holdFreeTokens);
  a.lease.spent += cost;
  a.lease.available += a.record.holdNanoUsd - cost;
  a.lease.freeSpent += free;
  a.lease.freeAvailable += a.record.holdFreeTokens - free;
  a.lease.lastUsed = Date.now();
}

/** A return that charges nothing. */
const NOTHING_SPENT = { nanoUsd: 0, freeTokens: 0 };

/**
 * An admitted request's ledger entry is written or queued — or neither took it (`unwritten`): then
 * the lease keeps it and writes it with its return, in the same transaction, so its charge never lands
 * without it. Resolves once the lease is returned when this was its last request and it is spent,
 * expired or replaced. Never throws.
 */
export function endAdmission(a: Admission, unwritten?: UnwrittenEntry): Promise<void> {
  const lease = a.lease;
  if (unwritten !== undefined) {
    lease.unwritten.push(unwritten);
    if (lease.unwritten.length >= MAX_UNWRITTEN - lease.inflight) lease.state = lease.state === 'open' ? 'retired' : lease.state;
  }
  lease.inflight--;
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
    const spent = { nanoUsd: lease.spent, freeTokens: lease.freeSpent };
    const r = await returnLease(lease.record, spent, { unusedRpm: lease.rpmLeft ?? 0, entries: lease.unwritten });
    // The lease's spending is visible now: a line the user drew may be crossed (balance-watch.ts), judged
    // on settings no older than a view's TTL (a lease's requests read nothing: one read per lease).
    if (!r.alreadySettled) {
      const view = viewOf(lease.record.accountId);
      if (view === undefined || billingNow() - view.readAt > config().ACCOUNT_CACHE_TTL_MS) await readState(lease.record.accountId).catch(() => undefined);
      await watchBalance(lease.record.accountId, { keyHash: lease.record.keyHash }, queueBalanceAction);
    }
  } catch (err) {
    if (Date.now() < lease.record.holdExpiresAt) {
      // DynamoDB refused: try again later, while the lease is still this instance's to return.
      lease.state = 'retired';
      outstanding.add(lease);
      lease.timer = setTimeout(() => void maybeReturn(lease, true), config().CREDIT_LEASE_IDLE_MS + 1_000);
      lease.timer.unref();
      return;
    }
    // Left on the account item: the orphan sweep reconciles it from the ledger after its expiry.
    logger.error('lease not returned; the sweep will reconcile it', {
      leaseId: lease.record.requestId,
      accountId: lease.record.accountId,
      unwrittenEntries: lease.unwritten.length,
      error: err as Error,
    });
  }
}

/** Returns the lease when it expires or sits unused (timers never keep the process alive). */
function schedule(lease: Lease, cfg: Config): void {
  clearTimeout(lease.timer);
  if (lease.state !== 'open') return;
  // With requests in flight, the last one's settle returns an expired lease: look again an idle time later.
  const at = lease.inflight > 0 ? Date.now() + cfg.CREDIT_LEASE_IDLE_MS : Math.min(lease.validUntil, lease.lastUsed + cfg.CREDIT_LEASE_IDLE_MS);
  lease.timer = setTimeout(
    () => {
      const idle = Date.now() - lease.lastUsed >= cfg.CREDIT_LEASE_IDLE_MS;
      if (lease.inflight === 0 && (idle || Date.now() >= lease.validUntil)) void maybeReturn(lease, true);
      else schedule(lease, cfg);
    },
    Math.max(50, at - Date.now()),
  );
  lease.timer.unref();
}

/** Returns every lease of this instance with no request in flight now (a graceful shutdown: SIGTERM, tests). Never throws. */
export async function returnAllLeases(): Promise<void> {
  await Promise.all([...acquiring.values()]);
  await Promise.all([...outstanding].filter((l) => l.inflight === 0).map((l) => maybeReturn(l, true)));
}

/** Within Lambda's graceful-shutdown reserve for the runtime: up to 300 ms (500 ms with an internal extension). */
const SHUTDOWN_BUDGET_MS = 250;
let shutdownHook = false;

/**
 * On Lambda, returns this environment's leases when it is shut down. Lambda sends the runtime SIGTERM
 * before it ends an environment only when an external extension is registered, up to 300 ms (500 ms
 * with an internal one) before SIGKILL (https://github.com/aws-samples/graceful-shutdown-with-aws-lambda);
 * the stack registers one on chat and embeddings (lib/constructs/shutdown-extension.ts). A return not
 * done in time is reconciled after the lease's expiry (docs/credit-leases.md); outside Lambda nothing is installed.
 */
function returnLeasesOnShutdown(): void {
  if (shutdownHook || process.env.AWS_LAMBDA_FUNCTION_NAME === undefined) return;
  shutdownHook = true;
  process.once('SIGTERM', () => {
    const exit = () => process.exit(0); // may wait on the runtime client's pending `/next` until SIGKILL: harmless
    setTimeout(exit, SHUTDOWN_BUDGET_MS).unref();
    void returnAllLeases().finally(exit);
  });
}

/** Forgets this instance's leases without returning them, as a container that died would (tests). */
export function abandonLeasesForTests(): void {
  for (const l of outstanding) clearTimeout(l.timer);
  outstanding.clear();
  current.clear();
  acquiring.clear();
  waiting.clear();
  declined.clear();
}

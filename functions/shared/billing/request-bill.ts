/**
 * The billing API the routes call (chat completions, embeddings; the Responses API bills through the
 * same core):
 *
 *   const bill = startBill({ accountId, keyHash, requestId, publicModel, demand, deadline });
 *   if (!bill.predicted) await bill.confirmed;     // else connect upstream beside the hold
 *   … route; before the first byte reaches the client: await bill.confirmed (402/429/401/503) …
 *   bill.charge(entry)  → the Charge the settle will write (for `usage.cost`)
 *   await bill.settle(entry)   // after the answer is out; durable (in-process, then the queue)
 *   await bill.cancel()        // no answer was produced: release the hold
 *
 * Money is exact: the charge is computed from the hold's free tokens and the usage only, so the
 * `usage.cost` in the body and the ledger entry are the same number.
 *
 * A request admitted against a credit lease (lease.ts) gets the same {@link RequestBill}, with no store
 * write before the answer — the reservation is made in this instance's memory — and one after it, the
 * request's ledger entry (settled durably: in-process, then the settle queue). A request that no lease
 * can admit is billed per request, exactly as without leases.
 */
import { logger } from '../observability/logger';
import { config } from '../config/env';
import type { Charge } from '../money/price';
import { holdPredicted, placeHold, rateHeadersOfHold, type HoldRequest } from './hold';
import type { HoldRecord } from './hold-record';
import { admitAfterLease, admitNow, billAdmission, endAdmission, worthLeasing, type Admission, type LeaseAsk } from './lease';
import { requestCost } from './lease-settle';
import { chargeFor, type ChargedUsage, type SettleResult, type UsageEntry } from './settle';
import { cancelUnknownHold, settleDurably } from './settle-queue';

/** Default life of a hold when the host sets no deadline (ms): Lambda's 15-minute maximum. */
const DEFAULT_HOLD_LIFE_MS = 15 * 60_000;

/**
 * What {@link startBill} needs: the hold's request (hold.ts) with, instead of its expiry, `endsAt` —
 * epoch ms when the request's function ends (its deadline + the settle reserve); default now + 15 min.
 */
export type BillStart = Omit<HoldRequest, 'expiresAt'> & { endsAt?: number };

/** One request's bill: its hold, then its settle. */
export interface RequestBill {
  /** This container's view predicts the hold will be granted (start upstream in parallel). */
  readonly predicted: boolean;
  /** Resolves once the hold is written; rejects with the client's error (402, 429, 401, 503). */
  readonly confirmed: Promise<HoldRecord>;
  /** The charge of a usage against this hold (the hold must be confirmed). */
  charge(entry: ChargedUsage): Charge;
  /** Settles durably (after the answer is out). Never throws. */
  settle(entry: UsageEntry): Promise<SettleResult | undefined>;
  /** Releases the hold (no answer produced). Never throws. */
  cancel(): Promise<void>;
  /** OpenAI's `x-ratelimit-*-requests` headers from the hold's write (empty before it is confirmed, or with the limit off). */
  rateHeaders(): Record<string, string>;
}

/**
 * Holds being written in this container, per account id: the predicted ones (their upstream call
 * started beside the hold) and a count of the others. A prediction counts the holds pending here, but
 * a hold that was not predicted may still be reading the account (not pending yet) and then take, in
 * the store, the funds a predicted call already runs on — refused after its upstream started. So:
 * nothing is predicted while a hold that was not predicted is in flight, and such a hold waits for
 * the predicted ones in flight before it is written.
 */
const predictedInFlight = new Map<string, Set<Promise<unknown>>>();
const unpredictedInFlight = new Map<string, number>();

function trackPredicted(accountId: string, hold: Promise<unknown>): void {
  let set = predictedInFlight.get(accountId);
  if (set === undefined) predictedInFlight.set(accountId, (set = new Set()));
  set.add(hold);
  const forget = (): void => {
    set.delete(hold);
    if (set.size === 0 && predictedInFlight.get(accountId) === set) predictedInFlight.delete(accountId);
  };
  hold.then(forget, forget);
}

/** Writes a hold that was not predicted: after the predicted ones in flight, counted meanwhile. */
async function placeUnpredicted<T>(accountId: string, place: () => Promise<T>): Promise<T> {
  unpredictedInFlight.set(accountId, (unpredictedInFlight.get(accountId) ?? 0) + 1);
  try {
    const ahead = predictedInFlight.get(accountId);
    if (ahead !== undefined && ahead.size > 0) await Promise.allSettled([...ahead]);
    return await place();
  } finally {
    const left = (unpredictedInFlight.get(accountId) ?? 1) - 1;
    if (left === 0) unpredictedInFlight.delete(accountId);
    else unpredictedInFlight.set(accountId, left);
  }
}

/**
 * Starts the bill of one request (see the module comment): against this container's credit lease of
 * the account when leases are on and the account qualifies ({@link leasedBill}: no store write before
 * the answer), else its own hold.
 */
export function startBill(start: BillStart): RequestBill {
  const timed = { ...start, endsAt: start.endsAt ?? Date.now() + DEFAULT_HOLD_LIFE_MS };
  return leasedBill(timed, () => holdBill(timed)) ?? holdBill(timed);
}

/** The request's own hold, then its settle. */
function holdBill(start: BillStart & { endsAt: number }): RequestBill {
  const { endsAt, ...hold } = start;
  const req: HoldRequest = { ...hold, expiresAt: endsAt };
  const predicted = !unpredictedInFlight.has(start.accountId) && holdPredicted(req);
  let record: HoldRecord | undefined;
  let done = false;
  const placed = predicted ? placeHold(req, cancelUnknownHold) : placeUnpredicted(start.accountId, () => placeHold(req, cancelUnknownHold));
  if (predicted) trackPredicted(start.accountId, placed);
  const confirmed = placed.then((r) => (record = r));
  confirmed.catch(() => undefined); // observed by the caller; never an unhandled rejection
  const mustHold = (): HoldRecord => {
    if (record === undefined) throw new Error('the hold is not confirmed yet');
    return record;
  };
  return {
    predicted,
    confirmed,
    charge: (entry) => chargeFor(mustHold(), entry),
    rateHeaders: () => (record === undefined ? {} : (rateHeadersOfHold(record) ?? {})),
    async settle(entry) {
      if (record === undefined || done) return undefined;
      done = true;
      const r = await settleDurably(record, { kind: 'bill', entry });
      if (r !== undefined) logger.debug('settled', { requestId: start.requestId, costNanoUsd: r.costNanoUsd });
      return r;
    },
    async cancel() {
      if (record === undefined || done) return;
      done = true;
      await settleDurably(record, { kind: 'cancel' });
    },
  };
}

/**
 * The request's bill on a lease: admitted now (`predicted`, confirmed at once), or after this
 * instance takes a lease, else `perRequest()`. Undefined when the account leases per request (leases
 * off, or this instance's fresh view says the account does not qualify): the caller holds per request.
 */
function leasedBill(start: BillStart & { endsAt: number }, perRequest: () => RequestBill): RequestBill | undefined {
  if (config().CREDIT_LEASE_VALIDITY_MS <= 0) return undefined;
  const ask: LeaseAsk = { ...start, costNanoUsd: requestCost(start.demand) };
  const admitted = admitNow(ask);
  if (admitted !== undefined) return { predicted: true, confirmed: Promise.resolve(admitted.record), ...admittedBill(() => admitted) };
  if (!worthLeasing(ask)) return undefined;
  let admission: Admission | undefined;
  let fallback: RequestBill | undefined;
  const confirmed = admitAfterLease(ask).then((a) => {
    admission = a;
    if (a !== undefined) return a.record;
    fallback = perRequest();
    return fallback.confirmed;
  });
  confirmed.catch(() => undefined); // observed by the caller; never an unhandled rejection
  const leased = admittedBill(() => admission);
  return {
    predicted: false,
    confirmed,
    charge: (entry) => (fallback ?? leased).charge(entry),
    settle: (entry) => (fallback ?? leased).settle(entry),
    cancel: () => (fallback ?? leased).cancel(),
    rateHeaders: () => (fallback ?? leased).rateHeaders(),
  };
}

/** The bill of an admission (`admission()` is undefined until it is known). */
function admittedBill(admission: () => Admission | undefined): Omit<RequestBill, 'predicted' | 'confirmed'> {
  let done = false;
  const must = (): Admission => {
    const a = admission();
    if (a === undefined) throw new Error('the hold is not confirmed yet');
    return a;
  };
  return {
    charge: (entry) => chargeFor(must().record, entry),
    rateHeaders: () => admission()?.rateHeaders ?? {},
    async settle(entry) {
      const a = admission();
      if (a === undefined || done) return undefined;
      done = true;
      // The slice learns the bill at once; the lease is not returned before the entry's fate is known.
      billAdmission(a, chargeFor(a.record, entry));
      let unqueued = false;
      const r = await settleDurably(a.record, { kind: 'bill', entry }, undefined, () => (unqueued = true));
      await endAdmission(a, unqueued ? { record: a.record, entry } : undefined);
      return r;
    },
    async cancel() {
      const a = admission();
      if (a === undefined || done) return;
      done = true;
      billAdmission(a, { costNanoUsd: 0, freeTokensUsed: 0 });
      await endAdmission(a);
    },
  };
}

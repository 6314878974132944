/**
 * The bill of a request admitted against a credit lease (lease.ts): the same {@link RequestBill} the
 * routes use, with no store write before the answer — the reservation is made in this instance's
 * memory — and one after it, the request's ledger entry (settled durably: in-process, then the settle
 * queue). A request that no lease can admit is billed per request (`perRequest`), exactly as without
 * leases.
 */
import { admitAfterLease, admitNow, billAdmission, endAdmission, worthLeasing, type Admission, type LeaseAsk } from './lease';
import { requestCost } from './lease-terms';
import type { BillStart, RequestBill } from './request-bill';
import { chargeFor } from './settle';
import { settleDurably } from './settle-durable';
import { config } from '../config/env';

/**
 * The request's bill on a lease: admitted now (`predicted`, confirmed at once), or after this
 * instance takes a lease, else `perRequest()`. Undefined when the account leases per request (leases
 * off, or this instance's fresh view says the account does not qualify): the caller holds per request.
 */
export function leasedBill(start: BillStart & { endsAt: number }, perRequest: () => RequestBill): RequestBill | undefined {
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
      billAdmission(a, chargeFor(a.record, entry).costNanoUsd);
      let unqueued = false;
      const r = await settleDurably(a.record, { kind: 'bill', entry }, undefined, () => (unqueued = true));
      await endAdmission(a, unqueued ? { record: a.record, entry } : undefined);
      return r;
    },
    async cancel() {
      const a = admission();
      if (a === undefined || done) return;
      done = true;
      billAdmission(a, 0);
      await endAdmission(a);
    },
  };
}

/**
 * The billing API the routes call (chat completions, embeddings; the Responses API of issue 13 bills
 * through the same core):
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
 */
import { logger } from '../observability/logger';
import type { Charge } from './price';
import { holdPredicted, placeHold, type HoldRequest } from './hold';
import type { HoldDemand } from './hold-plan';
import type { HoldRecord } from './hold-record';
import { chargeFor, type SettleResult, type UsageEntry } from './settle';
import { cancelUnknownHold, settleDurably } from './settle-durable';

/** Default life of a hold when the host sets no deadline (ms): Lambda's 15-minute maximum. */
const DEFAULT_HOLD_LIFE_MS = 15 * 60_000;

/** What {@link startBill} needs. */
export interface BillStart {
  accountId: string;
  keyHash: string;
  requestId: string;
  publicModel: string;
  demand: HoldDemand;
  promptTokensEstimate: number;
  /** Epoch ms when the request's function ends (its deadline + the settle reserve); default now + 15 min. */
  endsAt?: number;
}

/** One request's bill: its hold, then its settle. */
export interface RequestBill {
  /** This container's view predicts the hold will be granted (start upstream in parallel). */
  readonly predicted: boolean;
  /** Resolves once the hold is written; rejects with the client's error (402, 429, 401, 503). */
  readonly confirmed: Promise<HoldRecord>;
  /** The charge of a usage against this hold (the hold must be confirmed). */
  charge(entry: Pick<UsageEntry, 'promptTokens' | 'completionTokens' | 'inputPrice' | 'outputPrice'>): Charge;
  /** Settles durably (after the answer is out). Never throws. */
  settle(entry: UsageEntry): Promise<SettleResult | undefined>;
  /** Releases the hold (no answer produced). Never throws. */
  cancel(): Promise<void>;
}

/**
 * Holds this container predicted and is still writing, per account id. Only predicted holds start
 * their upstream call before the hold lands; the prediction counts every hold pending here, so a hold
 * that was not predicted waits for these before it is written (else it could take, in the store, the
 * funds a predicted request's upstream call is already running on, and that request would be refused
 * after its upstream started).
 */
const predictedInFlight = new Map<string, Set<Promise<unknown>>>();

/** Holds waiting for {@link predictedInFlight}, per account id (no prediction meanwhile). */
const waitingHolds = new Map<string, number>();

async function afterPredicted<T>(accountId: string, ahead: Set<Promise<unknown>>, place: () => Promise<T>): Promise<T> {
  waitingHolds.set(accountId, (waitingHolds.get(accountId) ?? 0) + 1);
  try {
    await Promise.allSettled([...ahead]);
  } finally {
    const left = (waitingHolds.get(accountId) ?? 1) - 1;
    if (left === 0) waitingHolds.delete(accountId);
    else waitingHolds.set(accountId, left);
  }
  return place();
}

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

/** Starts the hold of one request (see the module comment). */
export function startBill(start: BillStart): RequestBill {
  const req: HoldRequest = {
    accountId: start.accountId,
    keyHash: start.keyHash,
    requestId: start.requestId,
    publicModel: start.publicModel,
    demand: start.demand,
    promptTokensEstimate: start.promptTokensEstimate,
    expiresAt: start.endsAt ?? Date.now() + DEFAULT_HOLD_LIFE_MS,
  };
  // Nothing is predicted while a hold of the account waits below (it is not counted as pending yet).
  const predicted = !waitingHolds.has(start.accountId) && holdPredicted(req);
  let record: HoldRecord | undefined;
  let done = false;
  // A hold this container did not predict waits for the predicted ones of its account still being
  // written here: it must not take the funds their upstream calls already started on.
  const ahead = predicted ? undefined : predictedInFlight.get(start.accountId);
  const placed = ahead === undefined || ahead.size === 0 ? placeHold(req, cancelUnknownHold) : afterPredicted(start.accountId, ahead, () => placeHold(req, cancelUnknownHold));
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

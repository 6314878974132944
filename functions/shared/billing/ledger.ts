/**
 * The ledger's public face: request ids, usage sums, and the billing core the routes call
 * (request-bill.ts: hold before the call, settle after; settle.ts; sweep.ts).
 */
export { newRequestId } from './request-id';
export { usageSummary, type UsageSummary, type UsageTotals } from './usage-summary';
export { type LedgerStatus } from './ledger-entry';
export { settleHold, chargeFor, type SettleOutcome, type SettleResult, type UsageEntry } from './settle';
export { startBill, type RequestBill } from './request-bill';

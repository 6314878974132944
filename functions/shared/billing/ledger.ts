/**
 * The ledger's public face: usage sums, and the billing core the routes call
 * (request-bill.ts: hold before the call, settle after; settle.ts; sweep.ts).
 */
export { usageSummary, type UsageSummary, type UsageTotals } from './usage-summary';
export { type LedgerStatus } from './ledger-entry';
export { settleHold, chargeFor, type SettleOutcome, type SettleResult, type UsageEntry } from './settle';
export { startBill, type RequestBill } from './request-bill';

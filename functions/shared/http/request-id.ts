/**
 * Request ids: the ledger's sort key and idempotency key. Fixed-width and time-first, so the ledger's
 * string order is time order and a Query (or a `>=` key condition) reads a time range.
 * Format: `req_` + 13-digit zero-padded Unix ms + `_` + 16 hex characters (64 random bits).
 */
import { randomBytes } from 'node:crypto';

/** Every request id starts with this. */
export const REQUEST_ID_PREFIX = 'req_';

/** Credit lease ids (lease.ts): `lease_` + the same time-first form as request ids. */
export const LEASE_ID_PREFIX = 'lease_';

/** True for the id of a credit lease's hold (`holds.<leaseId>`), false for a request's. */
export function isLeaseId(id: string): boolean {
  return id.startsWith(LEASE_ID_PREFIX);
}

/** Digits of the ms timestamp (Unix ms stays 13 digits until the year 2286). */
const TIMESTAMP_DIGITS = 13;

/** A new unique, time-ordered request id, e.g. `req_1735689600000_9f86d081884c7d65`. */
export function newRequestId(nowMs: number = Date.now()): string {
  return `${requestIdFloor(nowMs)}_${randomBytes(8).toString('hex')}`;
}

/** The smallest request id made at or after `ms` (Unix ms): a lower bound for ledger key conditions. */
export function requestIdFloor(ms: number): string {
  return REQUEST_ID_PREFIX + String(Math.max(0, Math.trunc(ms))).padStart(TIMESTAMP_DIGITS, '0');
}

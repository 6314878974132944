/** JSON building blocks of the account API: USD beside the exact nano-USD integer, one JSON result. */
import { NANO_USD_PER_USD } from '../money/money';
import type { JsonResult } from '../http/types';

/**
 * nano-USD → USD as a JSON number, for display (a float: the exact amount is the `…_nano_usd` integer
 * sent beside it, DATA-MODEL §1).
 */
export function usd(nanoUsd: number): number {
  return nanoUsd / NANO_USD_PER_USD;
}

/** A 200 (or `status`) JSON answer, never cached by browsers or proxies (it is per user). */
export function json(body: unknown, status = 200): JsonResult {
  return { kind: 'json', status, headers: { 'cache-control': 'no-store' }, body };
}

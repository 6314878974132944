/** `GET /v1/account` and `GET /v1/credits`: balances from the account item, usage from the ledger. */
import { MAX_KEYS_PER_ACCOUNT } from '../accounts/limits';
import { rateLimitsFor } from '../accounts/rate-limit-settings';
import { ledgerTotals, monthStartMs } from '../billing/ledger-read';
import type { JsonResult } from '../http/types';
import type { AccountCaller } from './caller';
import { json, usd } from './json';

/**
 * The account: `{data:{id, email, created_at, free_tokens, free_tokens_held, credit, credit_nano_usd,
 * credit_held, credit_held_nano_usd, total_usage, total_usage_nano_usd, month_usage,
 * month_usage_nano_usd, is_free_tier, key_count, key_limit, rate_limit}}` (README: "The account API").
 */
export async function getAccountInfo(caller: AccountCaller): Promise<JsonResult> {
  const a = caller.account;
  const totals = await ledgerTotals(a.accountId, monthStartMs());
  const freeTier = (a.purchasedNanoUsd ?? 0) === 0;
  const limits = rateLimitsFor(freeTier);
  const held = a.heldNanoUsd ?? 0;
  return json({
    data: {
      id: a.accountId,
      email: a.email ?? null,
      created_at: a.createdAt,
      free_tokens: a.freeTokens,
      free_tokens_held: a.heldFreeTokens ?? 0,
      credit: usd(a.creditNanoUsd),
      credit_nano_usd: a.creditNanoUsd,
      credit_held: usd(held),
      credit_held_nano_usd: held,
      total_usage: usd(totals.totalNanoUsd),
      total_usage_nano_usd: totals.totalNanoUsd,
      month_usage: usd(totals.monthNanoUsd),
      month_usage_nano_usd: totals.monthNanoUsd,
      is_free_tier: freeTier,
      key_count: a.keyCount,
      key_limit: MAX_KEYS_PER_ACCOUNT,
      rate_limit: { requests_per_minute: limits.requestsPerMinute, concurrent_requests: limits.concurrentRequests },
    },
  });
}

/**
 * OpenRouter's credits: `{data:{total_credits, total_usage}}` in USD, plus the exact integers.
 * total_usage = the ledger's charges; total_credits = what is left (available + held) + total_usage,
 * i.e. all credit ever added, so `total_credits − total_usage` is the balance.
 */
export async function getCredits(caller: AccountCaller): Promise<JsonResult> {
  const a = caller.account;
  const { totalNanoUsd } = await ledgerTotals(a.accountId, monthStartMs());
  const credits = a.creditNanoUsd + (a.heldNanoUsd ?? 0) + totalNanoUsd;
  return json({ data: { total_credits: usd(credits), total_credits_nano_usd: credits, total_usage: usd(totalNanoUsd), total_usage_nano_usd: totalNanoUsd } });
}

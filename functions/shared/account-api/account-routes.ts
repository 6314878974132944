/**
 * `GET /v1/account` and `GET /v1/credits`: balances and lifetime usage from the account's items (summed
 * over its fund shards), this month's usage from a ledger Query bounded to the month. Neither reads the
 * whole ledger: the dashboard's first render waits on `GET /v1/account`.
 */
import { MAX_KEYS_PER_ACCOUNT } from '../accounts/limits';
import { rateLimitsFor } from '../config/env';
import { getAccount, type Account } from '../accounts/account-store';
import { accountTotals } from '../billing/account-state';
import { reclaimStrandedLeases } from '../billing/lease-reclaim';
import { chargedSince, monthStartMs } from '../billing/ledger';
import { paymentsEnabled } from '../payments/stripe-client';
import type { JsonResult } from '../http/types';
import type { AccountCaller } from './caller';
import { json, usd } from './json';

/**
 * The account: `{data:{id, email, created_at, free_tokens, free_tokens_held, credit, credit_nano_usd,
 * credit_held, credit_held_nano_usd, total_usage, total_usage_nano_usd, month_usage,
 * month_usage_nano_usd, is_free_tier, key_count, key_limit, rate_limit, payments_enabled,
 * free_grant_withheld}}` (README: "The account API"; `payments_enabled`: Stripe is configured, so the
 * dashboard offers "Add credit"; `free_grant_withheld`: null, or why the sign-up got no free tokens,
 * `already_granted`, `disposable_domain` or `ip_limit`).
 * `total_usage` is the account's `usedNanoUsd` (ADDed by every settle, in the ledger entry's own
 * transaction, so it equals Σ of the ledger's costs to the nano-dollar).
 */
export async function getAccountInfo(caller: AccountCaller): Promise<JsonResult> {
  const a = await withStrandedReclaimed(caller.account);
  const [totals, monthNanoUsd, payments] = await Promise.all([accountTotals(a), chargedSince(a.accountId, monthStartMs(), a.shards), paymentsEnabled()]);
  const freeTier = a.purchasedNanoUsd === 0;
  const limits = rateLimitsFor(a.purchasedNanoUsd);
  return json({
    data: {
      id: a.accountId,
      email: a.email ?? null,
      created_at: a.createdAt,
      free_tokens: totals.freeTokens,
      free_tokens_held: totals.heldFreeTokens,
      credit: usd(totals.creditNanoUsd),
      credit_nano_usd: totals.creditNanoUsd,
      credit_held: usd(totals.heldNanoUsd),
      credit_held_nano_usd: totals.heldNanoUsd,
      total_usage: usd(totals.usedNanoUsd),
      total_usage_nano_usd: totals.usedNanoUsd,
      month_usage: usd(monthNanoUsd),
      month_usage_nano_usd: monthNanoUsd,
      is_free_tier: freeTier,
      key_count: a.keyCount,
      key_limit: MAX_KEYS_PER_ACCOUNT,
      rate_limit: { requests_per_minute: limits.rpm || null, concurrent_requests: limits.concurrent || null },
      payments_enabled: payments,
      free_grant_withheld: a.freeGrantWithheld ?? null,
    },
  });
}

/**
 * OpenRouter's credits: `{data:{total_credits, total_usage}}` in USD, plus the exact integers.
 * total_usage = the account's lifetime charges (Σ ledger costs); total_credits = what is left
 * (available + held) + total_usage, i.e. all credit ever added, so `total_credits − total_usage` is the
 * balance.
 */
export async function getCredits(caller: AccountCaller): Promise<JsonResult> {
  const t = await accountTotals(await withStrandedReclaimed(caller.account));
  const credits = t.creditNanoUsd + t.heldNanoUsd + t.usedNanoUsd;
  return json({ data: { total_credits: usd(credits), total_credits_nano_usd: credits, total_usage: usd(t.usedNanoUsd), total_usage_nano_usd: t.usedNanoUsd } });
}

/**
 * The account as a balance read shows it: while anything is held, leases that containers left past
 * their expiry are reconciled first (billing/lease-reclaim.ts) and, when one was, the account is read
 * again, so credit stranded in a frozen container shows as available. Throws what getAccount throws.
 */
async function withStrandedReclaimed(account: Account): Promise<Account> {
  if (account.heldNanoUsd <= 0 && account.heldFreeTokens <= 0) return account;
  if ((await reclaimStrandedLeases(account.accountId)) === 0) return account;
  return (await getAccount(account.accountId, { consistent: true })) ?? account;
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { getCredits } from '../../functions/shared/account-api/account-routes';
import { clearViews, readState } from '../../functions/shared/billing/account-state';
import { config, reloadConfig } from '../../functions/shared/config/env';
import { decodeInlineHold, type InlineHold } from '../../functions/shared/billing/hold-record';
import { abandonLeasesForTests } from '../../functions/shared/billing/lease';
import { hasStrandedLeases, LEASE_RECLAIM_GRACE_MS, reclaimStrandedLeases, resetReclaimsForTests } from '../../functions/shared/billing/lease-reclaim';
import { requestCost } from '../../functions/shared/billing/lease-settle';
import { startBill, type RequestBill } from '../../functions/shared/billing/request-bill';
import { sweepOrphanedHolds } from '../../functions/shared/billing/sweep';
import { newRequestId } from '../../functions/shared/http/request-id';
import { setClock } from '../../functions/shared/time/clock';
import { demandOf, entryOf } from '../support/billing';
import { useLeaseTestEnv } from '../support/lease-env';
import { accountItem, costSum, ledgerEntries } from '../support/ledger';

/**
 * Stranded leases (billing/lease-reclaim.ts, docs/credit-leases.md "Stranded leases"): a lease left on
 * the account by a container that stopped serving it (here: `abandonLeasesForTests`, as a frozen or
 * killed container forgets nothing but never runs again) is reconciled from its ledger entries by the
 * account's next lease take, by a hold the leased credit would refuse, and by the account API's balance
 * read, once the lease has expired; never before, and never twice. Real DynamoDB Local; the billing
 * clock is moved past the expiry instead of waiting for it.
 */
const USD = 1_000_000_000;
useLeaseTestEnv('lease-reclaim', { CREDIT_LEASE_SHARE_PERCENT: '90' });
beforeEach(() => resetReclaimsForTests());
afterEach(() => setClock(undefined));

function bill(accountId: string, keyHash: string, prompt = 100, output = 200): RequestBill {
  return startBill({ accountId, keyHash, requestId: newRequestId(), publicModel: 'gpt-4o', demand: demandOf(prompt, output), promptTokensEstimate: prompt });
}

/**
 * An account with `credit` nano-USD and a key, whose lease (90% of the credit) is left behind by a
 * container that answered `answered` requests on it and then stopped: the lease's inline record.
 */
async function stranded(credit: number, answered: number): Promise<{ accountId: string; keyHash: string; lease: InlineHold; billed: number }> {
  const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: credit });
  const { keyHash } = await createKey(accountId, 'reclaim');
  const bills = Array.from({ length: answered }, () => bill(accountId, keyHash));
  const records = await Promise.all(bills.map((b) => b.confirmed));
  expect(records.every((r) => r.leaseId !== undefined)).toBe(true);
  let billed = 0;
  for (const [i, b] of bills.entries()) billed += (await b.settle(entryOf(100, 10 + 15 * i)))!.costNanoUsd;
  abandonLeasesForTests(); // the container is frozen for good: its lease stays on the item
  clearViews();
  const holds = (await accountItem(accountId)).holds as Record<string, unknown>;
  const [leaseId, value] = Object.entries(holds)[0]!;
  expect(Object.keys(holds)).toHaveLength(1);
  return { accountId, keyHash, lease: decodeInlineHold(accountId, leaseId, value)!, billed };
}

/** Moves the billing clock to `ms` past the lease's expiry and the grace. */
const pastExpiry = (lease: InlineHold, ms = 1) => setClock(() => lease.holdExpiresAt + LEASE_RECLAIM_GRACE_MS + ms);

/** The account is conserved and the stranded lease charged exactly what its ledger entries say. */
async function expectReconciled(accountId: string, granted: number, leaseId: string) {
  const raw = await accountItem(accountId);
  const ledger = await ledgerEntries(accountId);
  expect(Object.keys(raw.holds as object)).not.toContain(leaseId);
  expect(raw.creditNanoUsd + raw.heldNanoUsd + raw.usedNanoUsd).toBe(granted);
  expect(costSum(ledger)).toBe(raw.usedNanoUsd);
  return { raw, ledger };
}

describe('stranded leases, reclaimed at the next touch', { timeout: 120_000 }, () => {
  it('not before the lease has expired (a request admitted in its validity may still be running), and then by the next lease take, before it slices', async () => {
    const granted = 2 * USD;
    const { accountId, keyHash, lease, billed } = await stranded(granted, 6);
    const state = await readState(accountId, { consistent: true });
    expect(hasStrandedLeases(state, lease.holdExpiresAt + LEASE_RECLAIM_GRACE_MS - 1)).toBe(false);
    expect(hasStrandedLeases(state, lease.holdExpiresAt + LEASE_RECLAIM_GRACE_MS + 1)).toBe(true);
    expect(await reclaimStrandedLeases(accountId, lease.holdExpiresAt + LEASE_RECLAIM_GRACE_MS - 1)).toBe(0);
    expect(Object.keys((await accountItem(accountId)).holds as object)).toEqual([lease.requestId]);

    resetReclaimsForTests();
    pastExpiry(lease);
    const next = bill(accountId, keyHash);
    const record = await next.confirmed;
    const { raw, ledger } = await expectReconciled(accountId, granted, lease.requestId);
    expect(costSum(ledger)).toBe(billed);
    // The new lease is 90% of all that is left, the stranded lease's unspent part included.
    expect(record.leaseId).toBeDefined();
    const [newLease] = Object.entries(raw.holds as Record<string, unknown>).map(([id, v]) => decodeInlineHold(accountId, id, v)!);
    expect(newLease!.requestId).toBe(record.leaseId);
    expect(newLease!.holdNanoUsd).toBe(Math.floor((granted - billed) * 0.9));
    await next.settle(entryOf(100, 50));
  });

  it('a request the leased credit would refuse (402 on the store): the expired lease is reconciled and the request admitted; before its expiry, the 402 stands', async () => {
    const granted = 20 * requestCost(demandOf(100, 200));
    const { accountId, keyHash, lease, billed } = await stranded(granted, 2);
    const big = () => bill(accountId, keyHash, 100, 200 * 4); // 4 requests' most: more than the 10% not leased
    await expect(big().confirmed).rejects.toMatchObject({ status: 402 });
    expect(Object.keys((await accountItem(accountId)).holds as object)).toEqual([lease.requestId]);

    // A container with leases off (the hold path alone) meets the stranded lease.
    process.env.CREDIT_LEASE_VALIDITY_MS = '0';
    reloadConfig();
    let charged: number;
    try {
      clearViews();
      pastExpiry(lease);
      const admitted = big();
      const record = await admitted.confirmed;
      expect(record.leaseId).toBeUndefined();
      charged = (await admitted.settle(entryOf(100, 300)))!.costNanoUsd;
    } finally {
      process.env.CREDIT_LEASE_VALIDITY_MS = '60000';
      reloadConfig();
    }
    const { raw, ledger } = await expectReconciled(accountId, granted, lease.requestId);
    expect(ledger).toHaveLength(3);
    expect(costSum(ledger)).toBe(billed + charged);
    expect(raw.heldNanoUsd).toBe(0);
    expect(raw.creditNanoUsd).toBe(granted - billed - charged);
  });

  it('the account API balance read shows the stranded credit as available once the lease has expired', async () => {
    const granted = 3 * USD;
    const { accountId, lease, billed } = await stranded(granted, 4);
    const credits = async () => {
      const r = await getCredits({ accountId, email: undefined, account: (await getAccount(accountId, { consistent: true }))! });
      return r.body as { data: { total_credits_nano_usd: number; total_usage_nano_usd: number } };
    };
    const account = async () => (await getAccount(accountId, { consistent: true }))!;
    expect((await credits()).data.total_usage_nano_usd).toBe(0); // the lease's spending is not known yet
    expect((await account()).heldNanoUsd).toBe(lease.holdNanoUsd);
    pastExpiry(lease);
    const { data } = await credits();
    expect(data).toMatchObject({ total_credits_nano_usd: granted, total_usage_nano_usd: billed });
    expect(await account()).toMatchObject({ heldNanoUsd: 0, creditNanoUsd: granted - billed });
    await expectReconciled(accountId, granted, lease.requestId);
  });

  it('a reclaim racing the orphan sweep (and a second reclaim) reconciles the lease once', async () => {
    const granted = 2 * USD;
    const { accountId, lease, billed } = await stranded(granted, 5);
    const at = lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + LEASE_RECLAIM_GRACE_MS + 1;
    const [reclaimed, swept] = await Promise.all([reclaimStrandedLeases(accountId, at), sweepOrphanedHolds(at)]);
    resetReclaimsForTests();
    const again = await reclaimStrandedLeases(accountId, at);
    expect(reclaimed + again).toBeLessThanOrEqual(1);
    expect(swept.failed).toBe(0);
    const { raw, ledger } = await expectReconciled(accountId, granted, lease.requestId);
    expect(costSum(ledger)).toBe(billed);
    expect(raw.creditNanoUsd).toBe(granted - billed);
    expect(raw.heldNanoUsd).toBe(0);
  });
});

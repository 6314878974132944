import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dynamoItemBytes } from '../../bench/aws-calls';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { clearViews } from '../../functions/shared/billing/account-state';
import { config } from '../../functions/shared/config/env';
import { settleHold } from '../../functions/shared/billing/settle';
import { ledgerItemSchema } from '../../functions/shared/billing/ledger';
import { computeCharge } from '../../functions/shared/money/price';
import { listPendingHolds, sweepOrphanedHolds } from '../../functions/shared/billing/sweep';
import { demandOf, entryOf, GPT_4O_PRICES, hold } from '../support/billing';
import { createTestTables } from '../support/tables';
import { accountItem, ledgerEntries } from '../support/ledger';

/**
 * Holds in flight live inline on the account item (`holds.<requestId>`); the orphan sweep finds them
 * through the accounts table's sparse pendingHolds index and settles those past expiry + grace as
 * `orphaned`, once.
 */
beforeAll(async () => {
  await createTestTables('orphans');
});
beforeEach(() => clearViews());

const USD = 1_000_000_000;

describe('orphaned holds (inline on the account item)', () => {
  it('a request killed after its hold is settled by the sweep past expiry + grace, once, as orphaned, with funds released and the account conserved', async () => {
    const { accountId } = await createAccount({ freeTokens: 20, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'orphan');
    await createKey(accountId, 'other');
    // The request path dies after its hold: no settle, no queued message.
    const h = await hold(accountId, keyHash, demandOf(120, 300));
    expect(await ledgerEntries(accountId)).toEqual([]);
    expect((await listPendingHolds()).map((x) => x.requestId)).toContain(h.requestId);

    // Not yet past expiry + grace: nothing happens.
    const early = await sweepOrphanedHolds(h.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS - 1);
    expect(early).toEqual({ settled: 0, failed: 0 });
    expect(Object.keys((await accountItem(accountId)).holds)).toEqual([h.requestId]);

    const late = h.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + 1;
    expect(await sweepOrphanedHolds(late)).toEqual({ settled: 1, failed: 0 });
    const ledger = await ledgerEntries(accountId);
    expect(ledger).toHaveLength(1);
    const entry = ledgerItemSchema.parse(ledger[0]);
    const charge = computeCharge({ promptTokens: 120, completionTokens: 0, freeTokensAvailable: 20, ...GPT_4O_PRICES });
    // The ledger names the key by its full hash (found through the keys table), like any other entry.
    expect(entry).toMatchObject({
      requestId: h.requestId,
      status: 'orphaned',
      usageEstimated: true,
      promptTokens: 120,
      completionTokens: 0,
      keyHash,
      publicModel: 'gpt-4o',
      freeTokensUsed: charge.freeTokensUsed,
      costNanoUsd: charge.costNanoUsd,
    });
    const account = await getAccount(accountId, { consistent: true });
    expect(account).toMatchObject({ heldNanoUsd: 0, heldFreeTokens: 0, usedNanoUsd: charge.costNanoUsd, usedFreeTokens: charge.freeTokensUsed });
    expect(account!.creditNanoUsd + account!.usedNanoUsd).toBe(USD);
    expect(account!.freeTokens + account!.usedFreeTokens).toBe(20);
    const raw = await accountItem(accountId);
    expect(raw.holds).toEqual({});
    expect(raw.inflight).toBe(0);
    const keyEntry = (raw.keys as Record<string, { heldNanoUsd: number; inflight?: number }>)[keyHash.slice(0, 16)]!;
    expect(keyEntry.heldNanoUsd).toBe(0);
    expect(keyEntry.inflight ?? 0).toBe(0);

    // Running the sweep again (and again) changes nothing; a late settle of the request is a no-op too.
    expect(await sweepOrphanedHolds(late + 60_000)).toEqual({ settled: 0, failed: 0 });
    expect(await sweepOrphanedHolds(late + 120_000)).toEqual({ settled: 0, failed: 0 });
    expect(await settleHold(h, { kind: 'bill', entry: entryOf(120, 300) })).toEqual({
      alreadySettled: true,
      freeTokensUsed: charge.freeTokensUsed,
      costNanoUsd: charge.costNanoUsd,
    });
    expect(await settleHold(h, { kind: 'cancel' })).toMatchObject({ alreadySettled: true });
    // The next sweep found the item without holds and took it out of the pendingHolds index.
    expect(raw.sweepShard).toMatch(/^s\d+$/);
    const { sweepShard: _mark, ...unmarked } = raw;
    expect(await accountItem(accountId)).toEqual(unmarked);
    expect(await ledgerEntries(accountId)).toHaveLength(1);
  });

  it("a sweep racing the request's own settle bills the request once: one ledger entry, the account conserved", async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'race');
    const holds = await Promise.all(Array.from({ length: 6 }, () => hold(accountId, keyHash, demandOf(50, 100))));
    const late = Math.max(...holds.map((h) => h.holdExpiresAt)) + config().HOLD_SWEEP_GRACE_MS + 1;
    const [swept, ...settled] = await Promise.all([sweepOrphanedHolds(late), ...holds.map((h) => settleHold(h, { kind: 'bill', entry: entryOf(50, 80) }))]);
    const ledger = (await ledgerEntries(accountId)).map((e) => ledgerItemSchema.parse(e));
    expect(ledger).toHaveLength(6);
    expect(swept.settled + settled.filter((r) => !r.alreadySettled).length).toBe(6);
    const account = (await getAccount(accountId, { consistent: true }))!;
    const cost = ledger.reduce((s, e) => s + e.costNanoUsd, 0);
    expect(account).toMatchObject({ heldNanoUsd: 0, usedNanoUsd: cost, creditNanoUsd: USD - cost });
    expect((await accountItem(accountId)).holds).toEqual({});
  });

  it('a late duplicate of a hold write landing after the request was settled is released by the sweep, with nothing charged twice', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'late');
    const h = await hold(accountId, keyHash, demandOf(40, 60));
    const first = await settleHold(h, { kind: 'bill', entry: entryOf(40, 30) });
    const settled = await getAccount(accountId, { consistent: true });
    // The SDK's first attempt of the hold reaches DynamoDB only now: the same write, the same request id.
    clearViews();
    await hold(accountId, keyHash, demandOf(40, 60), h.requestId);
    expect((await getAccount(accountId, { consistent: true }))!.heldNanoUsd).toBe(h.holdNanoUsd);
    // The sweep (or any settle of the request) meets the entry and the hold together: the hold is released.
    // (The helper gave the duplicate a fresh expiry, a few ms after the original's.)
    expect(await sweepOrphanedHolds(h.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + 60_000)).toEqual({ settled: 0, failed: 0 });
    expect(await getAccount(accountId, { consistent: true })).toEqual(settled);
    expect((await accountItem(accountId)).holds).toEqual({});
    const ledger = (await ledgerEntries(accountId)).map((e) => ledgerItemSchema.parse(e));
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ status: 'complete', costNanoUsd: first.costNanoUsd });
  });

  it('measures the account item with 0, 1, 5 and 50 holds in flight (each byte is paid on every write of the item)', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'size');
    for (let k = 1; k < 3; k++) await createKey(accountId, `size ${k}`);
    // One settled request first, so the key's entry carries its lastUsedAt / used / rpm fields.
    await settleHold(await hold(accountId, keyHash, demandOf(50, 100)), { kind: 'bill', entry: entryOf(50, 100) });
    const sizes: Record<number, number> = { 0: dynamoItemBytes(await accountItem(accountId)) };
    let held = 0;
    for (const n of [1, 5, 50]) {
      while (held < n) {
        await hold(accountId, keyHash, demandOf(50, 100));
        held++;
      }
      sizes[n] = dynamoItemBytes(await accountItem(accountId));
    }
    console.log(`account item (3 keys) with 0 / 1 / 5 / 50 holds in flight: ${[0, 1, 5, 50].map((n) => sizes[n]).join(' / ')} bytes`);
    const perHold = (sizes[50]! - sizes[0]!) / 50;
    // A compact inline record: the request id (26 B) + ~50 B of value + map overhead; under 100 B each.
    expect(perHold).toBeLessThan(100);
    expect(sizes[1]!).toBeLessThanOrEqual(1024); // one hold in flight: the hold is 1 WRU, the settle's account update 2
  });
});

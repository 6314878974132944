import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { revokeKey } from '../../functions/shared/accounts/keys/api-key-update';
import { clearViews } from '../../functions/shared/billing/account-state';
import { newRequestId } from '../../functions/shared/http/request-id';
import { usageSummary, ledgerItemSchema } from '../../functions/shared/billing/ledger';
import { decodeInlineHold } from '../../functions/shared/billing/hold-record';
import { computeCharge } from '../../functions/shared/money/price';
import { settleHold } from '../../functions/shared/billing/settle';
import { billRequest, demandOf, entryOf, GPT_4O_PRICES, hold } from '../support/billing';
import { createTestTables } from '../support/tables';
import { accountItem, ledgerEntries } from '../support/ledger';

beforeAll(async () => {
  await createTestTables('ledger');
});
beforeEach(() => clearViews());

const USD = 1_000_000_000;

async function accountWithKey(opts: { freeTokens: number; creditNanoUsd: number }) {
  const { accountId } = await createAccount(opts);
  const { keyHash } = await createKey(accountId, 'test');
  return { accountId, keyHash };
}

describe('hold and settle', () => {
  it('keeps ledger sums equal to what 50 concurrent requests took from the account, exactly, with nothing left held', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 1_000, creditNanoUsd: 1 * USD });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => billRequest(accountId, keyHash, 17 + i, 3 + (i % 7) * 11)));
    expect(results.every((r) => !r.alreadySettled)).toBe(true);
    const account = (await getAccount(accountId, { consistent: true }))!;
    const ledger = (await ledgerEntries(accountId)).map((i) => ledgerItemSchema.parse(i));
    expect(ledger).toHaveLength(50);
    expect(ledger.reduce((s, e) => s + e.costNanoUsd, 0)).toBe(1 * USD - account.creditNanoUsd);
    expect(ledger.reduce((s, e) => s + e.freeTokensUsed, 0)).toBe(1_000 - account.freeTokens);
    expect(account.usedNanoUsd).toBe(1 * USD - account.creditNanoUsd);
    expect(account).toMatchObject({ heldNanoUsd: 0, heldFreeTokens: 0 });
    for (const e of ledger) {
      // Each entry's cost follows from its own free split: prompt first, one upward rounding.
      const again = computeCharge({ ...e, freeTokensAvailable: e.freeTokensUsed });
      expect(again.costNanoUsd).toBe(e.costNanoUsd);
    }
  });

  it('holds free tokens first, prompt before output, and credit for the rest; settle releases the remainder', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 100, creditNanoUsd: USD });
    const h = await hold(accountId, keyHash, demandOf(30, 500));
    expect(h.holdFreeTokens).toBe(100);
    expect(h.holdNanoUsd).toBe(computeCharge({ promptTokens: 30, completionTokens: 500, freeTokensAvailable: 100, ...GPT_4O_PRICES }).costNanoUsd);
    expect(await getAccount(accountId, { consistent: true })).toMatchObject({
      freeTokens: 0,
      heldFreeTokens: 100,
      creditNanoUsd: USD - h.holdNanoUsd,
      heldNanoUsd: h.holdNanoUsd,
    });
    const r = await settleHold(h, { kind: 'bill', entry: entryOf(30, 20) });
    expect(r).toEqual({ alreadySettled: false, freeTokensUsed: 50, costNanoUsd: 0 });
    expect(await getAccount(accountId, { consistent: true })).toMatchObject({
      freeTokens: 50,
      heldFreeTokens: 0,
      creditNanoUsd: USD,
      heldNanoUsd: 0,
      usedFreeTokens: 50,
    });
  });

  it('treats a repeated settle of one request id as a no-op returning the first charge', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 10, creditNanoUsd: USD });
    const h = await hold(accountId, keyHash, demandOf(30, 20));
    const first = await settleHold(h, { kind: 'bill', entry: entryOf(30, 20) });
    expect(first).toMatchObject({ alreadySettled: false, freeTokensUsed: 10 });
    const before = await getAccount(accountId, { consistent: true });
    const replays = await Promise.all([
      settleHold(h, { kind: 'bill', entry: entryOf(30, 20) }),
      settleHold(h, { kind: 'bill', entry: entryOf(999, 20) }),
      settleHold(h, { kind: 'cancel' }),
    ]);
    for (const r of replays) expect(r).toEqual({ ...first, alreadySettled: true });
    expect(await getAccount(accountId, { consistent: true })).toEqual(before);
    expect(await ledgerEntries(accountId)).toHaveLength(1);
  });

  it('holds on the account item alone (one inline record, no ledger item); the settle writes exactly one entry with every field and removes the inline record', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 0, creditNanoUsd: USD });
    const h = await hold(accountId, keyHash, demandOf(30, 20));
    expect(await ledgerEntries(accountId)).toEqual([]);
    const holds = (await accountItem(accountId))?.holds as Record<string, unknown>;
    expect(Object.keys(holds)).toEqual([h.requestId]);
    expect(decodeInlineHold(accountId, h.requestId, holds[h.requestId])).toMatchObject({
      holdNanoUsd: h.holdNanoUsd,
      holdFreeTokens: h.holdFreeTokens,
      holdExpiresAt: h.holdExpiresAt,
      h16: keyHash.slice(0, 16),
      publicModel: h.publicModel,
      accountSlot: h.accountSlot,
      keySlot: h.keySlot,
      keyLimited: h.keyLimited,
      promptTokensEstimate: h.promptTokensEstimate,
      holdInputPrice: h.holdInputPrice,
      holdOutputPrice: h.holdOutputPrice,
    });
    const e = entryOf(30, 20, { usageEstimated: true, status: 'partial', servedModel: 'gpt-4o-mini', fallbackPath: ['a', 'b'] });
    const r = await settleHold(h, { kind: 'bill', entry: e });
    const ledger = await ledgerEntries(accountId);
    expect(ledger).toHaveLength(1);
    const { holdExpiresAt: _e, ...held } = h;
    expect(ledger[0]).toEqual({ ...held, ...e, freeTokensUsed: 0, costNanoUsd: r.costNanoUsd, keyHash, byok: false, settledAt: expect.any(String) });
    expect(ledgerItemSchema.parse(ledger[0])).toBeDefined();
    expect((await accountItem(accountId))?.holds).toEqual({});
    expect(r.costNanoUsd).toBe(Math.ceil((30 * 2_637_500 + 20 * 10_550_000) / 1000));
  });

  it('cancels a hold without a ledger entry, releasing everything', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 5, creditNanoUsd: USD });
    const h = await hold(accountId, keyHash, demandOf(30, 20));
    expect(await settleHold(h, { kind: 'cancel' })).toEqual({ alreadySettled: false, freeTokensUsed: 0, costNanoUsd: 0 });
    expect(await ledgerEntries(accountId)).toHaveLength(0);
    expect(await getAccount(accountId, { consistent: true })).toMatchObject({ freeTokens: 5, creditNanoUsd: USD, heldNanoUsd: 0, heldFreeTokens: 0 });
  });

  // A bill never exceeds its hold, even when the upstream reports more usage than was held.
  it('charges the hold at most when the upstream counted more than was held, records the rest as the loss, and settles a key deleted meanwhile', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 0, creditNanoUsd: USD });
    const h = await hold(accountId, keyHash, demandOf(10, 10));
    await revokeKey(accountId, keyHash);
    const r = await settleHold(h, { kind: 'bill', entry: entryOf(400, 10) });
    const reported = computeCharge({ promptTokens: 400, completionTokens: 10, freeTokensAvailable: 0, ...GPT_4O_PRICES }).costNanoUsd;
    expect(reported).toBeGreaterThan(h.holdNanoUsd);
    expect(r.costNanoUsd).toBe(h.holdNanoUsd);
    expect(await getAccount(accountId, { consistent: true })).toMatchObject({ creditNanoUsd: USD - h.holdNanoUsd, heldNanoUsd: 0, usedNanoUsd: h.holdNanoUsd });
    const [entry] = await ledgerEntries(accountId);
    expect(ledgerItemSchema.parse(entry)).toMatchObject({ promptTokens: 400, costNanoUsd: h.holdNanoUsd, lossNanoUsd: reported - h.holdNanoUsd });
  });

  it('never spills a request held in free tokens into credit', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 1_000, creditNanoUsd: USD });
    const h = await hold(accountId, keyHash, demandOf(30, 20));
    expect(h).toMatchObject({ holdFreeTokens: 50, holdNanoUsd: 0 });
    const r = await settleHold(h, { kind: 'bill', entry: entryOf(30, 180_002) });
    expect(r).toEqual({ alreadySettled: false, freeTokensUsed: 50, costNanoUsd: 0 });
    expect(await getAccount(accountId, { consistent: true })).toMatchObject({ freeTokens: 950, creditNanoUsd: USD, heldFreeTokens: 0, heldNanoUsd: 0 });
    const [entry] = await ledgerEntries(accountId);
    expect(entry?.lossNanoUsd).toBe(computeCharge({ promptTokens: 30, completionTokens: 180_002, freeTokensAvailable: 50, ...GPT_4O_PRICES }).costNanoUsd);
  });
});

describe('newRequestId', () => {
  it('sorts in time order and never repeats', () => {
    const ids = [newRequestId(1_000), newRequestId(999_999), newRequestId(Date.now()), newRequestId(Date.now() + 1)];
    expect([...ids].sort()).toEqual(ids);
    expect(ids[2]).toMatch(/^req_\d{13}_[0-9a-f]{16}$/);
    const many = new Set(Array.from({ length: 10_000 }, () => newRequestId(5)));
    expect(many.size).toBe(10_000);
  });
});

describe('usageSummary', () => {
  it('sums tokens and cost of settled entries over all pages, by model, from a start time, skipping holds in flight', async () => {
    const { accountId, keyHash } = await accountWithKey({ freeTokens: 0, creditNanoUsd: USD });
    const old = Date.parse('2024-01-01T00:00:00Z');
    const oldHold = await hold(accountId, keyHash, demandOf(30, 20), newRequestId(old));
    await settleHold(oldHold, { kind: 'bill', entry: entryOf(30, 20, { publicModel: 'claude-3-5-sonnet' }) });
    const recent = await Promise.all(Array.from({ length: 3 }, () => billRequest(accountId, keyHash, 30, 20)));
    await hold(accountId, keyHash, demandOf(30, 20)); // in flight: not usage yet
    const all = await usageSummary(accountId);
    expect(all).toMatchObject({ accountId, requests: 4, promptTokens: 120, completionTokens: 80, freeTokensUsed: 0 });
    expect(all.byModel['claude-3-5-sonnet']?.requests).toBe(1);
    expect(all.byModel['gpt-4o']?.costNanoUsd).toBe(recent.reduce((s, r) => s + r.costNanoUsd, 0));
    const acct = (await getAccount(accountId, { consistent: true }))!;
    expect(all.costNanoUsd).toBe(USD - acct.creditNanoUsd - acct.heldNanoUsd);
    const since = await usageSummary(accountId, { since: '2025-01-01T00:00:00Z' });
    expect(since).toMatchObject({ requests: 3, since: '2025-01-01T00:00:00.000Z' });
    await expect(usageSummary(accountId, { since: 'yesterday' })).rejects.toMatchObject({ status: 400 });
  });
});

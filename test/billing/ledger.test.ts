import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { admit } from '../../functions/shared/billing/admit';
import { clearBalanceCache } from '../../functions/shared/billing/balance-cache';
import { LedgerWriteError, newRequestId, settle, usageSummary, type LedgerEntryInput } from '../../functions/shared/billing/ledger';
import { ledgerItemSchema } from '../../functions/shared/billing/ledger-entry';
import { computeCharge } from '../../functions/shared/billing/price';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

beforeAll(async () => {
  await createTestTables('ledger');
});
beforeEach(() => clearBalanceCache());

const USD = 1_000_000_000;

function entry(accountId: string, over: Partial<LedgerEntryInput> = {}): LedgerEntryInput {
  return {
    accountId, requestId: newRequestId(), publicModel: 'gpt-4o', servedModel: 'gpt-4o', provider: 'openai',
    promptTokens: 30, completionTokens: 20, inputPrice: 2_637_500, outputPrice: 10_550_000,
    usageEstimated: false, fallbackPath: ['gpt-4o@openai/gpt-4o:ok'], ...over,
  };
}

async function ledgerOf(accountId: string) {
  const out = await documentClient().send(
    new QueryCommand({ TableName: tableNames().ledger, KeyConditionExpression: 'accountId = :a', ExpressionAttributeValues: { ':a': accountId }, ConsistentRead: true }),
  );
  return (out.Items ?? []).map((i) => ledgerItemSchema.parse(i));
}

/** Sets the stored free tokens behind this container's back (as other containers' settles would). */
async function setStoredFreeTokens(accountId: string, freeTokens: number) {
  await documentClient().send(
    new UpdateCommand({ TableName: tableNames().accounts, Key: { accountId }, UpdateExpression: 'SET freeTokens = :f', ExpressionAttributeValues: { ':f': freeTokens } }),
  );
}

describe('settle', () => {
  it('keeps ledger sums equal to what 50 concurrent settles took from the account, exactly', async () => {
    const { accountId } = await createAccount({ freeTokens: 1_000, creditNanoUsd: 1 * USD });
    await admit(accountId); // warm the balance cache as the request path does
    const entries = Array.from({ length: 50 }, (_, i) =>
      entry(accountId, { promptTokens: 17 + i, completionTokens: 3 + (i % 7) * 11, inputPrice: 2_637_501 + i, outputPrice: 10_550_000 }),
    );
    const results = await Promise.all(entries.map((e) => settle(e)));
    expect(results.every((r) => !r.alreadySettled)).toBe(true);

    const account = (await getAccount(accountId, { consistent: true }))!;
    const ledger = await ledgerOf(accountId);
    expect(ledger).toHaveLength(50);
    const spentCredit = 1 * USD - account.creditNanoUsd;
    const spentFree = 1_000 - account.freeTokens;
    expect(ledger.reduce((s, e) => s + e.costNanoUsd, 0)).toBe(spentCredit);
    expect(ledger.reduce((s, e) => s + e.freeTokensUsed, 0)).toBe(spentFree);
    expect(account.freeTokens).toBe(0); // 50 requests need far more than 1,000 tokens: all free tokens used
    expect(spentCredit).toBeGreaterThan(0);
    for (const e of ledger) {
      // Each entry's cost follows from its own free split: prompt first, one upward rounding.
      const again = computeCharge({ ...e, freeTokensAvailable: e.freeTokensUsed });
      expect(again.freeTokensUsed).toBe(e.freeTokensUsed);
      expect(again.costNanoUsd).toBe(e.costNanoUsd);
    }
  });

  it('treats a replayed request id as a no-op returning the first charge', async () => {
    const { accountId } = await createAccount({ freeTokens: 10, creditNanoUsd: USD });
    const e = entry(accountId);
    const first = await settle(e);
    expect(first).toMatchObject({ alreadySettled: false, freeTokensUsed: 10 });
    const before = await getAccount(accountId, { consistent: true });
    const replays = await Promise.all([settle(e), settle({ ...e, promptTokens: 999 })]);
    for (const r of replays) expect(r).toEqual({ ...first, alreadySettled: true });
    expect(await getAccount(accountId, { consistent: true })).toEqual(before);
    expect(await ledgerOf(accountId)).toHaveLength(1);
  });

  it('stores every input field with the charge and creation time', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const e = entry(accountId, { usageEstimated: true, status: 'partial', servedModel: 'gpt-4o-mini', fallbackPath: ['a', 'b'] });
    const r = await settle(e);
    const [stored] = await ledgerOf(accountId);
    expect(stored).toEqual({ ...e, freeTokensUsed: 0, costNanoUsd: r.costNanoUsd, createdAt: expect.any(String) });
    expect(r.costNanoUsd).toBe(Math.ceil((30 * 2_637_500 + 20 * 10_550_000) / 1000));
  });

  it('recomputes the free split when the store has fewer free tokens than this container thought', async () => {
    const { accountId } = await createAccount({ freeTokens: 1_000, creditNanoUsd: USD });
    await admit(accountId); // caches 1,000
    await setStoredFreeTokens(accountId, 10);
    const r = await settle(entry(accountId, { promptTokens: 30, completionTokens: 20, inputPrice: 1_000, outputPrice: 2_000 }));
    expect(r).toEqual({ alreadySettled: false, freeTokensUsed: 10, costNanoUsd: 20 + 40 });
    expect((await getAccount(accountId, { consistent: true }))?.freeTokens).toBe(0);
  });

  it('re-reads a locally lowered balance before charging credit where free tokens may remain', async () => {
    const { accountId } = await createAccount({ freeTokens: 60, creditNanoUsd: USD });
    await settle(entry(accountId, { promptTokens: 50, completionTokens: 0 })); // cache now says 10, inexact
    await setStoredFreeTokens(accountId, 100);
    const r = await settle(entry(accountId, { promptTokens: 30, completionTokens: 20 }));
    expect(r.freeTokensUsed).toBe(50);
  });

  it('lets credit go negative by the cost of a request already admitted', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000 });
    await admit(accountId);
    const r = await settle(entry(accountId));
    expect((await getAccount(accountId, { consistent: true }))?.creditNanoUsd).toBe(1_000 - r.costNanoUsd);
    await expect(admit(accountId)).rejects.toMatchObject({ status: 402 });
  });

  it('throws LedgerWriteError with the entry for an unknown account or invalid numbers', async () => {
    const missing = entry('acct_nobody');
    await expect(settle(missing)).rejects.toMatchObject({ name: 'LedgerWriteError', entry: missing });
    const { accountId } = await createAccount();
    const bad = entry(accountId, { promptTokens: 1.5 });
    await expect(settle(bad)).rejects.toBeInstanceOf(LedgerWriteError);
    expect(await ledgerOf(accountId)).toHaveLength(0);
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
  it('sums tokens and cost over all pages, by model, and from a start time', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const old = Date.parse('2024-01-01T00:00:00Z');
    await settle(entry(accountId, { requestId: newRequestId(old), publicModel: 'claude-3-5-sonnet' }));
    const recent = await Promise.all(Array.from({ length: 3 }, () => settle(entry(accountId))));
    const all = await usageSummary(accountId);
    expect(all).toMatchObject({ accountId, requests: 4, promptTokens: 120, completionTokens: 80, freeTokensUsed: 0 });
    expect(all.byModel['claude-3-5-sonnet']?.requests).toBe(1);
    expect(all.byModel['gpt-4o']?.costNanoUsd).toBe(recent.reduce((s, r) => s + r.costNanoUsd, 0));
    expect(all.costNanoUsd).toBe(USD - (await getAccount(accountId, { consistent: true }))!.creditNanoUsd);
    const since = await usageSummary(accountId, { since: '2025-01-01T00:00:00Z' });
    expect(since).toMatchObject({ requests: 3, since: '2025-01-01T00:00:00.000Z' });
    await expect(usageSummary(accountId, { since: 'yesterday' })).rejects.toMatchObject({ status: 400 });
  });
});

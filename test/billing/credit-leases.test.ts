import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/key-store';
import { clearViews, shardStateOf } from '../../functions/shared/billing/account-state';
import { config, loadConfig } from '../../functions/shared/config/env';
import { decodeInlineHold, recordOfInline } from '../../functions/shared/billing/hold-record';
import { abandonLeasesForTests, leaseSlice, requestCost, returnAllLeases } from '../../functions/shared/billing/lease';
import { settleRecord } from '../../functions/shared/billing/lease-settle';
import { chargeFor } from '../../functions/shared/billing/settle';
import { newRequestId } from '../../functions/shared/http/request-id';
import { startBill, type RequestBill } from '../../functions/shared/billing/request-bill';
import { sweepOrphanedHolds } from '../../functions/shared/billing/sweep';
import { reloadConfig } from '../../functions/shared/config/env';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { demandOf, entryOf } from '../support/billing';
import { countStoreCalls, createTestTables } from '../support/tables';

/**
 * Credit leases (billing/lease.ts, docs/credit-leases.md): one conditional write leases a slice of an
 * account's credit to this module instance, which admits requests against it in memory (no store
 * write before the answer), writes one ledger entry per request and returns what is left. Real
 * DynamoDB Local, the real billing core; a second module instance (vi.resetModules) is a second container.
 */
const USD = 1_000_000_000;
const savedEnv = { ...process.env };

beforeAll(async () => {
  await createTestTables('leases');
  Object.assign(process.env, { CREDIT_LEASE_VALIDITY_MS: '60000', CREDIT_LEASE_IDLE_MS: '60000', RATE_LIMIT_RPM: '0', RATE_LIMIT_CONCURRENT: '0', RATE_LIMIT_FREE_RPM: '0', RATE_LIMIT_FREE_CONCURRENT: '0' });
  reloadConfig();
});
beforeEach(async () => {
  await returnAllLeases();
  abandonLeasesForTests();
  clearViews();
});

/**
 * Runs `f` over `items` 10 at a time: settles run after the answers, and the run's one DynamoDB Local
 * (shared by every test file) answers 200 writes at once slower than the in-process settle budget.
 */
async function inChunks<T, R>(items: readonly T[], f: (item: T, i: number) => Promise<R>, size = 10): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map((x, k) => f(x, i + k)))));
  return out;
}
afterAll(() => {
  process.env = { ...savedEnv };
  reloadConfig();
});

async function rawAccount(accountId: string) {
  return (await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }))).Item!;
}

async function ledgerOf(accountId: string) {
  const items: Array<Record<string, unknown>> = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await documentClient().send(new QueryCommand({ TableName: tableNames().ledger, KeyConditionExpression: 'accountId = :a', ExpressionAttributeValues: { ':a': accountId }, ConsistentRead: true, ExclusiveStartKey }));
    items.push(...(out.Items ?? []));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

const sum = (items: Array<Record<string, unknown>>) => items.reduce((n, i) => n + Number(i.costNanoUsd), 0);

/** An account with credit only (no free tokens) and a key. */
async function funded(creditNanoUsd: number) {
  const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd });
  const { keyHash } = await createKey(accountId, 'lease');
  return { accountId, keyHash };
}

function bill(start: typeof startBill, accountId: string, keyHash: string, prompt = 100, output = 200): RequestBill {
  return start({ accountId, keyHash, requestId: newRequestId(), publicModel: 'gpt-4o', demand: demandOf(prompt, output), promptTokensEstimate: prompt });
}

/** The account is conserved: what is available + held + used is what was granted; the ledger sums to what was used. */
async function expectConserved(accountId: string, granted: number) {
  const raw = await rawAccount(accountId);
  const ledger = await ledgerOf(accountId);
  expect(raw.creditNanoUsd + raw.heldNanoUsd + raw.usedNanoUsd).toBe(granted);
  expect(sum(ledger)).toBe(raw.usedNanoUsd);
  expect(raw.creditNanoUsd).toBeGreaterThanOrEqual(0);
  return { raw, ledger };
}

describe('credit leases', { timeout: 180_000 }, () => {
  it('200 concurrent requests in one module instance: admitted against leases with a handful of writes before the answers, one ledger entry each, Σ ledger = the balance change to the nano-dollar', async () => {
    const { accountId, keyHash } = await funded(10 * USD);
    const calls = countStoreCalls();
    const bills = Array.from({ length: 200 }, () => bill(startBill, accountId, keyHash));
    const records = await Promise.all(bills.map((b) => b.confirmed));
    // The first requests wait for the first lease (a read and one write); the rest ride it or its top-ups.
    expect(calls.calls).toBeLessThanOrEqual(10);
    expect(records.every((r) => r.leaseId !== undefined)).toBe(true);
    const raw = await rawAccount(accountId);
    expect(Object.keys(raw.holds as object).every((id) => id.startsWith('lease_'))).toBe(true);

    // Warm: a new request is admitted at once, with no store call before its answer.
    const before = calls.calls;
    const warm = bill(startBill, accountId, keyHash);
    expect(warm.predicted).toBe(true);
    await warm.confirmed;
    expect(calls.calls).toBe(before);
    bills.push(warm);

    const billed = await inChunks(bills, (b, i) => b.settle(entryOf(90 + (i % 11), 1 + ((i * 37) % 200))));
    await returnAllLeases();
    const { raw: after, ledger } = await expectConserved(accountId, 10 * USD);
    expect(ledger).toHaveLength(201);
    expect(ledger.every((e) => typeof e.leaseId === 'string' && e.status === 'complete')).toBe(true);
    expect(sum(ledger)).toBe(billed.reduce((n, r) => n + r!.costNanoUsd, 0));
    expect(after.heldNanoUsd).toBe(0);
    expect(after.holds).toEqual({});
    expect(10 * USD - after.creditNanoUsd).toBe(sum(ledger));
    // The key's usage got the lease's charges too.
    expect((after.keys as Record<string, { usedNanoUsd?: number; heldNanoUsd: number }>)[keyHash.slice(0, 16)]).toMatchObject({ usedNanoUsd: sum(ledger), heldNanoUsd: 0 });
  });

  it('two containers lease the same account: no overdraft, every refusal a 402, Σ ledger = the balance change', async () => {
    const max = requestCost(demandOf(100, 200));
    const granted = 120 * max;
    const { accountId, keyHash } = await funded(granted);
    vi.resetModules();
    const second = (await import('../../functions/shared/billing/request-bill')).startBill;
    const secondLeases = await import('../../functions/shared/billing/lease');
    // Waves of 40 requests at once, alternating containers (200 at once overloads the shared DynamoDB Local: 503s).
    const bills: RequestBill[] = [];
    const confirmed: Array<PromiseSettledResult<unknown>> = [];
    for (let wave = 0; wave < 5; wave++) {
      const some = Array.from({ length: 40 }, (_, i) => bill(i % 2 === 0 ? startBill : second, accountId, keyHash));
      bills.push(...some);
      confirmed.push(...(await Promise.allSettled(some.map((b) => b.confirmed))));
    }
    for (const c of confirmed) if (c.status === 'rejected') expect((c.reason as { status?: number }).status).toBe(402);
    // Every admitted request uses all it reserved.
    // 4 at a time: the per-request holds' settles are transactions on one item, which DynamoDB Local serialises.
    const outcomes = await inChunks(bills, async (b, i) => (confirmed[i]!.status === 'fulfilled' ? (await b.settle(entryOf(100, 200)))!.costNanoUsd : 0), 4);
    await returnAllLeases();
    await secondLeases.returnAllLeases();
    const { raw, ledger } = await expectConserved(accountId, granted);
    expect(raw.heldNanoUsd).toBe(0);
    expect(raw.holds).toEqual({});
    expect(sum(ledger)).toBe(outcomes.reduce((a, b) => a + b, 0));
    expect(ledger.length).toBe(outcomes.filter((c) => c > 0).length);
    expect(ledger.length).toBeLessThanOrEqual(120);
    // Most of the account was spent: leases are returned and the rest served per request.
    expect(ledger.length).toBeGreaterThanOrEqual(100);
  });

  it('a container that dies with a lease: the sweep reconciles it from the ledger after its expiry, charging exactly what its requests were billed', async () => {
    const { accountId, keyHash } = await funded(5 * USD);
    const bills = Array.from({ length: 12 }, () => bill(startBill, accountId, keyHash));
    await Promise.all(bills.map((b) => b.confirmed));
    // Ten requests answered and billed; two were in flight when the container died.
    for (const [i, b] of bills.slice(0, 10).entries()) await b.settle(entryOf(100, 20 * i));
    abandonLeasesForTests();
    const raw = await rawAccount(accountId);
    const [leaseId, value] = Object.entries(raw.holds as Record<string, unknown>)[0]!;
    const lease = decodeInlineHold(accountId, leaseId, value)!;
    expect(leaseId).toMatch(/^lease_\d{13}_/);
    expect(raw.heldNanoUsd).toBe(lease.holdNanoUsd);

    // The sweep settles every overdue hold of the table; this account's lease only once it is overdue.
    await sweepOrphanedHolds(lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS - 1);
    expect(Object.keys((await rawAccount(accountId)).holds as object)).toEqual([leaseId]);
    expect((await sweepOrphanedHolds(lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + 1)).settled).toBeGreaterThanOrEqual(1);
    const { raw: after, ledger } = await expectConserved(accountId, 5 * USD);
    expect(ledger).toHaveLength(10);
    expect(after.heldNanoUsd).toBe(0);
    expect(after.holds).toEqual({});
    expect(5 * USD - after.creditNanoUsd).toBe(sum(ledger));
    // Idempotent: a second sweep, or a late return by a container that was only slow, changes nothing.
    await sweepOrphanedHolds(lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + 60_000);
    expect(await ledgerOf(accountId)).toHaveLength(10);
    const { returnLease } = await import('../../functions/shared/billing/lease-settle');
    expect(await returnLease(recordOfInline(lease, keyHash), 0)).toMatchObject({ alreadySettled: true });
    expect((await rawAccount(accountId)).creditNanoUsd).toBe(after.creditNanoUsd);
  });

  it('a lease that sits unused is returned: what is left goes back to the balance', async () => {
    process.env.CREDIT_LEASE_IDLE_MS = '300';
    reloadConfig();
    try {
      const { accountId, keyHash } = await funded(2 * USD);
      const b = bill(startBill, accountId, keyHash);
      await b.confirmed;
      expect((await rawAccount(accountId)).heldNanoUsd).toBeGreaterThan(0);
      const r = await b.settle(entryOf(100, 50));
      await vi.waitFor(async () => expect((await rawAccount(accountId)).holds).toEqual({}), { timeout: 5_000, interval: 100 });
      const { raw } = await expectConserved(accountId, 2 * USD);
      expect(raw.heldNanoUsd).toBe(0);
      expect(raw.creditNanoUsd).toBe(2 * USD - r!.costNanoUsd);
    } finally {
      process.env.CREDIT_LEASE_IDLE_MS = '60000';
      reloadConfig();
    }
  });

  it('small accounts and requests larger than a slice hold per request, exactly as without leases', async () => {
    const max = requestCost(demandOf(100, 200));
    const small = await funded(20 * max); // a 10% slice covers 2 requests: below the minimum of 8
    const b = bill(startBill, small.accountId, small.keyHash);
    const record = await b.confirmed;
    expect(record.leaseId).toBeUndefined();
    expect(Object.keys((await rawAccount(small.accountId)).holds as object)).toEqual([record.requestId]);
    await b.settle(entryOf(100, 200));
    await expectConserved(small.accountId, 20 * max);

    const rich = await funded(10 * USD);
    const huge = bill(startBill, rich.accountId, rich.keyHash, 100, 1_000_000_000); // ~$10,550 of output: more than a slice
    await expect(huge.confirmed).rejects.toMatchObject({ status: 402 });
  });

  it('a leased request settled again (the settle queue redelivering it) writes no second ledger entry', async () => {
    const { accountId, keyHash } = await funded(3 * USD);
    const b = bill(startBill, accountId, keyHash);
    const record = await b.confirmed;
    const first = await b.settle(entryOf(100, 100));
    expect(first!.costNanoUsd).toBe(chargeFor(record, entryOf(100, 100)).costNanoUsd);
    const again = await settleRecord(record, { kind: 'bill', entry: entryOf(100, 100) });
    expect(again).toEqual({ alreadySettled: true, freeTokensUsed: 0, costNanoUsd: first!.costNanoUsd });
    await returnAllLeases();
    const { raw, ledger } = await expectConserved(accountId, 3 * USD);
    expect(ledger).toHaveLength(1);
    expect(raw.holds).toEqual({});
    expect(raw.usedNanoUsd).toBe(first!.costNanoUsd);
  });
});

describe('leaseSlice (who leases)', () => {
  const cfg = { ...loadConfig({ CREDIT_LEASE_VALIDITY_MS: '30000', RATE_LIMIT_RPM: '0', RATE_LIMIT_CONCURRENT: '0', RATE_LIMIT_FREE_RPM: '0', RATE_LIMIT_FREE_CONCURRENT: '0' }) };
  const state = (over: Record<string, unknown> = {}) => shardStateOf({ accountId: 'a', freeTokens: 0, creditNanoUsd: USD, purchasedNanoUsd: USD, keys: { h: { status: 'active' } }, ...over });

  it('10% of what the account (or the key) has, when that covers 8 requests', () => {
    expect(leaseSlice(state(), 'h', 1_000, cfg, Date.now())).toBe(USD / 10);
    expect(leaseSlice(state({ keys: { h: { status: 'active', limitNanoUsd: 50_000, leftNanoUsd: 50_000, window: 'all' } } }), 'h', 100, cfg, Date.now())).toBe(5_000);
    expect(leaseSlice(state(), 'h', USD / 10 / 8 + 1, cfg, Date.now())).toBeUndefined();
  });

  it('none with leases off, free tokens, rate limits, fund shards or an inactive key', () => {
    expect(leaseSlice(state(), 'h', 1_000, { ...cfg, CREDIT_LEASE_VALIDITY_MS: 0 }, Date.now())).toBeUndefined();
    expect(leaseSlice(state({ freeTokens: 5 }), 'h', 1_000, cfg, Date.now())).toBeUndefined();
    expect(leaseSlice(state(), 'h', 1_000, { ...cfg, RATE_LIMIT_RPM: 600 }, Date.now())).toBeUndefined();
    expect(leaseSlice(state({ shards: 2 }), 'h', 1_000, cfg, Date.now())).toBeUndefined();
    expect(leaseSlice(state({ keys: { h: { status: 'disabled' } } }), 'h', 1_000, cfg, Date.now())).toBeUndefined();
  });
});

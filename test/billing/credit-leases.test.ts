import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { clearViews, shardStateOf } from '../../functions/shared/billing/account-state';
import { config, loadConfig, reloadConfig } from '../../functions/shared/config/env';
import { decodeInlineHold, recordOfInline } from '../../functions/shared/billing/hold-record';
import { abandonLeasesForTests, returnAllLeases } from '../../functions/shared/billing/lease';
import { leaseTerms, requestCost, settleRecord } from '../../functions/shared/billing/lease-settle';
import { chargeFor } from '../../functions/shared/billing/settle';
import { newRequestId } from '../../functions/shared/http/request-id';
import { startBill, type RequestBill } from '../../functions/shared/billing/request-bill';
import { sweepOrphanedHolds } from '../../functions/shared/billing/sweep';
import { setClock } from '../../functions/shared/time/clock';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { demandOf, entryOf } from '../support/billing';
import { countStoreCalls } from '../support/tables';
import { useLeaseTestEnv } from '../support/lease-env';
import { accountItem, costSum, ledgerEntries } from '../support/ledger';

/**
 * Credit leases (billing/lease.ts, docs/credit-leases.md): one conditional write leases a slice of an
 * account's credit to this module instance, which admits requests against it in memory (no store
 * write before the answer), writes one ledger entry per request and returns what is left. Real
 * DynamoDB Local, the real billing core; a second module instance (vi.resetModules) is a second container.
 */
const USD = 1_000_000_000;
useLeaseTestEnv('leases');

/**
 * Runs `f` over `items` 10 at a time: settles run after the answers, and the run's one DynamoDB Local
 * (shared by every test file) answers 200 writes at once slower than the in-process settle budget.
 */
async function inChunks<T, R>(items: readonly T[], f: (item: T, i: number) => Promise<R>, size = 10): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map((x, k) => f(x, i + k)))));
  return out;
}

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
  const raw = await accountItem(accountId);
  const ledger = await ledgerEntries(accountId);
  expect(raw.creditNanoUsd + raw.heldNanoUsd + raw.usedNanoUsd).toBe(granted);
  expect(costSum(ledger)).toBe(raw.usedNanoUsd);
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
    const raw = await accountItem(accountId);
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
    expect(costSum(ledger)).toBe(billed.reduce((n, r) => n + r!.costNanoUsd, 0));
    expect(after.heldNanoUsd).toBe(0);
    expect(after.holds).toEqual({});
    expect(10 * USD - after.creditNanoUsd).toBe(costSum(ledger));
    // The key's usage got the lease's charges too.
    expect((after.keys as Record<string, { usedNanoUsd?: number; heldNanoUsd: number }>)[keyHash.slice(0, 16)]).toMatchObject({
      usedNanoUsd: costSum(ledger),
      heldNanoUsd: 0,
    });
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
    expect(costSum(ledger)).toBe(outcomes.reduce((a, b) => a + b, 0));
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
    const raw = await accountItem(accountId);
    const [leaseId, value] = Object.entries(raw.holds as Record<string, unknown>)[0]!;
    const lease = decodeInlineHold(accountId, leaseId, value)!;
    expect(leaseId).toMatch(/^lease_\d{13}_/);
    expect(raw.heldNanoUsd).toBe(lease.holdNanoUsd);

    // The sweep settles every overdue hold of the table; this account's lease only once it is overdue.
    await sweepOrphanedHolds(lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS - 1);
    expect(Object.keys((await accountItem(accountId)).holds as object)).toEqual([leaseId]);
    expect((await sweepOrphanedHolds(lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + 1)).settled).toBeGreaterThanOrEqual(1);
    const { raw: after, ledger } = await expectConserved(accountId, 5 * USD);
    expect(ledger).toHaveLength(10);
    expect(after.heldNanoUsd).toBe(0);
    expect(after.holds).toEqual({});
    expect(5 * USD - after.creditNanoUsd).toBe(costSum(ledger));
    // Idempotent: a second sweep, or a late return by a container that was only slow, changes nothing.
    await sweepOrphanedHolds(lease.holdExpiresAt + config().HOLD_SWEEP_GRACE_MS + 60_000);
    expect(await ledgerEntries(accountId)).toHaveLength(10);
    const { returnLease } = await import('../../functions/shared/billing/lease-settle');
    expect(await returnLease(recordOfInline(lease, keyHash), { nanoUsd: 0, freeTokens: 0 })).toMatchObject({ alreadySettled: true });
    expect((await accountItem(accountId)).creditNanoUsd).toBe(after.creditNanoUsd);
  });

  it('a lease that sits unused is returned: what is left goes back to the balance', async () => {
    process.env.CREDIT_LEASE_IDLE_MS = '300';
    reloadConfig();
    try {
      const { accountId, keyHash } = await funded(2 * USD);
      const b = bill(startBill, accountId, keyHash);
      await b.confirmed;
      expect((await accountItem(accountId)).heldNanoUsd).toBeGreaterThan(0);
      const r = await b.settle(entryOf(100, 50));
      await vi.waitFor(async () => expect((await accountItem(accountId)).holds).toEqual({}), { timeout: 5_000, interval: 100 });
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
    expect(Object.keys((await accountItem(small.accountId)).holds as object)).toEqual([record.requestId]);
    await b.settle(entryOf(100, 200));
    await expectConserved(small.accountId, 20 * max);

    const rich = await funded(10 * USD);
    const huge = bill(startBill, rich.accountId, rich.keyHash, 100, 1_000_000_000); // ~$10,550 of output: more than a slice
    await expect(huge.confirmed).rejects.toMatchObject({ status: 402 });
  });

  it("a ledger entry that neither DynamoDB nor the settle queue took goes with the lease's return, in its transaction (retried while DynamoDB refuses): Σ ledger = the balance change", async () => {
    expect(config().SETTLE_QUEUE_URL).toBeUndefined(); // no queue here: handing a settle to it fails
    const { accountId, keyHash } = await funded(3 * USD);
    const first = bill(startBill, accountId, keyHash);
    await first.confirmed;
    const billedFirst = (await first.settle(entryOf(100, 80)))!.costNanoUsd;
    // DynamoDB refuses every write from here (its throttling error, at the SDK's middleware stack).
    const refused = new Set(['PutItemCommand', 'TransactWriteItemsCommand', 'UpdateItemCommand']);
    const name = `refuseWrites${Math.random().toString(16).slice(2)}`;
    documentClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (refused.has(String(context.commandName))) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
        return next(args);
      },
      { step: 'initialize', name },
    );
    let lost: RequestBill;
    try {
      lost = bill(startBill, accountId, keyHash);
      const record = await lost.confirmed; // admitted in memory: no store call before the answer
      expect(record.leaseId).toBeDefined();
      expect(await lost.settle(entryOf(100, 150))).toBeUndefined(); // neither in-process nor queued
      await returnAllLeases(); // the return is refused too: the lease stays out, its entry with it
      expect(Object.keys((await accountItem(accountId)).holds as object)).toEqual([record.leaseId]);
      expect(await ledgerEntries(accountId)).toHaveLength(1);
    } finally {
      documentClient().middlewareStack.remove(name);
    }
    await returnAllLeases(); // DynamoDB is back: the return and the entry land together
    const { raw, ledger } = await expectConserved(accountId, 3 * USD);
    expect(ledger).toHaveLength(2);
    expect(ledger.find((e) => e.costNanoUsd === billedFirst && e.completionTokens === 80)).toBeDefined();
    expect(ledger.find((e) => e.completionTokens === 150)).toMatchObject({
      completionTokens: 150,
      status: 'complete',
      leaseId: expect.stringMatching(/^lease_/),
    });
    expect(raw.holds).toEqual({});
    expect(raw.heldNanoUsd).toBe(0);
    expect(3 * USD - raw.creditNanoUsd).toBe(costSum(ledger));
  });

  it('a balance line (low-balance alert, auto top-up) is judged on credit not yet spent: taking a lease crosses nothing, its return with the spending does', async () => {
    const { accountId, keyHash } = await funded(10 * USD);
    // A line 1 nano-USD under the balance: any spending crosses it; the lease's $1 slice alone must not.
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        UpdateExpression: 'SET lowBalanceNanoUsd = :t',
        ExpressionAttributeValues: { ':t': 10 * USD - 1 },
      }),
    );
    clearViews();
    const b = bill(startBill, accountId, keyHash);
    expect((await b.confirmed).leaseId).toBeDefined();
    await b.settle(entryOf(100, 50));
    const out = await accountItem(accountId);
    expect(out.creditNanoUsd).toBeLessThan(10 * USD - 1); // the visible credit is under the line while the lease is out…
    expect(out.leasedNanoUsd).toBe(out.heldNanoUsd);
    expect(out.lowBalanceAlertAt).toBeUndefined(); // …but nothing is spent as far as the store knows: no alert
    await returnAllLeases();
    const after = await accountItem(accountId);
    expect(after.leasedNanoUsd).toBe(0);
    expect(after.lowBalanceAlertAt).toEqual(expect.any(Number)); // the return made the spending visible: crossed
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

/** Runs `f` with rate limits set (restored after). */
async function withRateLimits<T>(limits: { rpm?: number; concurrent?: number }, f: () => Promise<T>): Promise<T> {
  Object.assign(process.env, { RATE_LIMIT_RPM: String(limits.rpm ?? 0), RATE_LIMIT_CONCURRENT: String(limits.concurrent ?? 0) });
  reloadConfig();
  try {
    return await f();
  } finally {
    Object.assign(process.env, { RATE_LIMIT_RPM: '0', RATE_LIMIT_CONCURRENT: '0' });
    reloadConfig();
    setClock(undefined);
  }
}

describe('credit leases with rate limits (request units and concurrency slots leased with the credit)', { timeout: 180_000 }, () => {
  it("RATE_LIMIT_RPM=30: 40 requests in one minute, exactly 30 admitted (on leases), the rest 429 with OpenAI's headers; x-ratelimit-remaining-requests counts down; the returns give unused units back", async () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000 + 30_000; // the middle of a minute, held still
    setClock(() => minute);
    await withRateLimits({ rpm: 30 }, async () => {
      const { accountId, keyHash } = await funded(10 * USD);
      let admitted = 0;
      let leased = 0;
      const refusals: unknown[] = [];
      for (let i = 0; i < 40; i++) {
        const b = bill(startBill, accountId, keyHash);
        try {
          const record = await b.confirmed;
          admitted++;
          if (record.leaseId !== undefined) leased++;
          expect(b.rateHeaders()).toMatchObject({
            'x-ratelimit-limit-requests': '30',
            'x-ratelimit-remaining-requests': String(30 - admitted),
            'x-ratelimit-reset-requests': '30s',
          });
          await b.settle(entryOf(100, 50));
        } catch (err) {
          refusals.push(err);
        }
      }
      expect(admitted).toBe(30);
      expect(leased).toBeGreaterThanOrEqual(25);
      expect(refusals).toHaveLength(10);
      for (const r of refusals)
        expect(r).toMatchObject({
          status: 429,
          type: 'requests',
          code: 'rate_limit_exceeded',
          headers: { 'x-ratelimit-limit-requests': '30', 'x-ratelimit-remaining-requests': '0', 'retry-after': '30' },
        });
      await returnAllLeases();
      const { raw, ledger } = await expectConserved(accountId, 10 * USD);
      expect(ledger).toHaveLength(30);
      expect(raw.rpmCount).toBe(30);
      expect(raw.holds).toEqual({});
    });
  });

  it('an unused request unit goes back with the lease while its minute lasts: the counter is exactly the requests made', async () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000 + 10_000;
    setClock(() => minute);
    await withRateLimits({ rpm: 100 }, async () => {
      const { accountId, keyHash } = await funded(10 * USD);
      const b = bill(startBill, accountId, keyHash);
      expect((await b.confirmed).leaseId).toBeDefined();
      expect((await accountItem(accountId)).rpmCount).toBe(10); // the lease's grant: 10% of the 100 left
      await b.settle(entryOf(100, 50));
      await returnAllLeases();
      expect((await accountItem(accountId)).rpmCount).toBe(1);
    });
  });

  it("RATE_LIMIT_CONCURRENT=4: 12 requests at once in one instance, 4 admitted on one lease's 4 slots, 8 refused 429; slots come back with the return, and with the sweep when the container died", async () => {
    await withRateLimits({ concurrent: 4 }, async () => {
      const { accountId, keyHash } = await funded(10 * USD);
      const bills = Array.from({ length: 12 }, () => bill(startBill, accountId, keyHash));
      const results = await Promise.allSettled(bills.map((b) => b.confirmed));
      const ok = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ b: bills[i]!, record: r.value }] : []));
      expect(ok).toHaveLength(4);
      expect(ok.every((o) => o.record.leaseId !== undefined)).toBe(true);
      for (const r of results)
        if (r.status === 'rejected')
          expect(r.reason).toMatchObject({ status: 429, code: 'rate_limit_exceeded', message: expect.stringContaining('concurrent requests: Limit 4') });
      const raw = await accountItem(accountId);
      expect(raw.inflight).toBe(4);
      for (const o of ok) await o.b.settle(entryOf(100, 50));
      // The lease keeps its slots while it is out: the next requests ride it.
      const again = bill(startBill, accountId, keyHash);
      expect(again.predicted).toBe(true);
      await again.confirmed;
      await again.settle(entryOf(100, 50));
      await returnAllLeases();
      expect((await accountItem(accountId)).inflight).toBe(0);
      abandonLeasesForTests(); // forgets the refusals' "hold per request for a while"

      // A container that dies with a lease holding slots: the sweep gives them back after its expiry.
      const dying = Array.from({ length: 3 }, () => bill(startBill, accountId, keyHash));
      await Promise.all(dying.map((b) => b.confirmed));
      abandonLeasesForTests();
      const held = await accountItem(accountId);
      expect(held.inflight).toBeGreaterThanOrEqual(3);
      const holds = Object.entries(held.holds as Record<string, unknown>).map(([id, v]) => decodeInlineHold(accountId, id, v)!);
      expect(holds.some((h) => h.requestId.startsWith('lease_') && h.accountSlot)).toBe(true);
      expect(holds.reduce((n, h) => n + (h.accountSlot ? (h.slots ?? 1) : 0), 0)).toBe(held.inflight); // the item counts each lease's grant
      await sweepOrphanedHolds(Math.max(...holds.map((h) => h.holdExpiresAt)) + config().HOLD_SWEEP_GRACE_MS + 1);
      const { raw: after } = await expectConserved(accountId, 10 * USD);
      expect(after.inflight).toBe(0);
      expect(after.holds).toEqual({});
    });
  });
});

describe('leaseTerms (who leases, and what a lease takes)', () => {
  const cfg = {
    ...loadConfig({
      CREDIT_LEASE_VALIDITY_MS: '30000',
      RATE_LIMIT_RPM: '0',
      RATE_LIMIT_CONCURRENT: '0',
      RATE_LIMIT_FREE_RPM: '0',
      RATE_LIMIT_FREE_CONCURRENT: '0',
    }),
  };
  const state = (over: Record<string, unknown> = {}) =>
    shardStateOf({ accountId: 'a', freeTokens: 0, creditNanoUsd: USD, purchasedNanoUsd: USD, keys: { h: { status: 'active' } }, ...over });
  const nanoUsd = (t: ReturnType<typeof leaseTerms>) => t?.nanoUsd;
  /** A request whose most is `costNanoUsd` of credit, or 1,000 tokens. */
  const need = (costNanoUsd: number) => ({ costNanoUsd, tokens: 1_000 });

  it('10% of what the account (or the key) has, when that covers 8 requests', () => {
    expect(leaseTerms(state(), 'h', need(1_000), cfg, Date.now())).toEqual({ nanoUsd: USD / 10, freeTokens: 0, rpm: 0, slots: 0 });
    expect(
      nanoUsd(
        leaseTerms(state({ keys: { h: { status: 'active', limitNanoUsd: 50_000, leftNanoUsd: 50_000, window: 'all' } } }), 'h', need(100), cfg, Date.now()),
      ),
    ).toBe(5_000);
    expect(leaseTerms(state(), 'h', need(USD / 10 / 8 + 1), cfg, Date.now())).toBeUndefined();
  });

  it('free tokens, while there are any: a slice of them and no credit, sized by the requests waiting (at least 2), at most half', () => {
    // 200,000 free tokens: 10% is 20,000; two requests of 16,384 tokens ask for 32,768.
    expect(leaseTerms(state({ freeTokens: 200_000 }), 'h', { costNanoUsd: 1_000, tokens: 16_384 }, cfg, Date.now())).toEqual({
      nanoUsd: 0,
      freeTokens: 32_768,
      rpm: 0,
      slots: 0,
    });
    expect(leaseTerms(state({ freeTokens: 200_000 }), 'h', need(1_000), cfg, Date.now())).toMatchObject({ freeTokens: 20_000, nanoUsd: 0 });
    // 16 waiting: 24 requests' most would be 393,216: half the free tokens.
    expect(leaseTerms(state({ freeTokens: 200_000 }), 'h', { costNanoUsd: 1, tokens: 16_384 }, cfg, Date.now(), 16)).toMatchObject({ freeTokens: 100_000 });
    // Too few for one request's most inside half of them: per request (free tokens and credit together).
    expect(leaseTerms(state({ freeTokens: 30_000 }), 'h', { costNanoUsd: 1, tokens: 16_384 }, cfg, Date.now())).toBeUndefined();
    // A refund took back credit already spent: nothing runs on a lease, not even free tokens.
    expect(leaseTerms(state({ freeTokens: 200_000, creditNanoUsd: -1 }), 'h', need(1_000), cfg, Date.now())).toBeUndefined();
  });

  it('none with leases off, too few free tokens, fund shards or an inactive key', () => {
    expect(leaseTerms(state(), 'h', need(1_000), { ...cfg, CREDIT_LEASE_VALIDITY_MS: 0 }, Date.now())).toBeUndefined();
    expect(leaseTerms(state({ freeTokens: 5 }), 'h', need(1_000), cfg, Date.now())).toBeUndefined();
    expect(leaseTerms(state({ shards: 2 }), 'h', need(1_000), cfg, Date.now())).toBeUndefined();
    expect(leaseTerms(state({ keys: { h: { status: 'disabled' } } }), 'h', need(1_000), cfg, Date.now())).toBeUndefined();
  });

  it("with rate limits: 10% of the minute's units left and the slots this instance needs (never more than are left); none at a limit", () => {
    const limited = { ...cfg, RATE_LIMIT_RPM: 600, RATE_LIMIT_CONCURRENT: 50 };
    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    expect(leaseTerms(state(), 'h', need(1_000), limited, now)).toEqual({ nanoUsd: USD / 10, freeTokens: 0, rpm: 60, slots: 1 });
    expect(leaseTerms(state({ rpmWindow: minute, rpmCount: 590 }), 'h', need(1_000), limited, now)).toMatchObject({ rpm: 1 });
    expect(leaseTerms(state({ rpmWindow: minute - 1, rpmCount: 600 }), 'h', need(1_000), limited, now)).toMatchObject({ rpm: 60 });
    expect(leaseTerms(state(), 'h', need(1_000), limited, now, 20)).toMatchObject({ slots: 30 });
    expect(leaseTerms(state({ inflight: 45 }), 'h', need(1_000), limited, now, 20)).toMatchObject({ slots: 5 });
    expect(leaseTerms(state({ keys: { h: { status: 'active', rpmWindow: minute, rpmCount: 600 } } }), 'h', need(1_000), limited, now)).toBeUndefined();
    expect(leaseTerms(state({ inflight: 50 }), 'h', need(1_000), limited, now)).toBeUndefined();
  });
});

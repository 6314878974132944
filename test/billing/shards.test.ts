import { beforeAll, describe, expect, it, vi } from 'vitest';
import { addCredit, createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { readState, rememberState, type ShardState } from '../../functions/shared/billing/account-state';
import { formatNanoUsd } from '../../functions/shared/money/money';
import { creditPayment, debitDispute, debitRefund } from '../../functions/shared/payments/payment-ledger';
import { usageSummary } from '../../functions/shared/billing/ledger';
import { shardPks } from '../../functions/shared/accounts/keys/key-account-entry';
import { gatherInto, refillShard, setShards } from '../../functions/shared/billing/shards';
import { settleHold } from '../../functions/shared/billing/settle';
import { billRequest, demandOf, entryOf, hold } from '../support/billing';
import { createTestTables } from '../support/tables';
import { accountItem, ledgerEntries } from '../support/ledger';

beforeAll(async () => {
  await createTestTables('shards');
});

/**
 * Fund shards (DATA-MODEL §5) conserve money under concurrency: whatever the shards borrow from the
 * bank and each other, Σ over shards of (available + held) + Σ of the ledger's costs equals what was
 * granted and purchased, to the nano-dollar; and free tokens likewise.
 */
describe('fund shards', () => {
  it('S = 4: 200 requests, 40 at a time, with top-ups landing meanwhile conserve credit and free tokens exactly', async () => {
    const initialCredit = 50_000_000; // $0.05: runs short, so shards borrow and gather
    const initialFree = 3_000;
    const { accountId } = await createAccount({ freeTokens: initialFree, creditNanoUsd: initialCredit });
    const { keyHash } = await createKey(accountId, 'hot');
    expect(await setShards(accountId, 4)).toBe(4);
    const topUps = [20_000_000, 30_000_000];
    let refused = 0;
    // 200 requests, 40 in flight at a time (a busy client's pool), on 4 shards and the bank.
    let nextRequest = 0;
    const one = async (i: number) => {
      try {
        // A client retries a 503 (too much contention on the account's items), as the SDKs do.
        let h;
        for (let attempt = 0; ; attempt++) {
          try {
            h = await hold(accountId, keyHash, demandOf(50 + (i % 13), 400));
            break;
          } catch (err) {
            if ((err as { status?: number }).status !== 503 || attempt >= 10) throw err;
            // Kept: a client's retry backoff (simulated racing work, not a wait for a condition).
            await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
          }
        }
        // Kept: the request's time in flight (0–6 ms), so holds of different requests overlap on purpose.
        await new Promise((r) => setTimeout(r, i % 7));
        await settleHold(h, { kind: 'bill', entry: entryOf(50 + (i % 13), 20 + (i % 97)) });
      } catch (err) {
        if ((err as { status?: number }).status !== 402) throw err;
        refused++;
      }
    };
    const requests = Array.from({ length: 40 }, async () => {
      while (nextRequest < 200) await one(nextRequest++);
    });
    const credits = topUps.map(async (usd, i) => {
      // The top-ups land once the 50th and the 100th request have begun, racing the requests in flight on purpose.
      await vi.waitFor(
        () => {
          if (nextRequest < 50 * (i + 1)) throw new Error(`top-up ${i + 1} waits for request ${50 * (i + 1)} to begin`);
        },
        { timeout: 120_000, interval: 5 },
      );
      await addCredit(accountId, usd);
    });
    await Promise.all([...requests, ...credits]);

    const shards = await Promise.all(shardPks(accountId, 4).map((pk) => readState(pk, { consistent: true })));
    const items = await Promise.all(shardPks(accountId, 4).map((pk) => ledgerEntries(pk)));
    const ledger = items.flat();
    expect(ledger.filter((e) => e.status === 'held')).toEqual([]);
    // No hold left in flight on any shard item (inline records), and one entry per request.
    const raw = await Promise.all(shardPks(accountId, 4).map((pk) => accountItem(pk)));
    for (const item of raw) expect(item?.holds ?? {}).toEqual({});
    expect(new Set(ledger.map((e) => e.requestId)).size).toBe(ledger.length);
    const spent = ledger.reduce((s, e) => s + Number(e.costNanoUsd), 0);
    const freeUsed = ledger.reduce((s, e) => s + Number(e.freeTokensUsed), 0);
    const available = shards.reduce((s, x) => s + x.creditNanoUsd, 0);
    const held = shards.reduce((s, x) => s + x.heldNanoUsd, 0);
    const freeLeft = shards.reduce((s, x) => s + x.freeTokens, 0);
    expect(held).toBe(0);
    expect(available + held + spent).toBe(initialCredit + topUps[0]! + topUps[1]!);
    expect(freeLeft + freeUsed).toBe(initialFree);
    for (const s of shards) expect(s.creditNanoUsd).toBeGreaterThanOrEqual(0);
    // Requests ran on every shard, and the readers sum them.
    expect(new Set(ledger.map((e) => e.accountId)).size).toBeGreaterThan(1);
    expect(ledger.length + refused).toBe(200);
    const summary = await usageSummary(accountId);
    expect(summary).toMatchObject({ requests: ledger.length, costNanoUsd: spent, freeTokensUsed: freeUsed });
  }, 240_000);
});

/** Σ over the account's S shard items of available + held credit, and of free tokens, read from the store. */
async function shardTotals(accountId: string, shards: number): Promise<{ states: ShardState[]; credit: number; free: number }> {
  const states = await Promise.all(shardPks(accountId, shards).map((pk) => readState(pk, { consistent: true })));
  return { states, credit: states.reduce((a, x) => a + x.creditNanoUsd + x.heldNanoUsd, 0), free: states.reduce((a, x) => a + x.freeTokens, 0) };
}

/**
 * A sharded account with $10 and $5 bought through Stripe, its funds spread over 3 shards (shard 1:
 * the first $10 and the free tokens; shard 2: a share of the $5; the bank: the rest), and one request
 * billed on whichever shard it landed. Returns the account, its key and what the request cost.
 */
async function spreadAccount(tag: string): Promise<{ accountId: string; keyHash: string; spent: number; bank: ShardState }> {
  const { accountId } = await createAccount({ freeTokens: 5_000, creditNanoUsd: 0 });
  const { keyHash } = await createKey(accountId, 'hot');
  const created = Math.floor(Date.now() / 1000);
  expect(
    await creditPayment({ accountId, kind: 'top_up', stripeId: `cs_a_${tag}`, createdSec: created, amountCents: 1000, paymentIntentId: `pi_a_${tag}` }),
  ).toBe('applied');
  expect(await setShards(accountId, 3)).toBe(3);
  await gatherInto(accountId, 3, 1);
  expect(
    await creditPayment({ accountId, kind: 'top_up', stripeId: `cs_b_${tag}`, createdSec: created, amountCents: 500, paymentIntentId: `pi_b_${tag}` }),
  ).toBe('applied');
  await refillShard(accountId, 2, demandOf(10, 10));
  const bank = await readState(accountId, { consistent: true });
  const spread = await shardTotals(accountId, 3);
  expect(spread.states.map((x) => x.creditNanoUsd > 0)).toEqual([true, true, true]);
  await billRequest(accountId, keyHash, 100_000, 50_000);
  // What the request cost, by the ledger; the shards hold the rest of the $15, to the nano-dollar.
  const spent = (await usageSummary(accountId)).costNanoUsd;
  expect(spent).toBeGreaterThan(0);
  expect((await shardTotals(accountId, 3)).credit).toBe(15_000_000_000 - spent);
  return { accountId, keyHash, spent, bank };
}

/** Tries `n` requests; returns the refusals' messages (a hold that stood is a failure of the test). */
async function refusals(accountId: string, keyHash: string, n: number, before?: () => void): Promise<string[]> {
  const messages: string[] = [];
  for (let i = 0; i < n; i++) {
    before?.();
    const err = await hold(accountId, keyHash, demandOf(10, 10)).then(
      () => undefined,
      (e: unknown) => e as { status?: number; message?: string },
    );
    expect(err?.status).toBe(402);
    messages.push(String(err?.message));
  }
  return messages;
}

/**
 * A refund or dispute that takes back credit already spent leaves the account below zero,
 * and every request is refused with the debt's 402 until it is paid back — on an account with fund
 * shards too, whichever shard a request lands on (billing/shards.ts, payments/payment-ledger.ts).
 */
describe('a sharded account below zero', () => {
  it('a refund and a dispute of everything bought: the shards pay what they can, every request is refused with the debt on whichever shard it lands, and money stays exact', async () => {
    const { accountId, keyHash, spent, bank } = await spreadAccount('debt');
    const created = Math.floor(Date.now() / 1000);
    expect(await debitRefund({ accountId, chargeId: 'ch_debt', createdSec: created, amountRefundedCents: 1000, paymentIntentId: 'pi_a_debt' })).toBe('applied');
    expect(await debitDispute({ accountId, stripeId: 'dp_debt', createdSec: created, amountCents: 500, paymentIntentId: 'pi_b_debt' })).toBe('applied');

    // Every shard's funds went to the bank against the debt: the bank owes what the request cost, the shards hold nothing.
    const after = await shardTotals(accountId, 3);
    expect(after.credit).toBe(-spent);
    expect(after.states[0]!.creditNanoUsd).toBe(-spent);
    expect(after.states.slice(1).map((x) => [x.creditNanoUsd, x.freeTokens])).toEqual([
      [0, 0],
      [0, 0],
    ]);
    const debt = `Your credit balance is ${formatNanoUsd(-spent)}`;

    // A container that knows of the debt sends every request to the bank: refused with the debt, not served on free tokens.
    for (const message of await refusals(accountId, keyHash, 10)) expect(message).toContain(debt);
    // A container whose view of the bank predates the refund picks any shard (2 of 3 are not the bank): the same 402.
    for (const message of await refusals(accountId, keyHash, 20, () => rememberState(accountId, bank))) expect(message).toContain(debt);
    expect((await shardTotals(accountId, 3)).credit).toBe(-spent);

    // Paying the debt back (and more) serves requests again, on the shards as before.
    expect(await creditPayment({ accountId, kind: 'top_up', stripeId: 'cs_c_debt', createdSec: created, amountCents: 500, paymentIntentId: 'pi_c_debt' })).toBe(
      'applied',
    );
    await billRequest(accountId, keyHash, 10, 10);
  }, 120_000);

  it('a refund the other shards can cover: gathered into the bank at once, the account stays usable', async () => {
    const { accountId, keyHash, spent } = await spreadAccount('covered');
    const created = Math.floor(Date.now() / 1000);
    // The $5 payment refunded: more than the bank holds, less than the account has.
    expect(await debitRefund({ accountId, chargeId: 'ch_covered', createdSec: created, amountRefundedCents: 500, paymentIntentId: 'pi_b_covered' })).toBe(
      'applied',
    );
    const after = await shardTotals(accountId, 3);
    expect(after.credit).toBe(10_000_000_000 - spent);
    expect(after.states.every((x) => x.creditNanoUsd >= 0)).toBe(true);
    await billRequest(accountId, keyHash, 10, 10);
  }, 120_000);
});

import { QueryCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { addCredit, createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/key-store';
import { readState } from '../../functions/shared/billing/account-state';
import { usageSummary } from '../../functions/shared/billing/ledger';
import { setShards, shardPks } from '../../functions/shared/billing/shards';
import { settleHold } from '../../functions/shared/billing/settle';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { demandOf, entryOf, hold } from '../support/billing';
import { createTestTables } from '../support/tables';

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
            await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
          }
        }
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
      await new Promise((r) => setTimeout(r, 200 * (i + 1)));
      await addCredit(accountId, usd);
    });
    await Promise.all([...requests, ...credits]);

    const shards = await Promise.all(shardPks(accountId, 4).map((pk) => readState(pk, { consistent: true })));
    const items = await Promise.all(
      shardPks(accountId, 4).map(async (pk) => (await documentClient().send(new QueryCommand({ TableName: tableNames().ledger, KeyConditionExpression: 'accountId = :a', ExpressionAttributeValues: { ':a': pk }, ConsistentRead: true }))).Items ?? []),
    );
    const ledger = items.flat();
    expect(ledger.filter((e) => e.status === 'held')).toEqual([]);
    // No hold left in flight on any shard item (inline records), and one entry per request.
    const raw = await Promise.all(shardPks(accountId, 4).map(async (pk) => (await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId: pk }, ConsistentRead: true }))).Item));
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

import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { clearViews } from '../../functions/shared/billing/account-state';
import { config } from '../../functions/shared/config/env';
import { setClock } from '../../functions/shared/time/clock';
import { settleHold } from '../../functions/shared/billing/settle';
import { sweepOrphanedHolds } from '../../functions/shared/billing/sweep';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { demandOf, entryOf, hold } from '../support/billing';
import { createTestTables } from '../support/tables';
import { reloadConfig } from '../../functions/shared/config/env';

/**
 * The concurrency slots of a killed process's holds stop blocking new requests once
 * those holds pass their expiry (the function's own deadline), without waiting for the orphan sweep;
 * the sweep later settles them and the counters come back exact. Time moves on the billing clock.
 */
beforeAll(async () => {
  process.env.RATE_LIMIT_FREE_CONCURRENT = '5'; // the default (tests turn it off elsewhere)
  reloadConfig();
  await createTestTables('slot-expiry');
});
beforeEach(() => clearViews());
afterEach(() => setClock(undefined));

async function raw(accountId: string) {
  return (await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }))).Item!;
}

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { status?: number }) => e.status ?? 500,
  );

describe('concurrency slots of a crashed process', () => {
  it('free a slot once the dead hold passes its expiry, not at the sweep; the sweep then settles it and inflight is exact', async () => {
    const limit = config().RATE_LIMIT_FREE_CONCURRENT; // a free-tier account: 5
    const { accountId } = await createAccount({ freeTokens: 1_000_000, creditNanoUsd: 0 });
    const { keyHash } = await createKey(accountId, 'crash');
    // A process takes every slot, then is killed: no settle, no queued message.
    const dead = await Promise.all(Array.from({ length: limit }, () => hold(accountId, keyHash, demandOf(10, 10))));
    expect(await statusOf(hold(accountId, keyHash, demandOf(10, 10)))).toBe(429);

    // Just before the holds' expiry (the function deadline): still taken.
    const expiry = Math.max(...dead.map((h) => h.holdExpiresAt));
    setClock(() => Math.min(...dead.map((h) => h.holdExpiresAt)) - 1);
    clearViews();
    expect(await statusOf(hold(accountId, keyHash, demandOf(10, 10)))).toBe(429);

    // Past it, long before expiry + the sweep's grace: new requests get the dead holds' slots, up to the limit.
    setClock(() => expiry);
    clearViews();
    const fresh = [];
    for (let i = 0; i < limit; i++) fresh.push(await hold(accountId, keyHash, demandOf(10, 10)));
    expect(await statusOf(hold(accountId, keyHash, demandOf(10, 10)))).toBe(429); // live ones still count
    expect((await raw(accountId)).inflight).toBe(2 * limit); // the dead ones are still on the item, unsettled

    // The sweep settles the dead ones (orphaned); the live ones settle; every counter is back to 0.
    expect(await sweepOrphanedHolds(expiry + config().HOLD_SWEEP_GRACE_MS + 1)).toEqual({ settled: limit, failed: 0 });
    for (const h of fresh) await settleHold(h, { kind: 'bill', entry: entryOf(10, 10) });
    const item = await raw(accountId);
    expect(item.inflight).toBe(0);
    expect((item.keys as Record<string, { inflight?: number }>)[keyHash.slice(0, 16)]?.inflight ?? 0).toBe(0);
    expect(item.holds).toEqual({});
  });

  it('a dead hold settled meanwhile gives its slot back once only: a stale view cannot count it free twice', async () => {
    const limit = config().RATE_LIMIT_FREE_CONCURRENT;
    const { accountId } = await createAccount({ freeTokens: 1_000_000, creditNanoUsd: 0 });
    const { keyHash } = await createKey(accountId, 'stale');
    const dead = await Promise.all(Array.from({ length: limit }, () => hold(accountId, keyHash, demandOf(10, 10))));
    const expiry = Math.max(...dead.map((h) => h.holdExpiresAt));
    setClock(() => expiry);
    // This container's view still lists the dead holds; one is settled late (its queued settle) behind our back.
    await hold(accountId, keyHash, demandOf(10, 10));
    await settleHold(dead[0]!, { kind: 'bill', entry: entryOf(10, 10) });
    const live = [];
    for (let i = 0; i < limit - 1; i++) live.push(await hold(accountId, keyHash, demandOf(10, 10)));
    expect(await statusOf(hold(accountId, keyHash, demandOf(10, 10)))).toBe(429);
    // limit - 1 dead + limit live on the item: never more live than the limit.
    expect((await raw(accountId)).inflight).toBe(2 * limit - 1);
  });
});

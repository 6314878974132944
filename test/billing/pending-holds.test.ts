import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { clearViews } from '../../functions/shared/billing/account-state';
import { config, reloadConfig } from '../../functions/shared/config/env';
import { queue, resetSqsClient } from '../../functions/shared/billing/settle-queue';
import { listInlineHolds, QUEUED_HOLD_WAIT_MS, sweepOrphanedHolds, UNMARKED_HOLD_QUEUE_WAIT_MS } from '../../functions/shared/billing/sweep';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { demandOf, entryOf, hold } from '../support/billing';
import { countItemsRead, createTestTables } from '../support/tables';

/**
 * The sweep finds holds through the accounts table's sparse pendingHolds index (no Scan): what it
 * reads grows with the accounts that have holds in flight, not with the table; and a message stuck on
 * the settle queue (a poison message) holds back only the hold it belongs to, for a bounded time.
 * DynamoDB Local for the tables, the fauxqs SQS emulator for the queue, the real SDK clients.
 */
const USD = 1_000_000_000;
let sqsServer: Awaited<ReturnType<typeof startFauxqs>>;
const savedEnv = { ...process.env };

beforeAll(async () => {
  await createTestTables('pending');
});
beforeEach(() => clearViews());
afterAll(async () => {
  process.env = { ...savedEnv };
  reloadConfig();
  resetSqsClient();
  await sqsServer?.stop();
});

/** `n` accounts with funds and a key, never used: the table grows, nothing is in flight. */
async function idleAccounts(n: number): Promise<void> {
  for (let i = 0; i < n; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, n - i) }, async () => {
        const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
        await createKey(accountId, 'idle');
      }),
    );
  }
}

async function itemsReadBySweep(nowMs: number): Promise<{ items: number; commands: string[] }> {
  const counter = countItemsRead();
  const before = { items: counter.items, calls: counter.commands.length };
  await sweepOrphanedHolds(nowMs);
  return { items: counter.items - before.items, commands: counter.commands.slice(before.calls) };
}

describe('finding holds in flight', () => {
  it('reads the same number of items whether the table has 20 or 140 idle accounts beside the 3 with holds, and never scans', async () => {
    const busy = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
        const { keyHash } = await createKey(accountId, 'busy');
        return hold(accountId, keyHash, demandOf(100, 100));
      }),
    );
    // Before any hold expires: the sweep only looks.
    const early = Math.min(...busy.map((h) => h.holdExpiresAt)) - 1_000;
    await idleAccounts(20);
    const small = await itemsReadBySweep(early);
    await idleAccounts(120);
    const large = await itemsReadBySweep(early);
    console.log(
      `sweep reads with 23 / 143 accounts (3 with holds): ${small.items} / ${large.items} items; commands ${[...new Set(large.commands)].join(', ')}`,
    );
    expect(large.items).toBe(small.items);
    // 3 index entries + 3 account items; nothing else.
    expect(large.items).toBe(6);
    expect(large.commands.some((c) => c.startsWith('Scan'))).toBe(false);
    expect((await listInlineHolds()).map((h) => h.requestId).sort()).toEqual(busy.map((h) => h.requestId).sort());
  }, 180_000);

  it('takes an account out of the index once its holds are settled, so idle accounts cost the sweep nothing', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'once');
    const h = await hold(accountId, keyHash, demandOf(10, 10));
    const { settleHold } = await import('../../functions/shared/billing/settle');
    await settleHold(h, { kind: 'bill', entry: entryOf(10, 5) });
    const marked = async () =>
      (await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }))).Item?.sweepShard;
    expect(await marked()).toMatch(/^s\d+$/);
    await sweepOrphanedHolds(h.holdExpiresAt - 1_000);
    expect(await marked()).toBeUndefined();
    // A new hold marks it again.
    await hold(accountId, keyHash, demandOf(10, 10));
    expect(await marked()).toMatch(/^s\d+$/);
  });
});

describe('a poison message on the settle queue', () => {
  beforeAll(async () => {
    await createTestTables('poison'); // its own tables: only this test's holds are in flight
  });

  it('never blocks the sweep: an unmarked orphan waits at most UNMARKED_HOLD_QUEUE_WAIT_MS, a hold whose settle is queued is left to the queue', async () => {
    sqsServer = await startFauxqs({ port: 0, logger: false });
    const sqs = new SQSClient({ endpoint: sqsServer.address, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: 'poisoned-settle' }))).QueueUrl as string;
    process.env.SQS_ENDPOINT = sqsServer.address;
    process.env.SQS_REQUEST_TIMEOUT_MS = '10000';
    process.env.SETTLE_QUEUE_URL = url;
    reloadConfig();
    resetSqsClient();
    // A message no consumer can ever settle, sitting on the queue.
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"v":1,"garbage":true}' }));

    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'poison');
    const orphan = await hold(accountId, keyHash, demandOf(30, 30));
    const queued = await hold(accountId, keyHash, demandOf(30, 30));
    // The request path could not settle `queued` itself: it hands it to the queue, which marks it.
    await queue(queued, { kind: 'bill', entry: entryOf(30, 20) }, 0);
    expect((await listInlineHolds()).find((h) => h.requestId === queued.requestId)?.queued).toBe(true);
    expect((await listInlineHolds()).find((h) => h.requestId === orphan.requestId)?.queued).toBe(false);

    const expiry = Math.max(orphan.holdExpiresAt, queued.holdExpiresAt);
    // Past the grace, the queue not empty: both wait (the unmarked one might be a settle whose mark failed).
    expect(await sweepOrphanedHolds(expiry + config().HOLD_SWEEP_GRACE_MS + 1)).toEqual({ settled: 0, failed: 0, deferred: 2 });
    // Past the bounded wait: the orphan is settled although the poison message is still there; the queued hold is not.
    expect(await sweepOrphanedHolds(expiry + UNMARKED_HOLD_QUEUE_WAIT_MS + 1)).toEqual({ settled: 1, failed: 0, deferred: 1 });
    expect((await listInlineHolds()).map((h) => h.requestId)).toEqual([queued.requestId]);
    // Past the queue's whole retry window (its message went to the dead-letter queue): the sweep settles it.
    expect(await sweepOrphanedHolds(expiry + QUEUED_HOLD_WAIT_MS + 1)).toEqual({ settled: 1, failed: 0 });
    expect(await listInlineHolds()).toEqual([]);
  });
});

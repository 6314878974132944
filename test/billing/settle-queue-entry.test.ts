import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { config, reloadConfig } from '../../functions/shared/config/env';
import type { UsageEntry } from '../../functions/shared/billing/settle';
import { settleRecord } from '../../functions/shared/billing/lease-settle';
import { consumeSettleMessages, queue, resetSqsClient } from '../../functions/shared/billing/settle-queue';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { demandOf, entryOf, hold } from '../support/billing';
import { createTestTables } from '../support/tables';

/**
 * A settle that goes through the settle queue (the request could not write it) bills and records exactly
 * what the same settle written at once does: every field of the usage entry survives the message, the
 * cache buckets above all (a bucket lost on the way would bill cache reads at the full input price).
 * DynamoDB Local, the fauxqs SQS emulator, the real SDK clients.
 */
const USD = 1_000_000_000;
let sqsServer: Awaited<ReturnType<typeof startFauxqs>>;
let sqs: SQSClient;
let queueUrl: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  await createTestTables('queued-entry');
  sqsServer = await startFauxqs({ port: 0, logger: false });
  sqs = new SQSClient({ endpoint: sqsServer.address, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'queued-entry-settle' }))).QueueUrl as string;
  Object.assign(process.env, { SQS_ENDPOINT: sqsServer.address, SQS_REQUEST_TIMEOUT_MS: '10000', SETTLE_QUEUE_URL: queueUrl });
  reloadConfig();
  resetSqsClient();
});
afterAll(async () => {
  process.env = { ...savedEnv };
  reloadConfig();
  resetSqsClient();
  sqs?.destroy();
  await sqsServer?.stop();
});

/** Every field of a UsageEntry, set: cache reads and both cache writes, reasoning, timings, ids. */
const FULL: Partial<UsageEntry> = {
  cachedTokens: 600,
  cachedInputPrice: 1_318_750,
  cacheWrite5mTokens: 200,
  cacheWrite5mPrice: 3_296_875,
  cacheWrite1hTokens: 100,
  cacheWrite1hPrice: 5_275_000,
  reasoningTokens: 40,
  byok: false,
  upstreamModel: 'gpt-4o-2024-08-06',
  firstTokenAt: 1_765_000_000_100,
  endedAt: 1_765_000_000_900,
  finishReason: 'stop',
  user: 'end-user-7',
  sessionId: 'session-42',
};

async function ledgerItem(accountId: string, requestId: string): Promise<Record<string, unknown>> {
  const out = await documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId, requestId }, ConsistentRead: true }));
  return out.Item ?? {};
}

describe('a queued settle', () => {
  it('writes the same entry and the same charge as the settle written at once, every usage field kept', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'queued');
    const entry = entryOf(1_000, 120, FULL);
    const direct = await hold(accountId, keyHash, demandOf(1_000, 200));
    const queued = await hold(accountId, keyHash, demandOf(1_000, 200));

    const atOnce = await settleRecord(direct, { kind: 'bill', entry });
    expect(await queue(queued, { kind: 'bill', entry }, 0)).toBe(true);
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(Messages).toHaveLength(1);
    const record = { messageId: Messages[0]?.MessageId ?? '', body: Messages[0]?.Body ?? '' } as SQSRecord;
    expect(await consumeSettleMessages([record], async () => undefined)).toEqual({ batchItemFailures: [] });

    const [a, b] = await Promise.all([ledgerItem(accountId, direct.requestId), ledgerItem(accountId, queued.requestId)]);
    const usageFields = (item: Record<string, unknown>) => Object.fromEntries(Object.keys(entry).map((k) => [k, item[k]]));
    expect(usageFields(b)).toEqual(usageFields(a));
    expect(b.costNanoUsd).toBe(a.costNanoUsd);
    expect(b.costNanoUsd).toBe(atOnce.costNanoUsd);
    expect(b.cachedTokens).toBe(600);
    expect(config().SETTLE_QUEUE_URL).toBe(queueUrl);
  });
});

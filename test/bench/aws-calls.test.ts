import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAwsCalls } from '../../bench/aws-calls';
import { GetCommand, PutCommand, TransactWriteCommand } from '../../functions/shared/store/dynamo-commands';
import { createDocumentClient, SDK_CLIENT_HOOK } from '../../functions/shared/store/dynamo';
import type { StoreClient } from '../../functions/shared/store/lean-document-client';
import type { TableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

/**
 * The bench counts the gateway's DynamoDB calls and capacity units through the store's client hook:
 * every client made after the counter is installed reports to it, and the units are DynamoDB Local's own.
 */
describe('bench AWS call counter (store client hook)', () => {
  let tables: TableNames;
  let client: StoreClient;
  let counter: ReturnType<typeof countAwsCalls>;

  beforeAll(async () => {
    tables = await createTestTables('bench-calls');
    counter = countAwsCalls();
    client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
  });
  afterAll(() => {
    client.destroy();
    delete (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK];
  });

  it('counts each operation once with the capacity units DynamoDB charged (1 KB writes, ×2 in a transaction, ½ for an eventually consistent read)', async () => {
    // 1.5 KB item: 2 write units.
    await client.send(new PutCommand({ TableName: tables.accounts, Item: { accountId: 'a1', padding: 'x'.repeat(1500) } }));
    // The same item updated (2 KB rounded, ×2) plus a small ledger item (1, ×2) in one transaction: 6 units.
    await client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Update: { TableName: tables.accounts, Key: { accountId: 'a1' }, UpdateExpression: 'SET n = :one', ExpressionAttributeValues: { ':one': 1 } } },
          { Put: { TableName: tables.ledger, Item: { accountId: 'a1', requestId: 'r1' } } },
        ],
      }),
    );
    await client.send(new GetCommand({ TableName: tables.accounts, Key: { accountId: 'a1' } }));
    await client.send(new GetCommand({ TableName: tables.accounts, Key: { accountId: 'missing' } }));

    const calls = counter.take();
    expect(Object.keys(calls).sort()).toEqual(['DynamoDB.GetItem', 'DynamoDB.PutItem', 'DynamoDB.TransactWriteItems']);
    expect(calls['DynamoDB.PutItem']).toMatchObject({ calls: 1, errors: 0, capacityUnits: 2 });
    expect(calls['DynamoDB.TransactWriteItems']).toMatchObject({ calls: 1, errors: 0, capacityUnits: 6 });
    expect(calls['DynamoDB.GetItem']).toMatchObject({ calls: 2, errors: 0, capacityUnits: 1 });
    expect(counter.take()).toEqual({});
  });

  it('counts a call that fails, without capacity', async () => {
    const conditional = new PutCommand({ TableName: tables.accounts, Item: { accountId: 'a1' }, ConditionExpression: 'attribute_not_exists(accountId)' });
    await expect(client.send(conditional)).rejects.toThrow(/conditional request failed/i);
    expect(counter.take()['DynamoDB.PutItem']).toMatchObject({ calls: 1, errors: 1, capacityUnits: 0 });
  });
});

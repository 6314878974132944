import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, UpdateCommand } from '../../functions/shared/store/dynamo-commands';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

/**
 * Binary attributes over the JSON-protocol path (store/lean-document-client.ts), against DynamoDB Local:
 * the stored Responses API answers are gzip bytes (responses/response-store.ts), which travel as base64
 * on the wire and must come back as the same bytes, top level and nested in maps and lists.
 */
beforeAll(async () => {
  await createTestTables('binary');
});

describe('the store client and binary attributes', () => {
  it('writes and reads back Uint8Arrays byte for byte (Put, Get, Update with ALL_NEW)', async () => {
    const accountId = `binary-${randomBytes(6).toString('hex')}`;
    const blob = new Uint8Array(randomBytes(300));
    const nested = new Uint8Array([0, 1, 2, 255]);
    const TableName = tableNames().accounts;
    await documentClient().send(new PutCommand({ TableName, Item: { accountId, blob, m: { inner: nested, l: [nested, 'text'] } } }));
    const got = await documentClient().send(new GetCommand({ TableName, Key: { accountId }, ConsistentRead: true }));
    expect(got.Item?.blob).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(got.Item?.blob as Uint8Array).equals(Buffer.from(blob))).toBe(true);
    expect([...(got.Item?.m.inner as Uint8Array)]).toEqual([0, 1, 2, 255]);
    expect([...(got.Item?.m.l[0] as Uint8Array)]).toEqual([0, 1, 2, 255]);
    const updated = await documentClient().send(
      new UpdateCommand({
        TableName,
        Key: { accountId },
        UpdateExpression: 'SET extraBlob = :b',
        ExpressionAttributeValues: { ':b': nested },
        ReturnValues: 'ALL_NEW',
      }),
    );
    expect([...(updated.Attributes?.extraBlob as Uint8Array)]).toEqual([0, 1, 2, 255]);
    expect(Buffer.from(updated.Attributes?.blob as Uint8Array).equals(Buffer.from(blob))).toBe(true);
  });
});

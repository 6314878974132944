/**
 * `npm run admin -- health`: can this deployment (or the local store) work right now?
 * - each table is reachable and ACTIVE (DescribeTable);
 * - the upstream-keys secret (`UPSTREAM_SECRET_ARN`) is readable and a JSON object, naming which
 *   provider keys it holds (never a value); the origin secret (`ORIGIN_SECRET_ARN`) has a `current`;
 * - pending holds: when the ledger has the `pendingHolds` index (DATA-MODEL.md §4, issue 10), how many
 *   holds are not settled yet and how many are past their settle bound (`holdExpiresAt` < now).
 * Each check is `ok`, `fail` (the command exits 1) or `skip` (nothing to check here), with a detail.
 */
import { DescribeTableCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ORIGIN_SECRET_ARN_ENV, UPSTREAM_SECRET_ARN_ENV } from '../functions/shared/config/stack-contract';
import { UPSTREAM_API_KEY_VARS } from '../functions/shared/providers/manifest';
import { documentClient } from '../functions/shared/store/dynamo';
import { tableNames } from '../functions/shared/store/tables';

/** One check's verdict. */
export interface HealthCheck {
  check: string;
  status: 'ok' | 'fail' | 'skip';
  detail: string;
}

/** The ledger GSI listing unsettled holds (DATA-MODEL.md §4): pk `holdBucket` "0".."15", sk `holdExpiresAt` (epoch ms). */
export const PENDING_HOLDS_INDEX = 'pendingHolds';
const HOLD_BUCKETS = 16;

/** Runs every check (in parallel); never throws: a failure is a `fail` row. */
export async function runHealth(now = Date.now()): Promise<HealthCheck[]> {
  const tables = tableNames();
  const dynamo = documentClient();
  const described = await Promise.all(
    Object.entries(tables).map(async ([logical, name]): Promise<[string, string, TableDescription | Error]> => {
      try {
        const out = await dynamo.send(new DescribeTableCommand({ TableName: name }));
        return [logical, name, out.Table ?? new Error('no table description')];
      } catch (err) {
        return [logical, name, err as Error];
      }
    }),
  );
  const checks: HealthCheck[] = described.map(([logical, name, table]) =>
    table instanceof Error
      ? { check: `table ${logical}`, status: 'fail', detail: `${name}: ${table.name}: ${table.message}` }
      : { check: `table ${logical}`, status: table.TableStatus === 'ACTIVE' ? 'ok' : 'fail', detail: `${name} ${table.TableStatus}, ~${table.ItemCount ?? 0} items` },
  );
  const ledger = described.find(([logical]) => logical === 'ledger')?.[2];
  const [upstream, origin, holds] = await Promise.all([
    secretCheck('upstream keys secret', UPSTREAM_SECRET_ARN_ENV, describeUpstreamKeys),
    secretCheck('origin secret', ORIGIN_SECRET_ARN_ENV, describeOriginSecret),
    pendingHolds(tables.ledger, ledger, now),
  ]);
  return [...checks, upstream, origin, holds];
}

async function secretCheck(check: string, env: string, describe: (value: unknown) => HealthCheck['detail'] | Error): Promise<HealthCheck> {
  const secretId = process.env[env];
  if (secretId === undefined || secretId === '') return { check, status: 'skip', detail: `${env} is not set (locally: keys come from the environment)` };
  try {
    const region = secretId.startsWith('arn:') ? secretId.split(':')[3] : undefined;
    const client = new SecretsManagerClient(region ? { region } : {});
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    client.destroy();
    let parsed: unknown;
    try {
      parsed = JSON.parse(out.SecretString ?? '');
    } catch {
      return { check, status: 'fail', detail: `${secretId} is readable but not JSON` };
    }
    const detail = describe(parsed);
    return detail instanceof Error ? { check, status: 'fail', detail: `${secretId}: ${detail.message}` } : { check, status: 'ok', detail: `${secretId}: ${detail}` };
  } catch (err) {
    return { check, status: 'fail', detail: `${secretId}: ${(err as Error).name}: ${(err as Error).message}` };
  }
}

/** Which provider keys the secret holds, by name only. */
function describeUpstreamKeys(value: unknown): string | Error {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return new Error('not a JSON object');
  const present = UPSTREAM_API_KEY_VARS.filter((name) => {
    const v: unknown = Reflect.get(value, name);
    return typeof v === 'string' && v.trim() !== '';
  });
  return present.length === 0 ? 'readable, but holds no provider key yet (fill it: PutUpstreamKeysCommand output)' : `readable, holds ${present.join(', ')}`;
}

function describeOriginSecret(value: unknown): string | Error {
  const current: unknown = typeof value === 'object' && value !== null ? Reflect.get(value, 'current') : undefined;
  if (typeof current !== 'string' || current === '') return new Error('no "current" value');
  const previous: unknown = Reflect.get(value as object, 'previous');
  return typeof previous === 'string' && previous !== '' ? 'readable, current and previous (a rotation is in progress)' : 'readable, current';
}

async function pendingHolds(ledgerName: string, ledger: TableDescription | Error | undefined, now: number): Promise<HealthCheck> {
  const check = 'pending holds';
  if (ledger === undefined || ledger instanceof Error) return { check, status: 'fail', detail: 'the ledger table is not reachable' };
  if (!(ledger.GlobalSecondaryIndexes ?? []).some((i) => i.IndexName === PENDING_HOLDS_INDEX)) {
    return { check, status: 'skip', detail: `the ledger has no ${PENDING_HOLDS_INDEX} index (holds arrive with issue 10): nothing to count` };
  }
  try {
    const counts = await Promise.all(
      Array.from({ length: HOLD_BUCKETS }, async (_, bucket) => {
        const [pending, overdue] = await Promise.all([countHolds(ledgerName, String(bucket)), countHolds(ledgerName, String(bucket), now)]);
        return { pending, overdue };
      }),
    );
    const pending = counts.reduce((a, c) => a + c.pending, 0);
    const overdue = counts.reduce((a, c) => a + c.overdue, 0);
    return { check, status: overdue > 0 ? 'fail' : 'ok', detail: `${pending} pending, ${overdue} past their settle bound${overdue > 0 ? ' (settle them: npm run admin -- holds …)' : ''}` };
  } catch (err) {
    return { check, status: 'fail', detail: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

/** Holds in one bucket (all of them, or those expiring before `before`, epoch ms), counted page by page. */
async function countHolds(ledgerName: string, bucket: string, before?: number): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await documentClient().send(
      new QueryCommand({
        TableName: ledgerName,
        IndexName: PENDING_HOLDS_INDEX,
        KeyConditionExpression: before === undefined ? 'holdBucket = :b' : 'holdBucket = :b AND holdExpiresAt < :now',
        ExpressionAttributeValues: before === undefined ? { ':b': bucket } : { ':b': bucket, ':now': before },
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start !== undefined);
  return count;
}

/** Aligned text rows for a terminal. */
export function formatHealth(checks: readonly HealthCheck[]): string {
  const width = Math.max(...checks.map((c) => c.check.length));
  return checks.map((c) => `${c.status.padEnd(4)}  ${c.check.padEnd(width)}  ${c.detail}`).join('\n');
}

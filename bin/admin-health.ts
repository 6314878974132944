/**
 * `npm run admin -- health`: can this deployment (or the local store) work right now?
 * - each table is reachable and ACTIVE (DescribeTable);
 * - the upstream-keys secret (`UPSTREAM_SECRET_ARN`) is readable and a JSON object, naming which
 *   provider keys it holds (never a value); the origin secret (`ORIGIN_SECRET_ARN`) has a `current`;
 * - pending holds: how many holds are in flight (the inline records `holds.<requestId>` on the account
 *   items, found through the orphan sweep's pendingHolds index, billing/hold-record.ts) and how many
 *   are past their settle bound (expiry < now);
 * Each check is `ok`, `fail` (the command exits 1) or `skip` (nothing to check here), with a detail.
 */
import { DescribeTableCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ORIGIN_SECRET_ARN_ENV, UPSTREAM_SECRET_ARN_ENV } from '../functions/shared/config/stack-contract';
import { UPSTREAM_API_KEY_VARS } from '../functions/shared/providers/manifest';
import { listInlineHolds } from '../functions/shared/billing/sweep';
import { documentClient } from '../functions/shared/store/dynamo';
import { tableNames } from '../functions/shared/store/tables';

/** One check's verdict. */
export interface HealthCheck {
  check: string;
  status: 'ok' | 'fail' | 'skip';
  detail: string;
}

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
      : {
          check: `table ${logical}`,
          status: table.TableStatus === 'ACTIVE' ? 'ok' : 'fail',
          detail: `${name} ${table.TableStatus}, ~${table.ItemCount ?? 0} items`,
        },
  );
  const accounts = described.find(([logical]) => logical === 'accounts')?.[2];
  const [upstream, origin, holds] = await Promise.all([
    secretCheck('upstream keys secret', UPSTREAM_SECRET_ARN_ENV, describeUpstreamKeys),
    secretCheck('origin secret', ORIGIN_SECRET_ARN_ENV, describeOriginSecret),
    pendingHolds(accounts, now),
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
    return detail instanceof Error
      ? { check, status: 'fail', detail: `${secretId}: ${detail.message}` }
      : { check, status: 'ok', detail: `${secretId}: ${detail}` };
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

async function pendingHolds(accounts: TableDescription | Error | undefined, now: number): Promise<HealthCheck> {
  const check = 'pending holds';
  if (accounts === undefined || accounts instanceof Error) return { check, status: 'fail', detail: 'the accounts table is not reachable' };
  try {
    const holds = await listInlineHolds();
    const pending = holds.length;
    const overdue = holds.filter((h) => h.holdExpiresAt < now).length;
    return {
      check,
      status: overdue > 0 ? 'fail' : 'ok',
      detail: `${pending} pending, ${overdue} past their settle bound${overdue > 0 ? ' (settle them: npm run admin -- holds …)' : ''}`,
    };
  } catch (err) {
    return { check, status: 'fail', detail: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

/** Aligned text rows for a terminal. */
export function formatHealth(checks: readonly HealthCheck[]): string {
  const width = Math.max(...checks.map((c) => c.check.length));
  return checks.map((c) => `${c.status.padEnd(4)}  ${c.check.padEnd(width)}  ${c.detail}`).join('\n');
}

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { authenticate } from '../../functions/shared/accounts/authenticate';
import { clearViews } from '../../functions/shared/billing/account-state';
import { reloadConfig } from '../../functions/shared/config/env';
import { documentClient } from '../../functions/shared/store/dynamo';
import { TABLE_ENV } from '../../functions/shared/store/table-schemas';
import type { TableNames } from '../../functions/shared/store/tables';
import { billRequest } from '../support/billing';
import { createTestTables } from '../support/tables';

/**
 * The restore drill against DynamoDB Local, as an operator runs it: `npm run restore -- --mode copy`
 * (a child process through tsx) restores keys, accounts and ledger into NEW tables with the same keys
 * and indexes, writes their names into the CDK context file (keeping its other keys), and the store
 * pointed at them serves the same accounts, keys and ledger. (The point-in-time and AWS Backup
 * restores themselves need AWS; the re-pointing of the stack is asserted on the template in
 * test/lib/deploy-readiness.test.ts.)
 */
const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
let source: TableNames;

function restore(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ['bin/restore-tables.ts', ...args], { cwd: ROOT, env: { ...process.env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function scanAll(table: string): Promise<Array<Record<string, unknown>>> {
  const out = await documentClient().send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return (out.Items ?? []).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

beforeAll(async () => {
  source = await createTestTables('restore');
});

describe('npm run restore -- --mode copy (DynamoDB Local)', () => {
  it('restores keys, accounts and ledger into new tables, re-points the context, and the restored store serves the same data', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000, email: 'drill@example.com' });
    const { key, keyHash } = await createKey(accountId, 'drill');
    await billRequest(accountId, keyHash, 100, 50);
    const before = await getAccount(accountId, { consistent: true });

    const dir = mkdtempSync(join(tmpdir(), 'modelmux-restore-'));
    const contextFile = join(dir, 'cdk.context.json');
    writeFileSync(contextFile, JSON.stringify({ 'availability-zones:account=123:region=us-east-1': ['a'] }));
    const run = await restore(['--mode', 'copy', '--suffix', 'drill', '--context-file', contextFile, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { tables: Record<'keys' | 'accounts' | 'ledger', { from: string; to: string; items: number }> };

    const restored = { keys: `${source.keys}-drill`, accounts: `${source.accounts}-drill`, ledger: `${source.ledger}-drill` };
    for (const t of ['keys', 'accounts', 'ledger'] as const) {
      expect(result.tables[t]).toMatchObject({ from: source[t], to: restored[t] });
      expect(await scanAll(restored[t])).toEqual(await scanAll(source[t]));
      expect(result.tables[t].items).toBeGreaterThan(0);
    }
    const accounts = (await documentClient().send(new DescribeTableCommand({ TableName: restored.accounts }))).Table;
    expect((accounts?.GlobalSecondaryIndexes ?? []).map((g) => [g.IndexName, g.Projection?.ProjectionType]).sort()).toEqual([
      ['byEmailKeys', 'KEYS_ONLY'],
      ['pendingHolds', 'KEYS_ONLY'],
    ]);
    // The stack's context now names the restored tables; other context is kept.
    const context = JSON.parse(readFileSync(contextFile, 'utf8')) as Record<string, unknown>;
    expect(context.restoredTables).toEqual(restored);
    expect(context['availability-zones:account=123:region=us-east-1']).toEqual(['a']);

    // The functions pointed at the restored tables (what the next deploy does) see the same world.
    for (const t of ['keys', 'accounts', 'ledger'] as const) process.env[TABLE_ENV[t]] = restored[t];
    reloadConfig();
    clearViews();
    expect((await authenticate(key)).accountId).toBe(accountId);
    expect(await getAccount(accountId, { consistent: true })).toEqual(before);
    for (const t of ['keys', 'accounts', 'ledger'] as const) process.env[TABLE_ENV[t]] = source[t];
    reloadConfig();
  }, 120_000);

  it('refuses a bad command line with exit code 2 and changes nothing', async () => {
    const run = await restore(['--mode', 'sideways']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/usage: npm run restore/);
  });
});

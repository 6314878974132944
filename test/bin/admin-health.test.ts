import { encodeInlineHold, sweepShardOf } from '../../functions/shared/billing/hold-record';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ensureTables } from '../../local/dynamodb-local';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../functions/shared/store/dynamo';
import type { TableNames } from '../../functions/shared/store/tables';
import { startSecretsManagerStub, type SecretsManagerStub } from '../support/secrets-manager';
import { createTestTables } from '../support/tables';

/**
 * `npm run admin -- health` as operators run it (a child process through tsx), against this file's
 * tables in DynamoDB Local and a loopback Secrets Manager stand-in reached by the real SDK.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const UPSTREAM_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:Modelmux/upstream-keys-AbCdEf';
const ORIGIN_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:OriginSecret-XyZ123';

interface Check {
  check: string;
  status: 'ok' | 'fail' | 'skip';
  detail: string;
}

let tables: TableNames;
let secrets: SecretsManagerStub;

function health(env: Record<string, string> = {}, json = true): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const args = ['bin/admin.ts', 'health', ...(json ? ['--json'] : [])];
    execFile(
      TSX,
      args,
      { cwd: ROOT, env: { ...process.env, AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

const byName = (stdout: string): Record<string, Check> => Object.fromEntries((JSON.parse(stdout) as Check[]).map((c) => [c.check, c]));

beforeAll(async () => {
  tables = await createTestTables('health');
  secrets = await startSecretsManagerStub();
});

afterAll(async () => {
  await secrets?.close();
});

describe('admin health', () => {
  it('reports the three tables reachable, skips unset secrets and finds no pending hold on the account items', async () => {
    const r = await health({ UPSTREAM_SECRET_ARN: '', ORIGIN_SECRET_ARN: '' });
    expect(r.code).toBe(0);
    const checks = byName(r.stdout);
    for (const t of ['keys', 'accounts', 'ledger'])
      expect(checks[`table ${t}`]).toMatchObject({ status: 'ok', detail: expect.stringContaining(`${tables[t as keyof TableNames]} ACTIVE`) });
    expect(checks['upstream keys secret']).toMatchObject({ status: 'skip' });
    expect(checks['origin secret']).toMatchObject({ status: 'skip' });
    expect(checks['pending holds']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^0 pending/) });
  });

  it('names the provider keys the secret holds, never their values, and fails (exit 1) on an unreadable origin secret', async () => {
    secrets.secrets.set(UPSTREAM_ARN, JSON.stringify({ OPENAI_API_KEY: 'sk-very-secret-value', GEMINI_API_KEY: '' }));
    const r = await health({ UPSTREAM_SECRET_ARN: UPSTREAM_ARN, ORIGIN_SECRET_ARN: ORIGIN_ARN });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('sk-very-secret-value');
    const checks = byName(r.stdout);
    expect(checks['upstream keys secret']).toMatchObject({ status: 'ok', detail: expect.stringMatching(/holds OPENAI_API_KEY$/) });
    expect(checks['origin secret']).toMatchObject({ status: 'fail', detail: expect.stringContaining('ResourceNotFoundException') });

    secrets.secrets.set(ORIGIN_ARN, JSON.stringify({ current: 'a', previous: 'b' }));
    const text = await health({ UPSTREAM_SECRET_ARN: UPSTREAM_ARN, ORIGIN_SECRET_ARN: ORIGIN_ARN }, false);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ok\s+origin secret\s+.*current and previous/m);
  });

  it('counts pending and overdue holds from the inline records on the account items, and fails when one is past its bound', async () => {
    const accounts = `${tables.accounts}-holds`;
    const client = createDocumentClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
    await ensureTables(client, { ...tables, accounts }, ['accounts']);
    const now = Date.now();
    const inline = (expiresAt: number) =>
      encodeInlineHold({
        ownerAccountId: 'acct_h',
        accountId: 'acct_h',
        shard: 0,
        requestId: 'r',
        keyHash: 'ab'.repeat(32),
        holdFreeTokens: 0,
        holdNanoUsd: 1_000,
        keyLimited: false,
        accountSlot: true,
        keySlot: true,
        promptTokensEstimate: 10,
        promptTokensHeld: 12,
        maxCompletionTokens: 20,
        holdInputPrice: 150_000,
        holdOutputPrice: 600_000,
        publicModel: 'gpt-4o-mini',
        createdAt: new Date(now).toISOString(),
        holdExpiresAt: expiresAt,
      });
    await client.send(
      new PutCommand({
        TableName: accounts,
        Item: { accountId: 'acct_h', sweepShard: sweepShardOf('acct_h'), holds: { r1: inline(now + 600_000), r2: inline(now + 600_000) } },
      }),
    );
    await client.send(
      new PutCommand({ TableName: accounts, Item: { accountId: 'acct_h#1', sweepShard: sweepShardOf('acct_h#1'), holds: { r3: inline(now - 60_000) } } }),
    );
    // An account with nothing in flight: not counted.
    await client.send(new PutCommand({ TableName: accounts, Item: { accountId: 'acct_idle', holds: {} } }));
    client.destroy();

    const r = await health({ ACCOUNTS_TABLE: accounts, UPSTREAM_SECRET_ARN: '', ORIGIN_SECRET_ARN: '' });
    expect(r.code).toBe(1);
    expect(byName(r.stdout)['pending holds']).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^3 pending, 1 past their settle bound/) });
  });

  it('fails (exit 1) when a table cannot be reached', async () => {
    const r = await health({ KEYS_TABLE: 'no-such-table', UPSTREAM_SECRET_ARN: '', ORIGIN_SECRET_ARN: '' });
    expect(r.code).toBe(1);
    expect(byName(r.stdout)['table keys']).toMatchObject({ status: 'fail', detail: expect.stringContaining('ResourceNotFoundException') });
  });
});

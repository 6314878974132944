import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { hashApiKey } from '../../functions/shared/accounts/api-key';
import { billRequest } from '../support/billing';
import { createTestTables } from '../support/tables';

/** The CLI as users run it: a child process through tsx, env pointing at this file's tables in DynamoDB Local. */
const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function admin(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(TSX, ['bin/admin.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function adminJson<T>(args: string[]): Promise<T> {
  const r = await admin([...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
}

beforeAll(async () => {
  await createTestTables('admin');
});

describe('admin CLI', () => {
  it('creates an account and a key, lists keys without the secret, and sums usage', async () => {
    const account = await adminJson<{ accountId: string; freeTokens: number; creditNanoUsd: number }>([
      'accounts',
      'create',
      '--free-tokens',
      '100',
      '--credit-usd',
      '2.5',
    ]);
    expect(account).toMatchObject({ freeTokens: 100, creditNanoUsd: 2_500_000_000, keyCount: 0 });
    const id = account.accountId;

    const created = await admin(['keys', 'create', '--account', id, '--name', 'ci']);
    expect(created.code).toBe(0);
    const key = created.stdout.split('\n')[0]!;
    expect(key).toMatch(/^sk-mux-[0-9A-Za-z]{43}$/);
    expect(created.stdout.split(key)).toHaveLength(2); // printed exactly once

    const listed = await admin(['keys', 'list', '--account', id]);
    expect(listed.stdout).toMatch(new RegExp(`^[0-9a-f]{12}  active   ${key.slice(0, 11)}…  \\S+  ci\\n$`));
    expect(listed.stdout).not.toContain(key.slice(11));

    const charges = await Promise.all([billRequest(id, hashApiKey(key), 80, 40), billRequest(id, hashApiKey(key), 1_000, 500)]);
    type Usage = { requests: number; promptTokens: number; completionTokens: number; freeTokensUsed: number; costNanoUsd: number };
    const byKey = await adminJson<Usage & { accountId: string }>(['usage', '--key', key]);
    const [usage, credit, revoked] = await Promise.all([
      adminJson<Usage>(['usage', '--account', id, '--since', '2020-01-01']),
      adminJson<{ creditNanoUsd: number }>(['credit', 'add', '--account', id, '--usd', '1']),
      admin(['keys', 'revoke', '--account', id, '--key', `${key.slice(0, 11)}…`]),
    ]);
    const cost = charges[0]!.costNanoUsd + charges[1]!.costNanoUsd;
    expect(usage).toMatchObject({ requests: 2, promptTokens: 1_080, completionTokens: 540, freeTokensUsed: 100, costNanoUsd: cost });
    expect(byKey).toMatchObject({ accountId: id, requests: 2, costNanoUsd: cost });
    expect(credit.creditNanoUsd).toBe(3_500_000_000 - cost);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain('Deleted');
  });

  it('finds a self-serve account by its sign-in email (any case) for show, credit and keys', async () => {
    const { ensureSelfServeAccount } = await import('../../functions/shared/accounts/self-serve-account');
    const sub = `${randomUUID()}`;
    const email = `Ops-${sub.slice(0, 8)}@Example.com`;
    await ensureSelfServeAccount(sub, async () => email);
    // The byEmail index is eventually consistent: wait until the account shows up.
    const shown = await vi.waitFor(
      async () => {
        const r = await admin(['accounts', 'show', '--account', email.toUpperCase(), '--json']);
        const out: { accountId?: string; email?: string; freeTokens?: number } = r.code === 0 ? JSON.parse(r.stdout) : {};
        if (out.accountId !== sub) throw new Error(`accounts show --account ${email} did not find ${sub} yet (exit ${r.code})`);
        return out;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(shown).toMatchObject({ accountId: sub, email: email.toLowerCase(), freeTokens: 200_000 });
    const credit = await adminJson<{ accountId: string; creditNanoUsd: number }>(['credit', 'add', '--account', email, '--usd', '3']);
    expect(credit).toMatchObject({ accountId: sub, creditNanoUsd: 3_000_000_000 });
    const created = await admin(['keys', 'create', '--account', email, '--name', 'by-email']);
    expect(created.code).toBe(0);
    const missing = await admin(['accounts', 'show', '--account', 'nobody@example.com']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No account with the email nobody@example.com');
  });

  it('exits 2 with usage for a bad command line, 1 with a clear message when the operation fails', async () => {
    const [unknown, missing, noAccount] = await Promise.all([
      admin(['frobnicate']),
      admin(['credit', 'add', '--usd', '1']),
      admin(['keys', 'create', '--account', 'acct_nobody']),
    ]);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain('Unknown command "frobnicate"');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--account is required');
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('No account acct_nobody');
  });

  it('lists pending holds and settles one by request id as orphaned, once', async () => {
    const account = await adminJson<{ accountId: string }>(['accounts', 'create', '--free-tokens', '0', '--credit-usd', '1']);
    const created = await admin(['keys', 'create', '--account', account.accountId]);
    const key = created.stdout.split('\n')[0]!;
    const { hold, demandOf } = await import('../support/billing');
    const h = await hold(account.accountId, hashApiKey(key), demandOf(100, 50));
    // The holds listing reads an eventually consistent index: looked at until the hold shows up.
    await expect
      .poll(async () => (await adminJson<Array<{ requestId: string }>>(['holds', 'list'])).map((x) => x.requestId), { timeout: 20_000, interval: 100 })
      .toContain(h.requestId);
    const settled = await adminJson<Array<{ requestId: string; alreadySettled: boolean; costNanoUsd: number }>>(['holds', 'settle', '--request', h.requestId]);
    expect(settled).toEqual([{ requestId: h.requestId, alreadySettled: false, freeTokensUsed: 0, costNanoUsd: Math.ceil((100 * 2_637_500) / 1000) }]);
    const shown = await adminJson<{ creditNanoUsd: number; heldNanoUsd: number; usedNanoUsd: number }>(['accounts', 'show', '--account', account.accountId]);
    expect(shown).toMatchObject({ creditNanoUsd: 1_000_000_000 - settled[0]!.costNanoUsd, heldNanoUsd: 0, usedNanoUsd: settled[0]!.costNanoUsd });
  });

  it('says the data store is unavailable when DynamoDB cannot be reached', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise((r) => server.close(r));
    const r = await admin(['accounts', 'create'], { DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('data store is unavailable');
  });
});

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { AdminGetUserCommand } from '@aws-sdk/client-cognito-identity-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { addCredit } from '../../functions/shared/accounts/account-store';
import { queryAccountKeys } from '../../functions/shared/accounts/keys/api-key-store';
import { ensureSelfServeAccount } from '../../functions/shared/accounts/self-serve-account';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { cognitoClient, newEmail } from '../support/cognito-user';
import { costSum, ledgerEntries } from '../support/ledger';

/**
 * `npm run smoke` as an operator runs it after a deploy (a child process through tsx), against the
 * local stack `npm start` runs — the real handlers, the Cognito emulator with the dashboard's pool and
 * client, DynamoDB Local, the upstream simulator — so the smoke test cannot rot. The code path answers
 * the script's prompt with the code the emulator "mailed" (for a free-tier account and for one paid by
 * credit); the admin path confirms with AdminConfirmSignUp and meets a failing call.
 */
/** Each run signs up, calls, waits for the balance to settle (the lease's 5 s idle) and cleans up. */
const RUN_TIMEOUT_MS = 120_000;
const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `smoke-${process.pid}`, cognito: {}, siteDir: false });
});

afterAll(async () => {
  await gw?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the script; when it asks for a confirmation code, answers with the one the emulator sent to
 * that address (the awaited prompt, then the emulator's codes file), after `beforeCode` if given.
 */
function smoke(args: string[], beforeCode: (email: string) => Promise<void> = async () => undefined): Promise<Run> {
  const child = spawn(TSX, ['bin/smoke.ts', ...args], { cwd: ROOT, env: process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let answered = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    const asked = /Confirmation code Cognito sent to (\S+): /.exec(stdout);
    if (asked && !answered) {
      answered = true;
      const email = asked[1]!;
      void beforeCode(email)
        .then(() => gw.cognito!.confirmationCode(email))
        .then((code) => child.stdin.write(`${code}\n`));
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** The verdict of each step, by name, from the script's lines. */
function verdicts(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of stdout.matchAll(/^(PASS|FAIL|SKIP) {2}(.+?) {2}/gm)) out[m[2]!.trim()] = m[1]!;
  return out;
}

const STEPS = ['config', 'sign up', 'account', 'create key', 'chat', 'chat stream', 'embeddings', 'messages', 'ledger', 'balance', 'delete key', 'delete user'];

/** True when the pool no longer has the user. */
async function userGone(email: string): Promise<boolean> {
  const client = cognitoClient(gw);
  try {
    await client.send(new AdminGetUserCommand({ UserPoolId: gw.cognito!.userPoolId, Username: email }));
    return false;
  } catch (err) {
    return (err as Error).name === 'UserNotFoundException';
  } finally {
    client.destroy();
  }
}

/** Credit of the paid account, nano-USD ($1). */
const CREDIT = 1_000_000_000;

/**
 * Makes the account of the user just signed up (not yet confirmed) a paid one before the script's first
 * account-API call: no free tokens, {@link CREDIT} of credit.
 */
async function paidAccount(email: string): Promise<void> {
  const client = cognitoClient(gw);
  const user = await client.send(new AdminGetUserCommand({ UserPoolId: gw.cognito!.userPoolId, Username: email })).finally(() => client.destroy());
  const sub = user.UserAttributes?.find((a) => a.Name === 'sub')?.Value ?? String(user.Username);
  await ensureSelfServeAccount(sub, async () => email);
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().accounts,
      Key: { accountId: sub },
      UpdateExpression: 'SET freeTokens = :z',
      ExpressionAttributeValues: { ':z': 0 },
    }),
  );
  await addCredit(sub, CREDIT);
}

/** The account id the script printed for its sign-up. */
const subOf = (stdout: string): string => /\(sub ([0-9a-f-]{36})\)/.exec(stdout)?.[1] ?? '';

describe('npm run smoke against the local stack', () => {
  it(
    'passes every step with the emailed code, leaves the ledger it checked, and deletes its key and user',
    async () => {
      const email = newEmail('smoke');
      const run = await smoke(['--base-url', gw.baseUrl, '--email', email]);
      expect(run.stderr).toBe('');
      expect(verdicts(run.stdout)).toEqual(Object.fromEntries(STEPS.map((s) => [s, 'PASS'])));
      expect(run.stdout).toContain('confirmed with the emailed code');
      expect(run.stdout).toMatch(/smoke: 12 passed, 0 failed, 0 skipped: PASS\n$/);
      expect(run.code).toBe(0);

      const sub = subOf(run.stdout);
      const entries = (await ledgerEntries(sub)).filter((e) => typeof e.publicModel === 'string');
      expect(entries.map((e) => e.publicModel).sort()).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'text-embedding-3-small']);
      expect(entries.every((e) => e.status === 'complete' && e.freeTokensUsed > 0)).toBe(true);
      expect((await queryAccountKeys(sub)).map((k) => k.status)).toEqual(['deleted']);
      expect(await userGone(email)).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'takes the pool from flags, confirms with AdminConfirmSignUp, reports a failing call as FAIL, checks the rest and still cleans up (exit 1)',
    async () => {
      const email = newEmail('smoke-admin');
      const c = gw.cognito!;
      const pool = ['--user-pool-id', c.userPoolId, '--client-id', c.userPoolClientId, '--region', 'local', '--cognito-endpoint', c.endpoint];
      const models = ['--chat-model', 'no-such-model', '--messages-model', 'gpt-4o-mini'];
      const run = await smoke(['--base-url', gw.baseUrl, '--email', email, '--confirm', 'admin', ...pool, ...models]);
      expect(run.stdout).toContain(`user pool ${c.userPoolId}, app client ${c.userPoolClientId}, region local (from the flags)`);
      expect(run.stdout).not.toContain('Confirmation code');
      expect(run.stdout).toContain('confirmed with AdminConfirmSignUp');
      expect(verdicts(run.stdout)).toEqual({
        ...Object.fromEntries(STEPS.map((s) => [s, 'PASS'])),
        chat: 'FAIL',
        'chat stream': 'FAIL',
      });
      expect(run.stdout).toMatch(/^FAIL {2}chat {10}.*no-such-model.*\[HTTP 404\]/m);
      expect(run.stdout).toMatch(/^PASS {2}ledger {8}2 requests of this key/m);
      expect(run.stdout).toMatch(/smoke: 10 passed, 2 failed, 0 skipped: FAIL\n$/);
      expect(run.code).toBe(1);
      expect(await userGone(email)).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'checks a paid account too: the balance step sees the credit move by exactly the ledger entries’ cost',
    async () => {
      const run = await smoke(['--base-url', gw.baseUrl, '--email', newEmail('smoke-paid')], paidAccount);
      expect(verdicts(run.stdout)).toEqual(Object.fromEntries(STEPS.map((s) => [s, 'PASS'])));
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`0 free tokens, ${CREDIT} nano-USD credit`);
      const moved = /free tokens 0 → 0 \(−0\), credit (\d+) → (\d+) nano-USD \(−(\d+)\)/.exec(run.stdout);
      expect(moved).not.toBeNull();
      const [, from, to, cost] = (moved as RegExpExecArray).map(Number);
      const entries = (await ledgerEntries(subOf(run.stdout))).filter((e) => typeof e.publicModel === 'string');
      expect(entries).toHaveLength(4);
      expect(cost).toBeGreaterThan(0);
      expect(cost).toBe(costSum(entries));
      expect([from, to]).toEqual([CREDIT, CREDIT - cost!]);
    },
    RUN_TIMEOUT_MS,
  );

  it('fails the account step for an address that already had the free grant, skips what needs it, still deletes the user', async () => {
    const email = newEmail('smoke-again');
    await ensureSelfServeAccount(randomUUID(), async () => email); // an earlier person's account: the grant is taken
    const run = await smoke(['--base-url', gw.baseUrl, '--email', email, '--confirm', 'admin']);
    expect(run.stdout).toMatch(/^FAIL {2}account {7}the new account \S+ has no free tokens \(already_granted\) and no credit/m);
    const skipped = STEPS.slice(3, -1);
    expect(verdicts(run.stdout)).toEqual({
      config: 'PASS',
      'sign up': 'PASS',
      account: 'FAIL',
      ...Object.fromEntries(skipped.map((s) => [s, 'SKIP'])),
      'delete user': 'PASS',
    });
    expect(run.stdout).toMatch(/^SKIP {2}create key {4}needs account$/m);
    expect(run.code).toBe(1);
    expect(await userGone(email)).toBe(true);
  });

  it('imports nothing of the repository outside bin/smoke: it speaks to a deployment over HTTP, never through Lambda code', () => {
    const files = ['bin/smoke.ts', ...readdirSync(join(ROOT, 'bin/smoke')).map((f) => `bin/smoke/${f}`)];
    const outside = files.flatMap((file) =>
      ts
        .preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true)
        .importedFiles.map((ref) => ref.fileName)
        .filter((name) => name.startsWith('.') && !resolve(ROOT, file, '..', name).startsWith(join(ROOT, 'bin/smoke')))
        .map((name) => `${file} imports ${name}`),
    );
    expect(files.length).toBeGreaterThan(5);
    expect(outside).toEqual([]);
  });

  it('refuses a command line without --base-url, or a code to be mailed to an address nobody reads (exit 2)', async () => {
    const [noBase, noEmail] = await Promise.all([smoke(['--email', 'x@example.com']), smoke(['--base-url', 'https://modelmux.invalid/v1'])]);
    expect(noBase.stderr).toContain('--base-url is required');
    expect(noBase.code).toBe(2);
    expect(noEmail.stderr).toContain('--confirm code needs --email');
    expect(noEmail.code).toBe(2);
  });
});

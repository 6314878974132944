import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AlreadyRunningError, acquireStartLock, START_LOCK_FILE } from '../../../local/start-lock';

/** One `npm start` per checkout: .local/npm-start.pid, taken before anything touches .local. */

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const dirs: string[] = [];
const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'start-lock-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A pid no process has: a child that has exited (its pid is not reused within the test). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('the npm start lock', () => {
  it('writes our pid, refuses a second holder while we live, and is free again once released', () => {
    const dir = scratch();
    const release = acquireStartLock(dir);
    expect(readFileSync(join(dir, START_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    // A live holder (here the parent of this worker stands in for the first npm start).
    writeFileSync(join(dir, START_LOCK_FILE), `${process.ppid}\n`);
    expect(() => acquireStartLock(dir)).toThrow(AlreadyRunningError);
    expect(() => acquireStartLock(dir)).toThrow(`modelmux is already running from this checkout (pid ${process.ppid}`);
    release(); // not ours any more: left in place
    expect(readFileSync(join(dir, START_LOCK_FILE), 'utf8').trim()).toBe(String(process.ppid));
    writeFileSync(join(dir, START_LOCK_FILE), `${process.pid}\n`);
    release();
    expect(existsSync(join(dir, START_LOCK_FILE))).toBe(false);
  });

  it('takes over a lock whose process is gone (a crash or kill -9), and one holding garbage', async () => {
    const dir = scratch();
    writeFileSync(join(dir, START_LOCK_FILE), `${await deadPid()}\n`);
    acquireStartLock(dir)();
    writeFileSync(join(dir, START_LOCK_FILE), 'not a pid');
    const release = acquireStartLock(dir);
    expect(readFileSync(join(dir, START_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    release();
  });

  it('makes a second `npm start` exit 1 with the message before it touches .local', async () => {
    const checkout = scratch();
    const state = join(checkout, '.local');
    const first = acquireStartLock(state); // this process is the running start
    const codes = join(state, 'cognito', 'codes.jsonl');
    mkdirSync(join(state, 'cognito'));
    writeFileSync(codes, '{"email":"a@example.com","code":"123456"}\n');
    // The real start script, from a checkout whose .local is `state` (LOCAL_STATE_DIR is cwd/.local).
    const child = spawn(join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [join(REPO_ROOT, 'local', 'start.ts')], {
      cwd: checkout,
      env: { ...process.env, PORT: '0' },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`modelmux is already running from this checkout (pid ${process.pid}`);
    expect(readFileSync(codes, 'utf8')).toBe('{"email":"a@example.com","code":"123456"}\n');
    expect(readFileSync(join(state, START_LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
    first();
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { ledgerEntries } from '../support/ledger';

/**
 * Claude Code itself (npm `@anthropic-ai/claude-code`, a devDependency: a native binary, so the
 * machine's Node version does not matter) against the local stack, changed only by
 * `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY`, offline (a fresh HOME; telemetry, error reporting,
 * auto-update and nonessential traffic off). `claude -p` completes a task that needs a tool: read a
 * file and report what it says. The simulator's model calls the tool the prompt names (`Read`) with the
 * prompt's path (else its schema's "Paris"), Claude Code runs it, sends the result back, and the
 * simulator answers in text quoting it, so the agent stops. Once per model with `--tools Read`, and once
 * as README's "Claude Code" section runs it: no `--model`, its default tools (Agent first). About 5 s each.
 * A session named with `--session-id` is on every request (its `x-claude-code-session-id` header and
 * `metadata.user_id`): each of its ledger entries records it (routing/sticky.ts `sessionIdOf`).
 */

const run = promisify(execFile);

/**
 * The CLI as `npm ci` installs it: the platform package's native binary when it is there (so a
 * postinstall that was skipped, e.g. `--ignore-scripts`, does not leave us the placeholder), else the
 * `claude` bin. Missing both means node_modules predates the devDependency: run `npm ci`.
 */
function locateClaude(): string {
  const root = join(__dirname, '..', '..');
  const require = createRequire(join(root, 'package.json'));
  const musl =
    process.platform === 'linux' &&
    (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime === undefined;
  const platform = `${process.platform}-${process.arch}${musl ? '-musl' : ''}`;
  try {
    const dir = dirname(require.resolve(`@anthropic-ai/claude-code-${platform}/package.json`));
    for (const name of ['claude', 'claude.exe']) if (existsSync(join(dir, name))) return join(dir, name);
  } catch {
    // no platform package: fall back to the bin
  }
  const bin = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'claude.cmd' : 'claude');
  if (existsSync(bin)) return bin;
  throw new Error('Claude Code is not installed (node_modules/@anthropic-ai/claude-code is missing): run `npm ci`');
}
const CLAUDE = locateClaude();

let gw: RunningGateway;
let home: string;
let work: string;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `claude-code-${process.pid}`, devFreeTokens: 5_000_000 });
  home = mkdtempSync(join(tmpdir(), 'modelmux-claude-home-'));
  work = mkdtempSync(join(tmpdir(), 'modelmux-claude-work-'));
  writeFileSync(join(work, 'Paris'), 'The secret number is 4242.\n');
  writeFileSync(join(work, 'notes.txt'), 'The first line is 7171.\nThe second line is 8282.\n');
});

afterAll(async () => {
  await gw?.close();
  for (const dir of [home, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

interface ClaudeResult {
  subtype: string;
  is_error: boolean;
  num_turns: number;
  result: string;
}

/** `claude -p <prompt> <args> --output-format json` in the work folder, offline; its JSON result. */
async function claude(prompt: string, extra: readonly string[]): Promise<ClaudeResult> {
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    ANTHROPIC_BASE_URL: gw.baseUrl.replace(/\/v1$/, ''),
    ANTHROPIC_API_KEY: gw.apiKey,
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
  const args = ['-p', prompt, ...extra, '--output-format', 'json'];
  const { stdout, stderr, failure } = await run(CLAUDE, args, { cwd: work, env, timeout: 90_000 }).then(
    (out) => ({ ...out, failure: '' }),
    (err: { stdout?: string; stderr?: string; code?: number | string; signal?: string; message?: string }) => ({
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
      failure: `exit ${err.code ?? '?'}${err.signal ? ` (${err.signal})` : ''}: ${err.message ?? ''}`,
    }),
  );
  try {
    return JSON.parse(stdout) as ClaudeResult;
  } catch {
    throw new Error(
      `claude -p ${extra.join(' ')} printed no JSON result${failure ? ` (${failure.trim()})` : ''}\nstdout: ${stdout || '(empty)'}\nstderr: ${stderr || '(empty)'}`,
    );
  }
}

describe('Claude Code against modelmux', () => {
  for (const model of ['claude-sonnet-4-5', 'gpt-4o']) {
    it(`${model}: claude -p reads a file with its Read tool and reports it`, { timeout: 120_000 }, async () => {
      const before = gw.simulator?.requests.length ?? 0;
      const out = await claude('Read the file Paris and tell me the secret number.', ['--model', model, '--tools', 'Read', '--allowedTools', 'Read']);
      expect(out, JSON.stringify(out)).toMatchObject({ subtype: 'success', is_error: false });
      expect(out.num_turns).toBeGreaterThanOrEqual(2);
      expect(out.result).toContain('4242');
      const upstream = (gw.simulator?.requests ?? []).slice(before);
      expect(upstream.length).toBeGreaterThanOrEqual(2);
      // The second request carried the tool's result back: a real tool round trip through modelmux.
      expect(JSON.stringify(upstream.at(-1)?.body)).toContain('4242');
      if (model.startsWith('claude')) expect(upstream.every((r) => r.headers['anthropic-beta']?.includes('claude-code-'))).toBe(true);
      else expect(upstream.every((r) => r.provider === 'openai')).toBe(true);
      const last = gw.simulator?.requests.at(-1);
      expect(last?.completed).toBe(true);
    });
  }

  it('--session-id: every request of the session carries it, and its ledger entries record it', { timeout: 120_000 }, async () => {
    const session = randomUUID();
    const before = gw.simulator?.requests.length ?? 0;
    const out = await claude('Read the file Paris and tell me the secret number.', [
      '--model',
      'claude-sonnet-4-5',
      '--tools',
      'Read',
      '--allowedTools',
      'Read',
      '--session-id',
      session,
    ]);
    expect(out, JSON.stringify(out)).toMatchObject({ subtype: 'success', is_error: false });
    // A Claude target gets Claude Code's body as sent: its metadata.user_id names the session.
    const upstream = (gw.simulator?.requests ?? []).slice(before);
    expect(upstream.length).toBeGreaterThanOrEqual(2);
    for (const r of upstream) expect(JSON.stringify((r.body as { metadata?: unknown }).metadata)).toContain(session);
    await vi.waitFor(
      async () => {
        const mine = (await ledgerEntries(gw.accountId)).filter((e) => e.status !== 'held' && e.sessionId === session);
        expect(mine.length).toBe(upstream.length);
        for (const e of mine) expect(e.user).toMatch(/^[0-9a-f-]{16,64}$/);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it('with its default model and default tools: one Read round trip, then an answer with the first line', { timeout: 120_000 }, async () => {
    const before = gw.simulator?.requests.length ?? 0;
    const started = Date.now();
    const out = await claude(`Read the file ${join(work, 'notes.txt')} and answer with its first line.`, []);
    const seconds = (Date.now() - started) / 1000;
    expect(out, JSON.stringify(out)).toMatchObject({ subtype: 'success', is_error: false });
    expect(out.result).toContain('The first line is 7171.');
    expect(seconds).toBeLessThan(30);
    const upstream = (gw.simulator?.requests ?? []).slice(before).filter((r) => JSON.stringify(r.body).includes('notes.txt'));
    // The agent declares its whole tool set (Agent first); the model calls Read once and then answers.
    const calls = upstream.filter((r) => JSON.stringify(r.body).includes('"tool_result"'));
    expect(calls.length, `${upstream.length} upstream requests`).toBe(1);
    expect(JSON.stringify(upstream[0]?.body)).toContain('"name":"Agent"');
  });
});

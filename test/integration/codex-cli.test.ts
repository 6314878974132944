import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { ledgerEntries } from '../support/ledger';

/**
 * OpenAI's Codex CLI itself (npm `@openai/codex`, a devDependency: a native binary from its platform
 * package) against the local stack with README's "Codex CLI" configuration and nothing else: a custom
 * model provider with `wire_api = "responses"`, the gateway's base URL and key, hosted web search off
 * (modelmux has no native search routing yet: to-chat.ts), analytics and update checks off, a fresh
 * CODEX_HOME, loopback only. `codex exec` completes a task that needs a tool round trip: Codex declares
 * its tools (some in a `namespace`), the simulator's model calls the one the prompt names
 * (`exec_command`, with the prompt's command), Codex runs it and sends its output back, and the answer
 * quotes the file's first line. About 3 s per model.
 */

const run = promisify(execFile);
const CODEX = join(__dirname, '..', '..', 'node_modules', '.bin', 'codex');
const PROMPT = 'Use the exec_command tool to run `head -n 1 notes.txt`, then answer with its first line.';

let gw: RunningGateway;
let home: string;
let work: string;

/** README's `~/.codex/config.toml` for modelmux, with this gateway's base URL. */
const configToml = (baseUrl: string): string =>
  [
    'model = "gpt-4o"',
    'model_provider = "modelmux"',
    'web_search = "disabled"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.modelmux]',
    'name = "modelmux"',
    `base_url = "${baseUrl}"`,
    'env_key = "MODELMUX_API_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n');

beforeAll(async () => {
  if (!existsSync(CODEX)) throw new Error('Codex CLI is not installed (node_modules/@openai/codex is missing): run `npm ci`');
  gw = await startGateway({ tablePrefix: `codex-cli-${process.pid}`, devFreeTokens: 5_000_000 });
  home = mkdtempSync(join(tmpdir(), 'modelmux-codex-home-'));
  work = mkdtempSync(join(tmpdir(), 'modelmux-codex-work-'));
  writeFileSync(join(work, 'notes.txt'), 'The first line is 9393.\nThe second line is 1010.\n');
  writeFileSync(join(home, 'config.toml'), configToml(gw.baseUrl));
});

afterAll(async () => {
  await gw?.close();
  for (const dir of [home, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `codex exec [extra] PROMPT` in the work folder, stdin closed; its last message (stdout) and log (stderr). */
async function codexExec(extra: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: home, CODEX_HOME: home, MODELMUX_API_KEY: gw.apiKey };
  const pending = run(CODEX, ['exec', '--skip-git-repo-check', ...extra, PROMPT], { cwd: work, env, timeout: 60_000 });
  pending.child.stdin?.end();
  return pending.catch((err: { stdout?: string; stderr?: string; message?: string }) => {
    throw new Error(`codex exec ${extra.join(' ')} failed: ${err.message ?? ''}\nstdout: ${err.stdout ?? ''}\nstderr: ${err.stderr ?? ''}`);
  });
}

interface SimBody {
  tools?: Array<{ function?: { name?: string }; name?: string }>;
  messages?: Array<{ role: string; content?: unknown }>;
  contents?: unknown[];
}

describe('Codex CLI against modelmux', () => {
  for (const [model, extra, provider] of [
    ['gpt-4o', [], 'openai'],
    ['claude-sonnet-4-6', ['-m', 'claude-sonnet-4-6'], 'anthropic'],
    ['gemini-2.5-flash', ['-m', 'gemini-2.5-flash'], 'gemini'],
  ] as const) {
    it(`${model}: codex exec runs one tool round trip over /v1/responses and answers with the file's first line`, { timeout: 90_000 }, async () => {
      const before = gw.simulator?.requests.length ?? 0;
      const startedAt = Date.now();
      const { stdout } = await codexExec(extra);
      expect(stdout).toContain('The first line is 9393.');
      const upstream = (gw.simulator?.requests ?? []).slice(before).filter((r) => JSON.stringify(r.body).includes('notes.txt'));
      expect(upstream.length).toBe(2);
      const first = JSON.stringify(upstream[0]?.body as SimBody);
      // Codex's namespaced tools reach the model flattened; the second request carried the command's output.
      expect(first).toMatch(/multi_agent_v1__\w+/);
      expect(JSON.stringify(upstream[1]?.body)).toContain('The first line is 9393.');
      expect(upstream.every((r) => r.completed && r.provider === provider)).toBe(true);
      // Codex names its thread in a `session-id` header: both requests' entries record the same one.
      const entries = await vi.waitFor(
        async () => {
          const mine = (await ledgerEntries(gw.accountId)).filter((e) => e.status !== 'held' && e.endedAt !== undefined && Number(e.endedAt) >= startedAt);
          expect(mine).toHaveLength(2);
          return mine;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(entries[0]?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(entries[1]?.sessionId).toBe(entries[0]?.sessionId);
    });
  }
});

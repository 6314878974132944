import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * Google's Gemini CLI itself (npm `@google/gemini-cli` 0.61.0, a devDependency) against the local stack
 * with README's "Gemini CLI" configuration and nothing else: `~/.gemini/settings.json` selecting the
 * `gemini-api-key` auth type (0.61.0 exits 41 "Invalid auth method selected." without it), telemetry and
 * usage statistics off, `GOOGLE_GEMINI_BASE_URL` (the gateway's origin: the CLI adds `/v1beta`),
 * `GEMINI_API_KEY` (sent as `x-goog-api-key`), a trusted workspace, a fresh HOME, loopback only.
 * `gemini -p` headless: say hi; read a file with its `read_file` tool and answer with its first line
 * (the simulator's model calls the tool the prompt names with the prompt's path, then answers quoting
 * the result); `--output-format json`; and say hi on a Claude model through the Gemini protocol.
 * 7 to 15 s per run.
 */

const run = promisify(execFile);
const GEMINI = join(__dirname, '..', '..', 'node_modules', '.bin', 'gemini');

let gw: RunningGateway;
let home: string;
let work: string;

/** README's `~/.gemini/settings.json` for modelmux. */
const SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  telemetry: { enabled: false },
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

beforeAll(async () => {
  if (!existsSync(GEMINI)) throw new Error('Gemini CLI is not installed (node_modules/@google/gemini-cli is missing): run `npm ci`');
  gw = await startGateway({ tablePrefix: `gemini-cli-${process.pid}`, devFreeTokens: 5_000_000 });
  home = mkdtempSync(join(tmpdir(), 'modelmux-gemini-home-'));
  work = mkdtempSync(join(tmpdir(), 'modelmux-gemini-work-'));
  writeFileSync(join(work, 'notes.txt'), 'The first line is 5151.\nThe second line is 6262.\n');
  mkdirSync(join(home, '.gemini'));
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(SETTINGS));
});

afterAll(async () => {
  await gw?.close();
  for (const dir of [home, work]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `gemini -p PROMPT -m MODEL [extra]` in the work folder, stdin closed; what it printed. */
async function gemini(prompt: string, model: string, extra: readonly string[] = []): Promise<{ stdout: string; stderr: string }> {
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    GOOGLE_GEMINI_BASE_URL: gw.baseUrl.replace(/\/v1$/, ''),
    GEMINI_API_KEY: gw.apiKey,
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    GEMINI_TELEMETRY_ENABLED: 'false',
    NO_BROWSER: 'true',
  };
  const pending = run(GEMINI, ['-p', prompt, '-m', model, ...extra], { cwd: work, env, timeout: 90_000 });
  pending.child.stdin?.end();
  return pending.catch((err: { stdout?: string; stderr?: string; code?: number | string; message?: string }) => {
    throw new Error(
      `gemini -p -m ${model} ${extra.join(' ')} failed (exit ${err.code ?? '?'}): ${err.message ?? ''}\nstdout: ${err.stdout ?? ''}\nstderr: ${err.stderr ?? ''}`,
    );
  });
}

/** The simulator's requests since `before`. */
const upstreamSince = (before: number) => (gw.simulator?.requests ?? []).slice(before);

/** The public models Gemini CLI is run on, one per provider family, and the upstream each must reach. */
const MODELS = [
  ['gemini-2.5-flash', 'gemini'],
  ['claude-sonnet-4-6', 'anthropic'],
  ['gpt-4o', 'openai'],
  ['deepseek-v3', 'deepseek'],
] as const;

describe('Gemini CLI against modelmux', () => {
  for (const [model, provider] of MODELS) {
    it(`${model}: gemini -p "say hi" exits 0 with the model's text, no tool called`, { timeout: 120_000 }, async () => {
      const before = gw.simulator?.requests.length ?? 0;
      const { stdout } = await gemini('say hi', model);
      expect(stdout).toContain('Echo:');
      // One agent turn: Gemini CLI's <session_context> (its workspace tree) is no ask for a tool.
      const upstream = upstreamSince(before).filter((r) => JSON.stringify(r.body).includes('say hi'));
      expect(upstream.length).toBe(1);
      expect(upstream.every((r) => r.completed && r.provider === provider)).toBe(true);
    });
  }

  for (const [model, provider] of MODELS) {
    it(`${model}: reads a file with read_file and answers with its first line`, { timeout: 120_000 }, async () => {
      const before = gw.simulator?.requests.length ?? 0;
      const { stdout } = await gemini(`Use the read_file tool to read ${join(work, 'notes.txt')}, then answer with its first line.`, model);
      expect(stdout).toContain('The first line is 5151.');
      const upstream = upstreamSince(before).filter((r) => JSON.stringify(r.body).includes('notes.txt'));
      // Two agent turns: the call, then the answer after the file's text came back (a Gemini
      // functionResponse, translated into the target's own tool result).
      expect(upstream.length).toBe(2);
      expect(upstream.every((r) => r.provider === provider)).toBe(true);
      expect(JSON.stringify(upstream[1]?.body)).toContain('The first line is 5151.');
      if (provider === 'gemini') expect(JSON.stringify(upstream[1]?.body)).toContain('functionResponse');
    });
  }

  it('gemini-2.5-flash: --output-format json prints a JSON result with the answer and the usage', { timeout: 120_000 }, async () => {
    const { stdout } = await gemini(`Use the read_file tool to read ${join(work, 'notes.txt')}, then answer with its first line.`, 'gemini-2.5-flash', [
      '--output-format',
      'json',
    ]);
    const out = JSON.parse(stdout) as { response?: string; stats?: { models?: Record<string, { tokens?: { prompt?: number } }> } };
    expect(out.response).toContain('The first line is 5151.');
    expect(out.stats?.models?.['gemini-2.5-flash']?.tokens?.prompt).toBeGreaterThan(0);
  });
});

import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * ARCHITECTURE.md § "Adding a provider", proved: in a scratch copy of the repository's tracked files
 * (node_modules linked), an OpenAI-compatible `mistral` with one model is added by exactly three edits
 * — its manifest entry, its registry line, its catalogue entry — and nothing else; the copy type-checks
 * and the local gateway (what `npm start` runs) serves a chat completion for that model from the
 * simulator. Slow tier: the copy and `tsc` take a minute or more on a 2-core machine.
 */

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
let scratch: string;

/** Replaces the one occurrence of `anchor` in `file` (under the scratch copy) with `replacement`. */
function edit(file: string, anchor: string, replacement: string): void {
  const path = join(scratch, file);
  const text = readFileSync(path, 'utf8');
  expect(text.split(anchor), `${file}: the anchor occurs once`).toHaveLength(2);
  writeFileSync(path, text.replace(anchor, replacement));
}

/** The three edits, as the section in ARCHITECTURE.md shows them (then `npm run prices`). */
const EDITS: Array<[file: string, anchor: string, replacement: string]> = [
  ['functions/shared/providers/manifest.ts', "  entry('deepinfra', ", "  entry('mistral', 'https://api.mistral.ai/v1'),\n  entry('deepinfra', "],
  ['functions/shared/providers/registry.ts', '  deepinfra: ', '  mistral: createOpenAICompatibleAdapter(),\n  deepinfra: '],
  [
    'functions/shared/catalogue/models.ts',
    '  // ── Embeddings ──',
    [
      '  {',
      "    id: 'mistral-small', kind: 'chat', ownedBy: 'mistralai', created: 1742169600,",
      "    description: 'Mistral Small.',",
      "    targets: [target({ provider: 'mistral', upstreamModel: 'mistral-small-latest', contextWindow: 128_000, maxOutputTokens: 32_000, capabilities: TEXT })],",
      "    equivalents: ['gpt-4o-mini'],",
      '  },',
      '  // ── Embeddings ──',
    ].join('\n'),
  ],
];

/** Runs in the scratch copy: the gateway with the simulator standing in for every provider, one chat completion. */
const CHECK = `
import { startGateway } from './local/gateway';
const gw = await startGateway({ tablePrefix: 'add-provider-' + process.pid, siteDir: false });
try {
  const res = await fetch(gw.baseUrl + '/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + gw.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mistral-small', messages: [{ role: 'user', content: 'Say hello.' }] }),
  });
  const body = await res.json();
  const upstream = gw.simulator?.requests.map((r) => ({ provider: r.provider, path: r.path, model: r.model }));
  process.stdout.write(JSON.stringify({ status: res.status, body, providers: gw.providers, upstream }) + '\\n');
} finally {
  await gw.close();
}
process.exit(0);
`;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'modelmux-add-provider-'));
  const { stdout } = await run('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)))) {
    mkdirSync(dirname(join(scratch, file)), { recursive: true });
    cpSync(join(ROOT, file), join(scratch, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  for (const [file, anchor, replacement] of EDITS) edit(file, anchor, replacement);
  // …and `npm run prices`, which reads the new target's price from the maintained dataset.
  await run(join(scratch, 'node_modules/.bin/tsx'), ['bin/price-data.ts'], { cwd: scratch, maxBuffer: 16 * 1024 * 1024 });
  writeFileSync(join(scratch, 'add-provider-check.ts'), CHECK);
}, 300_000);

afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

describe('adding an OpenAI-compatible provider: manifest entry, registry line, catalogue entry, nothing else', () => {
  it('type-checks', async () => {
    await expect(
      run(join(scratch, 'node_modules/.bin/tsc'), ['--noEmit', '-p', 'tsconfig.json'], { cwd: scratch, maxBuffer: 16 * 1024 * 1024 }),
    ).resolves.toBeDefined();
  }, 600_000);

  it('is served by the local gateway from the simulator, under its own name and base path', async () => {
    const { stdout } = await run(join(scratch, 'node_modules/.bin/tsx'), ['add-provider-check.ts'], {
      cwd: scratch,
      env: process.env,
      maxBuffer: 16 * 1024 * 1024,
    });
    const out = JSON.parse(stdout.trim().split('\n').pop() as string) as {
      status: number;
      body: { model: string; choices: Array<{ message: { content: string } }> };
      providers: Record<string, string>;
      upstream: Array<{ provider: string; path: string; model: string }>;
    };
    expect(out.status).toBe(200);
    expect(out.body.model).toBe('mistral-small');
    expect(out.body.choices[0]?.message.content.length).toBeGreaterThan(0);
    expect(out.providers.MISTRAL).toBe('simulated');
    expect(out.upstream).toEqual([{ provider: 'mistral', path: '/mistral/v1/chat/completions', model: 'mistral-small-latest' }]);
  }, 300_000);
});

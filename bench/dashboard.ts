/**
 * `npm run bench:dashboard`: the dashboard's page weight and how fast the overview renders locally.
 *
 * - Weight: the production build (web/build.ts, minified): JavaScript and CSS bytes, raw and
 *   compressed (gzip -9 and brotli 11, what CloudFront's compression approximates).
 * - First render: the gateway as `npm start` runs it (real handlers, DynamoDB Local, the Cognito
 *   emulator) and Debian's Chromium. A signed-in user (session in sessionStorage) opens `/#/`, `runs`
 *   times, with the HTTP cache off ("cold": every file fetched) and on ("warm"). Reported: first
 *   contentful paint (the boot "Loading…") and the overview rendered with the user's balance, i.e.
 *   boot → /config.json → Cognito token refresh → GET /v1/account → render, in ms from navigation start
 *   (median and p90). Also the signed-out sign-in form.
 *
 * `--screenshots <dir>` also writes the pages at 1280 px (light and dark) and 375 px, with a little
 * usage on them (the README's picture comes from here). Never a test: timings depend on the machine.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { writeDashboardSection } from './dashboard-section';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, screenshots: { type: 'string' } } });
const RUNS = Number(values.runs);

const { buildWebSync } = await import('../web/build');
const { startGateway } = await import('../local/gateway');
const { launchChromium } = await import('../test/web/support/chromium');
const { signUpThroughPage, testEmail, openPage, PAGES } = await import('../test/web/support/dashboard');

const work = mkdtempSync(join(tmpdir(), 'modelmux-dashboard-bench-'));
const built = buildWebSync(join(work, 'dist'));
const js = readFileSync(join(built.outDir, built.js));
const css = readFileSync(join(built.outDir, built.css));
const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`;
const gz = (b: Buffer): number => gzipSync(b, { level: 9 }).length;
const br = (b: Buffer): number => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

const gw = await startGateway({ tablePrefix: 'dashbench', cognito: {}, siteDir: built.outDir, devFreeTokens: 1_000_000 });
const browser = await launchChromium();
try {
  const page = await browser.context.newPage();
  const email = testEmail('bench');
  const accountId = await signUpThroughPage(page, gw, email);
  await seedUsage(page, accountId);

  /**
   * ms from navigation start to FCP, to the marker selector appearing (recorded in the page), and to
   * the end of the app script, /config.json and GET /v1/account (resource timing).
   */
  const measure = async (p: Page, hash: string, marker: string): Promise<Record<'fcp' | 'ready' | 'script' | 'config' | 'account', number>> => {
    await p.goto(`${gw.origin}/${hash}`);
    await p.waitForSelector(marker);
    // No named helper inside: tsx would wrap it in a __name() call the page does not have.
    return p.evaluate(() => {
      const w = window as unknown as { __ready?: number };
      const out = { fcp: Number.NaN, ready: w.__ready ?? Number.NaN, script: Number.NaN, config: Number.NaN, account: Number.NaN };
      out.fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN;
      for (const e of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
        if (/\/app-[A-Z0-9]+\.js$/.test(e.name)) out.script = e.responseEnd;
        else if (e.name.endsWith('/config.json')) out.config = e.responseEnd;
        else if (e.name.endsWith('/v1/account')) out.account = e.responseEnd;
      }
      return out;
    });
  };
  const stats = (xs: number[]): string => {
    const s = [...xs].sort((a, b) => a - b);
    const q = (f: number): number => s[Math.min(s.length - 1, Math.floor(f * s.length))] ?? Number.NaN;
    return `median ${q(0.5).toFixed(0)} ms, p90 ${q(0.9).toFixed(0)} ms`;
  };
  // The marker is recorded by a MutationObserver installed before the page's own scripts run.
  const observe = (selector: string): string => `
    new MutationObserver((_, obs) => {
      if (document.querySelector(${JSON.stringify(selector)})) { window.__ready = performance.now(); obs.disconnect(); }
    }).observe(document, { childList: true, subtree: true });`;

  const results: string[] = [];
  for (const [label, signedIn, hash, marker] of [
    ['overview (signed in)', true, PAGES.overview, '.stat-value'],
    ['sign-in form (signed out)', false, PAGES['sign-in'], '#email'],
  ] as const) {
    for (const cache of ['cold', 'warm'] as const) {
      const fcp: number[] = [];
      const ready: number[] = [];
      const parts: Record<'script' | 'config' | 'account', number[]> = { script: [], config: [], account: [] };
      for (let i = 0; i < RUNS; i++) {
        const p = await browser.context.newPage();
        await p.addInitScript(observe(marker));
        const cdp = await browser.context.newCDPSession(p);
        await cdp.send('Network.setCacheDisabled', { cacheDisabled: cache === 'cold' });
        // The session of the signed-in user, copied into this tab (sessionStorage is per tab).
        const session = signedIn ? await page.evaluate(() => sessionStorage.getItem('modelmux.session')) : null;
        await p.goto(`${gw.origin}/favicon.svg`);
        await p.evaluate((s) => (s === null ? sessionStorage.clear() : sessionStorage.setItem('modelmux.session', s)), session);
        if (cache === 'warm') await p.goto(`${gw.origin}/${hash}`).then(() => p.waitForSelector(marker));
        const m = await measure(p, hash, marker);
        fcp.push(m.fcp);
        ready.push(m.ready);
        for (const k of ['script', 'config', 'account'] as const) if (Number.isFinite(m[k])) parts[k].push(m[k]);
        await p.close();
      }
      const median = (xs: number[]): string => (xs.length === 0 ? '—' : `${[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]?.toFixed(0)} ms`);
      results.push(`| ${label} | ${cache} | ${stats(fcp)} | ${stats(ready)} | ${median(parts.script)} / ${median(parts.config)} / ${median(parts.account)} |`);
    }
  }

  const section = [
      '',
      `## Dashboard (npm run bench:dashboard, ${RUNS} runs each, headless Chromium on loopback; ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end)`,
      '',
      '| file | minified | gzip -9 | brotli 11 |',
      '|---|---|---|---|',
      `| ${built.js} (all of the app's JavaScript) | ${kb(js.length)} | ${kb(gz(js))} | ${kb(br(js))} |`,
      `| ${built.css} | ${kb(css.length)} | ${kb(gz(css))} | ${kb(br(css))} |`,
      '',
      '| page | HTTP cache | first contentful paint | rendered with data | done (median): script / config.json / GET /v1/account |',
      '|---|---|---|---|---|',
      ...results,
      '',
      'Rendered with data = navigation start → the overview shows the balance (config, Cognito token refresh, GET /v1/account) or the sign-in form is there.',
      '',
    ].join('\n');
  process.stdout.write(section);
  writeDashboardSection(join(import.meta.dirname, '..', 'BENCHMARKS.md'), section);

  if (values.screenshots) await screenshots(page, values.screenshots);
} finally {
  await browser.close();
  await gw.close();
  rmSync(work, { recursive: true, force: true });
}

/** A few keys and requests on several models, paid from credit, so the pages show real figures. */
async function seedUsage(page: Page, accountId: string): Promise<void> {
  const { addCredit } = await import('../functions/shared/accounts/account-store');
  const { documentClient } = await import('../functions/shared/store/dynamo');
  const { tableNames } = await import('../functions/shared/store/tables');
  await openPage(page, gw, 'keys', 'API keys');
  const made: string[] = [];
  for (const [name, limit] of [['production server', '25'], ['laptop', ''], ['ci pipeline', '5']] as const) {
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Spend limit, USD (optional)').fill(limit);
    if (limit) await page.getByLabel('Limit resets').selectOption(name === 'ci pipeline' ? 'daily' : 'monthly');
    await page.getByRole('button', { name: 'Create key' }).click();
    made.push(await page.getByLabel('New API key').inputValue());
    await page.getByRole('button', { name: 'I have copied it' }).click();
  }
  await documentClient().send(new UpdateCommand({ TableName: tableNames().accounts, Key: { accountId }, UpdateExpression: 'SET freeTokens = :n', ExpressionAttributeValues: { ':n': 0 } }));
  await addCredit(accountId, 20_000_000_000);
  const plan: Array<[number, string, number]> = [[0, 'claude-3-5-sonnet', 6], [0, 'gpt-4o', 4], [1, 'gpt-4o-mini', 8], [1, 'deepseek-v3', 5], [2, 'gemini-2.0-flash', 6]];
  for (const [k, model, n] of plan) {
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: made[k], maxRetries: 0 });
    for (let i = 0; i < n; i++) await client.chat.completions.create({ model, messages: [{ role: 'user', content: `Summarise request ${i} in a few words, please.` }], max_tokens: 200 });
  }
}

async function screenshots(page: Page, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const [scheme, width] of [['light', 1280], ['dark', 1280], ['light', 375]] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: width === 375 ? 800 : 760 });
    for (const [route, heading] of [['overview', 'Overview'], ['keys', 'API keys'], ['usage', 'Usage'], ['byok', 'Your provider keys']] as const) {
      await openPage(page, gw, route, heading);
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(dir, `${route}-${scheme}-${width}.png`), fullPage: width === 375 });
    }
  }
  // The signed-out pages, in a fresh tab (sessionStorage is per tab).
  const out = await page.context().newPage();
  for (const [scheme, width] of [['light', 1280], ['dark', 375]] as const) {
    await out.emulateMedia({ colorScheme: scheme });
    await out.setViewportSize({ width, height: 800 });
    for (const route of ['sign-in', 'sign-up'] as const) {
      await out.goto(`${gw.origin}/${PAGES[route]}`);
      await out.waitForSelector('h1');
      await out.screenshot({ path: join(dir, `${route}-${scheme}-${width}.png`) });
    }
  }
  await out.close();
  process.stdout.write(`screenshots in ${dir}\n`);
}

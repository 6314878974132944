import { mkdirSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import type { RunningGateway } from '../../../local/gateway';

/**
 * What the dashboard's browser tests share: signing up through the page (with the code the Cognito
 * emulator "mails"), screenshots of every page at desktop and phone width, and axe-core.
 */

/** A password the pool accepts (12+ characters, upper, lower, digit, symbol: lib/constructs/identity-settings.ts). */
export const TEST_PASSWORD = 'Correct-Horse-42!';

/** The dashboard's pages, as hash routes. */
export const PAGES = {
  'sign-in': '#/sign-in',
  'sign-up': '#/sign-up',
  confirm: '#/confirm',
  'forgot-password': '#/forgot-password',
  overview: '#/',
  keys: '#/keys',
  usage: '#/usage',
  byok: '#/byok',
} as const;

/** Widths every page is checked at: a desktop and a small phone. */
export const WIDTHS = [1280, 375] as const;

/** A unique address per run and purpose. */
export function testEmail(tag: string): string {
  return `${tag}-${process.pid}-${Date.now()}@example.com`;
}

/** The page's main heading, once it is there. */
export async function expectHeading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor({ state: 'visible' });
}

/**
 * Signs up through the page: sign-up form → the emailed code (read from the emulator) → confirm →
 * the overview. Returns the account id (the Cognito `sub`, as `GET /v1/account` reports it).
 */
export async function signUpThroughPage(page: Page, gw: RunningGateway, email: string, password = TEST_PASSWORD): Promise<string> {
  if (gw.cognito === undefined) throw new Error('the gateway runs without the Cognito emulator');
  await page.goto(`${gw.origin}/${PAGES['sign-up']}`);
  await expectHeading(page, 'Create your account');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expectHeading(page, 'Confirm your email');
  const code = await gw.cognito.confirmationCode(email, 10_000);
  await page.getByLabel('Confirmation code').fill(code);
  const account = page.waitForResponse((r) => r.url().endsWith('/v1/account') && r.request().method() === 'GET');
  await page.getByRole('button', { name: 'Confirm' }).click();
  await expectHeading(page, 'Overview');
  const body = (await (await account).json()) as { data: { id: string } };
  return body.data.id;
}

/** Opens a page by its hash route and waits until it has finished loading (no "Loading…" left). */
export async function openPage(page: Page, gw: RunningGateway, route: keyof typeof PAGES, heading: string | RegExp): Promise<void> {
  await page.goto(`${gw.origin}/${PAGES[route]}`);
  await expectHeading(page, heading);
  await page.locator('.loading').first().waitFor({ state: 'detached' });
}

/** The value shown for a statistic of the overview (`<dt>` label → its first `<dd>`). */
export function stat(page: Page, label: string) {
  return page
    .locator('.stat')
    .filter({ has: page.locator('dt', { hasText: label }) })
    .locator('.stat-value');
}

/**
 * Screenshots of every page at both widths, in `dir` (git-ignored test-results/): for the failure
 * report of a browser test. Best effort: a page that cannot be shown is skipped.
 */
export async function screenshotEveryPage(page: Page, origin: string, dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const shot = async (name: string): Promise<void> => {
    const file = join(dir, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true }).then(
      () => written.push(file),
      () => undefined,
    );
  };
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 }).catch(() => undefined);
    await shot(`at-failure-${width}`);
    for (const [route, hash] of Object.entries(PAGES)) {
      await page.goto(`${origin}/${hash}`, { timeout: 5_000 }).catch(() => undefined);
      await page.waitForTimeout(400);
      await shot(`${route}-${width}`);
    }
  }
  return written;
}

/** Where the screenshots of a failed browser test go (git-ignored). */
export function failureDir(test: string): string {
  return join(process.cwd(), 'test-results', 'web', `${test}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core finding. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/**
 * Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules and best practices) on the page as it is now and
 * returns the serious and critical violations. axe is evaluated through the DevTools protocol, which
 * the page's CSP does not govern, so the page is checked under its real CSP.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined');
  if (!loaded) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Fails with a readable list when the page has serious or critical accessibility violations. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  const found = await seriousViolations(page);
  const report = found
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')} — ${n.failureSummary ?? ''}`).join('\n')}`)
    .join('\n');
  expect(found, `${where}:\n${report}`).toEqual([]);
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { buildWebSync } from '../../web/build';
import { signUpAndSignIn } from '../support/cognito-user';
import { launchChromium, type Chromium } from './support/chromium';
import {
  expectAccessible,
  expectHeading,
  seriousViolations,
  failureDir,
  openPage,
  PAGES,
  screenshotEveryPage,
  signUpThroughPage,
  testEmail,
  WIDTHS,
} from './support/dashboard';

/**
 * axe-core on every page of the dashboard and on its dialogs and states (empty, filled, the new key,
 * errors), in the light and the dark scheme (prefers-color-scheme), at 1280 and 375 px: no serious or
 * critical violation (which includes WCAG AA colour contrast). Against the real gateway and Cognito
 * emulator, under the page's real CSP.
 */

let gw: RunningGateway;
let browser: Chromium;
let siteDir: string;

beforeAll(async () => {
  siteDir = mkdtempSync(join(tmpdir(), 'dashboard-a11y-'));
  buildWebSync(join(siteDir, 'dist'));
  gw = await startGateway({ tablePrefix: `a11y-${process.pid}`, cognito: {}, siteDir: join(siteDir, 'dist') });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

/** axe in both colour schemes at both widths, for the page as it is now. */
async function checkEverywhere(page: Page, where: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await expectAccessible(page, `${where} (${colorScheme}, ${width} px)`);
      // Works at this width: nothing wider than the screen (no sideways scrolling of the page).
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${where} at ${width} px`).toBeLessThanOrEqual(width);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function newPage(onTestFailed: (fn: () => Promise<void>) => void, name: string): Promise<Page> {
  const page = await browser.context.newPage();
  onTestFailed(async () => {
    const files = await screenshotEveryPage(page, gw.origin, failureDir(name));
    console.error(`${name} failed; screenshots:\n${files.join('\n')}`);
  });
  return page;
}

describe('dashboard accessibility (axe-core)', () => {
  it('the checker itself reports serious violations on a page that has them', async () => {
    const page = await browser.context.newPage();
    await page.setContent(
      '<html lang="en"><body><main><p style="color:#ccc;background:#fff">faint text</p><img src="data:,"><button></button></main></body></html>',
    );
    const ids = (await seriousViolations(page)).map((v) => v.id).sort();
    expect(ids).toEqual(expect.arrayContaining(['button-name', 'color-contrast', 'image-alt']));
    await page.close();
  });

  it('signed-out pages: sign in, sign up, confirm, forgotten password (both steps), with an error shown', async ({ onTestFailed }) => {
    const page = await newPage(onTestFailed, 'a11y-signed-out');
    await page.goto(`${gw.origin}/${PAGES['sign-in']}`);
    await expectHeading(page, 'Sign in');
    await checkEverywhere(page, 'sign-in');
    await page.getByLabel('Email').fill(testEmail('nobody'));
    await page.getByLabel('Password', { exact: true }).fill('Wrong-password-1!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await checkEverywhere(page, 'sign-in with an error');

    await page.goto(`${gw.origin}/${PAGES['sign-up']}`);
    await expectHeading(page, 'Create your account');
    await checkEverywhere(page, 'sign-up');
    await page.goto(`${gw.origin}/${PAGES.confirm}`);
    await expectHeading(page, 'Confirm your email');
    await checkEverywhere(page, 'confirm');
    await page.goto(`${gw.origin}/${PAGES['forgot-password']}`);
    await expectHeading(page, 'Reset your password');
    await checkEverywhere(page, 'forgot-password');
    const user = await signUpAndSignIn(gw);
    await page.getByLabel('Email').fill(user.email);
    await page.getByRole('button', { name: 'Send the code' }).click();
    await page.getByLabel('Code from the email').waitFor();
    await checkEverywhere(page, 'forgot-password, code and new password');
    await page.close();
  }, 120_000);

  it('signed-in pages: overview, keys (empty, new key, list, edit and delete dialogs), usage with a chart, provider keys', async ({ onTestFailed }) => {
    const page = await newPage(onTestFailed, 'a11y-signed-in');
    await signUpThroughPage(page, gw, testEmail('a11y'));
    await openPage(page, gw, 'overview', 'Overview');
    await checkEverywhere(page, 'overview');
    // Keyboard: the heading has focus on arrival; the first stop of the page is "Skip to content",
    // which returns there; the snippet tabs follow the arrow keys (WAI-ARIA tabs).
    const focused = () => page.evaluate(() => ({ id: document.activeElement?.id ?? '', text: document.activeElement?.textContent ?? '' }));
    expect((await focused()).id).toBe('page-title');
    await page.getByRole('link', { name: 'modelmux' }).focus();
    await page.keyboard.press('Shift+Tab');
    expect((await focused()).text).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect((await focused()).id).toBe('page-title');
    await page.getByRole('tab', { name: 'Python' }).focus();
    await page.keyboard.press('ArrowRight');
    expect((await focused()).text).toBe('Node.js');
    expect(await page.getByRole('tab', { name: 'Node.js' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.getByRole('tabpanel').textContent()).toContain("import OpenAI from 'openai';");

    await openPage(page, gw, 'keys', 'API keys');
    await page.getByText('No keys yet').waitFor();
    await checkEverywhere(page, 'keys, empty');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Give the key a name').waitFor();
    await checkEverywhere(page, 'keys, form error');
    await page.getByLabel('Name', { exact: true }).fill('a11y key');
    await page.getByLabel('Spend limit, USD (optional)').fill('2');
    await page.keyboard.press('Enter'); // submits the form from the keyboard
    await page.getByText('You will not see it again').waitFor();
    const key = await page.getByLabel('New API key').inputValue();
    await checkEverywhere(page, 'keys, new key shown once');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('row').filter({ hasText: 'a11y key' }).waitFor();
    await checkEverywhere(page, 'keys, list');
    await page.getByRole('button', { name: 'Edit a11y key' }).click();
    await page.getByRole('dialog', { name: 'Edit “a11y key”' }).waitFor();
    await checkEverywhere(page, 'keys, edit dialog');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete a11y key' }).click();
    await page.getByRole('dialog', { name: 'Delete the key “a11y key”?' }).waitFor();
    // Focus starts on Cancel, so Enter never deletes by accident.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await checkEverywhere(page, 'keys, delete dialog');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    // One request, so the usage page has a chart (tokens: the free grant pays it, so it costs $0), and
    // its prompt mostly read from the (simulated) provider's cache, so it has the prompt-caching table.
    await new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: '[cached] hi' }],
    });
    await openPage(page, gw, 'usage', 'Usage');
    await page
      .getByRole('rowheader', { name: /gpt-4o-mini/ })
      .first()
      .waitFor();
    await page.getByRole('table', { name: /Prompt caching by day and model/ }).waitFor();
    await page.getByText('Your requests so far were paid with free tokens.').waitFor();
    await page.getByRole('radio', { name: 'Tokens' }).check();
    await page.getByRole('img', { name: /Tokens per day by model/ }).waitFor();
    await checkEverywhere(page, 'usage with a chart');

    await openPage(page, gw, 'byok', 'Your provider keys');
    await checkEverywhere(page, 'provider keys, none attached');
    await page.getByLabel('Anthropic API key').fill('sk-ant-a11yTestKey000000000000000009876');
    await page.getByRole('button', { name: 'Attach Anthropic key' }).click();
    await page.getByText('your key ending in 9876 is attached').waitFor();
    await checkEverywhere(page, 'provider keys, one attached');
    await page.close();
  }, 180_000);
});

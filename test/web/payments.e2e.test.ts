import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { buildWebSync } from '../../web/build';
import { launchChromium, type Chromium } from './support/chromium';
import { expectHeading, failureDir, screenshotEveryPage, signUpThroughPage, stat, testEmail } from './support/dashboard';

/**
 * Paying, end to end in Debian's Chromium against the gateway as `npm start` runs it, with the local
 * Stripe stand-in: sign up → 200,000 free tokens, free tier → Add credit $10 → pay on the stand-in's
 * hosted checkout page → back on the dashboard → the signed webhook credits it → the overview shows
 * $10.00 and the paid plan, the purchases list the top-up with its receipt.
 */
let gw: RunningGateway;
let browser: Chromium;
let siteDir: string;

beforeAll(async () => {
  siteDir = mkdtempSync(join(tmpdir(), 'payments-e2e-'));
  buildWebSync(join(siteDir, 'dist'));
  gw = await startGateway({ tablePrefix: `paye2e-${process.pid}`, cognito: {}, siteDir: join(siteDir, 'dist'), stripe: {} });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

describe('buying credit in the dashboard', () => {
  it('sign up → Add credit $10 → pay on the checkout page → $10.00 and the paid plan', async ({ onTestFailed }) => {
    const page = await browser.context.newPage();
    onTestFailed(async () => {
      const files = await screenshotEveryPage(page, gw.origin, failureDir('payments-e2e'));
      console.error(`payments e2e failed; screenshots:\n${files.join('\n')}`);
    });
    await signUpThroughPage(page, gw, testEmail('pay'));
    await expect.poll(() => stat(page, 'Free tokens left').textContent()).toBe('200,000');
    await expect.poll(() => stat(page, 'Credit').textContent()).toBe('$0.00');
    await expect.poll(() => page.getByText('Free tier (no credit bought yet)').count()).toBe(1);

    await page.getByRole('link', { name: 'Add credit' }).click();
    await expectHeading(page, 'Credits');
    await expect.poll(() => page.getByText('$10 paid is $10 of credit').count()).toBe(1);
    // Under the minimum: refused on the page, nothing sent.
    await page.getByLabel('Amount (USD)').fill('4');
    await page.getByRole('button', { name: 'Add $4.00 of credit' }).click();
    await expect.poll(() => page.getByText('Enter an amount from $5').count()).toBe(1);

    await page.getByRole('button', { name: '$10', exact: true }).click();
    await page.getByRole('button', { name: 'Add $10.00 of credit' }).click();
    await expectHeading(page, 'Pay $10.00');
    expect(page.url()).toMatch(new RegExp(`^${gw.stripe!.standIn!.url}/pay/cs_test_`));
    await page.getByRole('button', { name: 'Pay $10.00 with a test card' }).click();
    await expectHeading(page, 'Credits');
    expect(page.url()).toBe(`${gw.origin}/#/credits`);

    await gw.stripe!.standIn!.webhooks.idle();
    await page.goto(`${gw.origin}/#/`);
    await expectHeading(page, 'Overview');
    await expect.poll(() => stat(page, 'Credit').textContent()).toBe('$10.00');
    await expect.poll(() => page.getByText('Paid', { exact: true }).count()).toBe(1);
    await expect.poll(() => stat(page, 'Free tokens left').textContent()).toBe('200,000');

    await page.goto(`${gw.origin}/#/credits`);
    await expectHeading(page, 'Credits');
    const row = page.getByRole('row').filter({ hasText: 'Top-up' });
    await expect.poll(() => row.count()).toBe(1);
    await expect.poll(() => row.getByRole('cell').nth(2).textContent()).toBe('$10.00');
    expect(await row.getByRole('link', { name: 'Receipt' }).getAttribute('href')).toMatch(/\/receipts\/ch_/);
    await page.close();
  });
});

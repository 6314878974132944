import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPayments } from '../../functions/shared/payments/payment-ledger';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { buildWebSync } from '../../web/build';
import { advanceClock, resetClock } from '../support/clock';
import { billingAtRest } from '../support/settle-queue';
import { launchChromium, type Chromium } from './support/chromium';
import { expectHeading, failureDir, screenshotEveryPage, signUpThroughPage, stat, testEmail } from './support/dashboard';

/**
 * Paying, end to end in Debian's Chromium against the gateway as `npm start` runs it, with the local
 * Stripe stand-in: sign up → 200,000 free tokens, free tier → Add credit $10 (saving the card) → pay on
 * the stand-in's hosted checkout page → back on the dashboard → the signed webhook credits it → the
 * overview shows $10.00 and the paid plan, the purchases list the top-up with its receipt → turn on
 * auto top-up and the low-balance email → 20 concurrent requests push credit under the threshold →
 * exactly one top-up arrives (one PaymentIntent at the stand-in, one ledger credit) and one email lands
 * in the SMTP catch-all (through the SES stand-in).
 */
let gw: RunningGateway;
let browser: Chromium;
let siteDir: string;

beforeAll(async () => {
  siteDir = mkdtempSync(join(tmpdir(), 'payments-e2e-'));
  buildWebSync(join(siteDir, 'dist'));
  // Settings reach a container's view of the account when it reads it again (after this TTL, on the
  // billing clock: the test moves it past).
  process.env.ACCOUNT_CACHE_TTL_MS = '300';
  gw = await startGateway({ tablePrefix: `paye2e-${process.pid}`, cognito: {}, siteDir: join(siteDir, 'dist'), stripe: {}, mail: {} });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  resetClock();
  await browser?.close();
  await gw?.close();
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

describe('buying credit in the dashboard', () => {
  it('sign up → Add credit $10 (saving the card) → pay → $10.00 and the paid plan → auto top-up on → 20 concurrent requests → one top-up and one email', async ({
    onTestFailed,
  }) => {
    const page = await browser.context.newPage();
    onTestFailed(async () => {
      const files = await screenshotEveryPage(page, gw.origin, failureDir('payments-e2e'));
      console.error(`payments e2e failed; screenshots:\n${files.join('\n')}`);
    });
    const email = testEmail('pay');
    const accountId = await signUpThroughPage(page, gw, email);
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
    await page.getByLabel('Save this card for auto top-up').check();
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

    // Auto top-up on the saved card, and the low-balance email, a hair under the balance.
    await page.getByLabel('Turn on auto top-up').check();
    await page.getByLabel('When credit falls under (USD)', { exact: true }).fill('9.999999');
    await page.getByLabel('Add (USD)', { exact: true }).fill('10');
    await page.getByLabel('At most per month (USD)').fill('50');
    await page.getByRole('button', { name: 'Save auto top-up' }).click();
    await page.getByText('Auto top-up saved.').waitFor();
    await page.getByLabel('Email me when credit falls under (USD)').fill('9.999999');
    await page.getByRole('button', { name: 'Save email alert' }).click();
    await page.getByText('Low-balance email saved.').waitFor();

    // The free tokens are spent (set to 0 in the store, standing in for 200,000 tokens of usage), so
    // requests spend credit; 20 at once push it under the threshold.
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        UpdateExpression: 'SET freeTokens = :z',
        ExpressionAttributeValues: { ':z': 0 },
      }),
    );
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('auto top-up');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New API key').inputValue();
    advanceClock(400); // past the view's TTL: the holds read the settings just stored
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 3 });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 20 }),
      ),
    );

    const autoTopUps = () =>
      [...gw.stripe!.standIn!.objects.values()].filter(
        (o) => o.object === 'payment_intent' && (o.metadata as Record<string, string>).modelmux_kind === 'auto_top_up',
      );
    await expect.poll(() => listPayments(accountId).then((p) => p.filter((e) => e.kind === 'auto_top_up').length), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => gw.mail!.mails.filter((m) => m.to.includes(email)).length, { timeout: 30_000 }).toBe(1);
    await billingAtRest(gw, accountId); // nothing else is queued, charged or being delivered now
    expect(autoTopUps()).toHaveLength(1);
    expect((await listPayments(accountId)).filter((e) => e.kind === 'auto_top_up')).toHaveLength(1);
    expect(gw.mail!.mails.filter((m) => m.to.includes(email)).map((m) => m.subject)).toEqual([expect.stringContaining('below $9.999999')]);

    await page.goto(`${gw.origin}/#/credits`);
    await expectHeading(page, 'Credits');
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Auto top-up' }).count()).toBe(1);
    await page.close();
  });
});

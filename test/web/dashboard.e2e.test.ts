import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredit } from '../../functions/shared/accounts/account-store';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { buildWebSync } from '../../web/build';
import { formatCount, formatUsd } from '../../web/src/format/money';
import { pollLedgerEntry } from '../support/ledger';
import { launchChromium, type Chromium } from './support/chromium';
import { expectHeading, failureDir, openPage, screenshotEveryPage, signUpThroughPage, stat, testEmail } from './support/dashboard';

/**
 * The dashboard end to end, in Debian's Chromium, against the gateway as `npm start` runs it (the
 * real handlers behind the Function URL stand-in, DynamoDB Local, the Cognito emulator, the built
 * page served at `/` under its CSP): sign up → confirm → 200,000 free tokens → create and copy a key
 * → a chat completion with it → that request's model and cost on the usage page → keys to the limit
 * and the 6th refused with the API's message → disable and delete → a BYOK key shown by its last 4
 * characters → sign out. On failure, every page is screenshotted at 1280 and 375 px into
 * test-results/web/ (git-ignored).
 */

let gw: RunningGateway;
let browser: Chromium;
let siteDir: string;

beforeAll(async () => {
  siteDir = mkdtempSync(join(tmpdir(), 'dashboard-e2e-'));
  buildWebSync(join(siteDir, 'dist'));
  gw = await startGateway({ tablePrefix: `dash-${process.pid}`, cognito: {}, siteDir: join(siteDir, 'dist') });
  browser = await launchChromium();
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.origin });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

/** Everything the page requested and logged, to prove no key or token leaks into URLs or the console. */
function watch(page: Page): { urls: string[]; console: string[]; errors: string[] } {
  const seen = { urls: [] as string[], console: [] as string[], errors: [] as string[] };
  page.on('request', (r) => seen.urls.push(r.url()));
  page.on('console', (m) => {
    seen.console.push(m.text());
    // Chromium logs every 4xx answer as "Failed to load resource"; the 409 and 401 here are on purpose.
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) seen.errors.push(m.text());
  });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  return seen;
}

/**
 * The keys table's row of the key named `name`: its row header (the name cell) exactly, not any row whose
 * text holds `name` (a key's hint, `sk-mux-K2…`, may contain another key's name, case-insensitively).
 */
const keyRow = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });

/** Creates a key on the keys page and returns the key as the page showed it (then closes the panel). */
async function createKey(page: Page, name: string, limit?: string): Promise<string> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  if (limit !== undefined) await page.getByLabel('Spend limit, USD (optional)').fill(limit);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('heading', { name: `Your new key “${name}”` }).waitFor();
  const key = await page.getByLabel('New API key').inputValue();
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await keyRow(page, name).waitFor();
  return key;
}

describe('the account dashboard in Chromium', () => {
  it('sign-up to sign-out: free tokens, a key, a billed request on the usage page, the key limit, disable/delete, BYOK', async ({ onTestFailed }) => {
    const page = await browser.context.newPage();
    onTestFailed(async () => {
      const files = await screenshotEveryPage(page, gw.origin, failureDir('dashboard-e2e'));
      console.error(`dashboard e2e failed; screenshots:\n${files.join('\n')}`);
    });
    const seen = watch(page);
    const email = testEmail('e2e');

    // Sign up and confirm with the emailed code: the overview shows the free grant.
    await page.goto(`${gw.origin}/`);
    await expectHeading(page, 'Sign in');
    const accountId = await signUpThroughPage(page, gw, email);
    await expect.poll(() => stat(page, 'Free tokens left').textContent()).toBe('200,000');
    await expect.poll(() => stat(page, 'Credit').textContent()).toBe('$0.00');
    await expect.poll(() => stat(page, 'This month').textContent()).toBe('$0.00');
    await expect.poll(() => page.getByText(`${gw.origin}/v1`, { exact: true }).count()).toBeGreaterThan(0);

    // Create a key, copy it with the button: the clipboard has exactly the key shown once.
    await page.getByRole('link', { name: 'API keys' }).click();
    await expectHeading(page, 'API keys');
    await page.getByText('No keys yet').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('e2e laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('You will not see it again').waitFor();
    const shown = await page.getByLabel('New API key').inputValue();
    expect(shown).toMatch(/^sk-mux-[0-9A-Za-z]{43}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).toBe(shown);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByLabel('New API key').count()).toBe(0);
    const row = keyRow(page, 'e2e laptop');
    await expect.poll(() => row.textContent()).toContain(key.slice(0, 11));
    expect(await row.textContent()).not.toContain(key);

    // The free grant spent and $5 of credit bought (the admin CLI's addCredit), so the request costs money.
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        UpdateExpression: 'SET freeTokens = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    await addCredit(accountId, 5_000_000_000);

    // A chat completion with the copied key, through the OpenAI SDK.
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 });
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from the dashboard test' }] })
      .withResponse();
    expect(completion.choices[0]?.message.content).toBeTruthy();
    const entry = await pollLedgerEntry(accountId, response.headers.get('x-request-id'));
    expect(entry?.publicModel).toBe('gpt-4o-mini');
    const cost = Number(entry?.costNanoUsd);
    expect(cost).toBeGreaterThan(0);

    // The usage page shows that request's model and exact cost, in the chart and the table, and in the CSV.
    await page.getByRole('link', { name: 'Usage' }).click();
    await expectHeading(page, 'Usage');
    const usageRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /gpt-4o-mini/ }) });
    await usageRow.waitFor();
    expect(await usageRow.getByRole('cell').allTextContents()).toEqual([
      'e2e laptop',
      '1',
      String(completion.usage?.prompt_tokens),
      String(completion.usage?.completion_tokens),
      formatUsd(cost),
    ]);
    await page.getByRole('img', { name: /Cost per day by model/ }).waitFor();
    expect(await page.locator('.legend').textContent()).toContain(`gpt-4o-mini ${formatUsd(cost)}`);
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const csvPath = await (await download).path();
    const csv = readFileSync(csvPath, 'utf8');
    expect(csv).toContain(`,gpt-4o-mini,openai,e2e laptop,`);
    expect(csv).toContain(`,${cost},0,0,0,0.000000000,0\r\n`);

    // The overview counts it in this month's spend and takes it off the credit.
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect.poll(() => stat(page, 'This month').textContent()).toBe(formatUsd(cost));
    await expect.poll(() => stat(page, 'Credit').textContent()).toBe(formatUsd(5_000_000_000 - cost));

    // Keys up to the limit of 5; the 6th is refused with the API's own message, shown in words.
    await openPage(page, gw, 'keys', 'API keys');
    for (const name of ['k2', 'k3', 'k4', 'k5']) await createKey(page, name, name === 'k2' ? '1.50' : undefined);
    await page.getByRole('heading', { name: 'Your keys (5 of 5)' }).waitFor();
    await page.getByText('You have 5 keys, the most an account can hold.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('k6');
    const refused = page.waitForResponse((r) => r.url().endsWith('/v1/keys') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create key' }).click();
    const refusal = await refused;
    expect(refusal.status()).toBe(409);
    const apiError = ((await refusal.json()) as { error: { message: string; code: string } }).error;
    expect(apiError.code).toBe('key_limit_exceeded');
    await expect.poll(() => page.getByRole('alert').filter({ hasText: apiError.message }).count()).toBe(1);
    await expect.poll(() => keyRow(page, 'k2').textContent()).toContain('$0.00 of $1.50 in total');

    // Disable the first key: the API refuses it at once. Enable it again, then delete k5.
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/v1/keys/'));
    await page.getByRole('button', { name: 'Disable e2e laptop' }).click();
    expect((await patched).status()).toBe(200);
    await expect.poll(() => row.getByText('Disabled').count()).toBe(1);
    const afterDisable = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still there?' }] }).then(
      () => 200,
      (e: unknown) => (e as { status?: number }).status,
    );
    expect(afterDisable).toBe(401);
    await page.getByRole('button', { name: 'Enable e2e laptop' }).click();
    await expect.poll(() => row.getByText('Active').count()).toBe(1);
    await page.getByRole('button', { name: 'Delete k5' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the key “k5”?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Delete key' }).click();
    await page.getByText('Key “k5” is deleted.').waitFor();
    await page.getByRole('heading', { name: 'Your keys (4 of 5)' }).waitFor();
    expect(await keyRow(page, 'k5').count()).toBe(0);

    // Bring your own key: a non-sk- key is refused; an sk- key is shown only by its last 4 characters.
    await page.getByRole('link', { name: 'Provider keys' }).click();
    await expectHeading(page, 'Your provider keys');
    const openaiKey = page.getByLabel('OpenAI API key');
    await openaiKey.fill('AIza-not-an-sk-key');
    await page.getByRole('button', { name: 'Attach OpenAI key' }).click();
    await page.getByText('Only keys that begin with “sk-” can be attached.').waitFor();
    const byokKey = 'sk-proj-e2eDashboardKey0123456789WXYZ';
    await openaiKey.fill(byokKey);
    await page.getByRole('button', { name: 'Attach OpenAI key' }).click();
    await page.getByText('OpenAI: your key ending in WXYZ is attached.').waitFor();
    const openaiCard = page.getByRole('region', { name: 'OpenAI' });
    expect(await openaiCard.locator('.byok-last4').textContent()).toBe('WXYZ');
    const fallback = openaiCard.getByRole('switch', { name: 'Fall back to modelmux’s keys' });
    expect(await fallback.isChecked()).toBe(true);
    await fallback.click();
    await page.getByText('OpenAI: only your key is used.').waitFor();
    await expect.poll(() => fallback.isChecked()).toBe(false);
    expect(await page.content()).not.toContain(byokKey.slice(0, -4));

    // Sign out: back to sign-in, nothing left in the tab, the dashboard pages closed.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectHeading(page, 'Sign in');
    await page.getByText('You are signed out.').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.goto(`${gw.origin}/#/keys`);
    await expectHeading(page, 'Sign in');

    // Never a key, token or code in a URL or the console; no CSP violation or script error.
    for (const url of seen.urls) {
      expect(url).not.toContain(key);
      expect(url).not.toContain('sk-proj');
      expect(url).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
    }
    for (const line of seen.console) {
      expect(line).not.toContain(key);
      expect(line).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
    }
    expect(seen.errors).toEqual([]);
    await page.close();
  }, 180_000);

  it('prompt caching on the usage page: cached tokens, cache writes and what caching saved, per model and day, equal to the ledger', async ({
    onTestFailed,
  }) => {
    const page = await browser.context.newPage();
    onTestFailed(async () => {
      const files = await screenshotEveryPage(page, gw.origin, failureDir('dashboard-e2e-caching'));
      console.error(`dashboard e2e (caching) failed; screenshots:\n${files.join('\n')}`);
    });
    const seen = watch(page);
    const accountId = await signUpThroughPage(page, gw, testEmail('cache'));
    await openPage(page, gw, 'keys', 'API keys');
    const key = await createKey(page, 'agent');
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        UpdateExpression: 'SET freeTokens = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    await addCredit(accountId, 5_000_000_000);

    // Two models whose (simulated) providers read 3/4 of the prompt from their cache ([cached]): OpenAI
    // buffered (`cached_tokens`), Anthropic streamed (`cache_read_input_tokens`, additive), and one
    // request without caching.
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 });
    const long = `[cached] ${'context '.repeat(1_200)}`;
    const entries: Array<Record<string, any>> = [];
    const { response: r1 } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: long }] }).withResponse();
    entries.push((await pollLedgerEntry(accountId, r1.headers.get('x-request-id')))!);
    const { data: stream, response: r2 } = await client.chat.completions
      .create({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: long }], stream: true })
      .withResponse();
    for await (const chunk of stream) void chunk;
    entries.push((await pollLedgerEntry(accountId, r2.headers.get('x-request-id')))!);
    const { response: r3 } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'no cache here' }] }).withResponse();
    const plain = (await pollLedgerEntry(accountId, r3.headers.get('x-request-id')))!;
    expect(plain.cachedTokens).toBeUndefined();

    // What each model's cache reads saved, from the ledger: cached tokens × (input − cached-input price).
    const saved = (e: Record<string, any>) => Math.floor((e.cachedTokens * (e.inputPrice - e.cachedInputPrice)) / 1000);
    for (const e of entries) {
      expect(e.cachedTokens).toBe(Math.floor(e.promptTokens * 0.75));
      expect(saved(e)).toBeGreaterThan(0);
    }

    await openPage(page, gw, 'usage', 'Usage');
    await expect.poll(() => stat(page, 'Saved by caching').textContent()).toBe(formatUsd(saved(entries[0]!) + saved(entries[1]!)));
    const table = page.getByRole('table', { name: /Prompt caching by day and model/ });
    await table.waitFor();
    const day = String(entries[0]!.createdAt).slice(0, 10);
    const gpt = [entries[0]!, plain];
    const groups: Array<[string, Array<Record<string, any>>]> = [
      ['gpt-4o', gpt],
      ['claude-sonnet-4-6', [entries[1]!]],
    ];
    for (const [model, group] of groups) {
      const line = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: model, exact: true }) });
      const prompt = group.reduce((n: number, e) => n + Number(e.promptTokens), 0);
      const cached = group.reduce((n: number, e) => n + Number(e.cachedTokens ?? 0), 0);
      const discount = group.reduce((n: number, e) => n + (e.cachedTokens ? saved(e) : 0), 0);
      expect(await line.getByRole('cell').allTextContents()).toEqual([day, formatCount(prompt), formatCount(cached), '0', formatUsd(discount)]);
    }
    expect(await table.getByRole('row').count()).toBe(3); // the header and one row per model

    // The CSV carries the same numbers, exact.
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const csv = readFileSync(await (await download).path(), 'utf8');
    const d0 = saved(entries[0]!);
    expect(csv).toContain(`,${entries[0]!.cachedTokens},0,0.${String(d0).padStart(9, '0')},${d0}\r\n`);
    expect(seen.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('a forgotten password is reset with the emailed code; tokens are refreshed when expired or refused', async ({ onTestFailed }) => {
    const page = await browser.context.newPage();
    onTestFailed(async () => {
      const files = await screenshotEveryPage(page, gw.origin, failureDir('dashboard-e2e-password'));
      console.error(`dashboard e2e (password) failed; screenshots:\n${files.join('\n')}`);
    });
    const seen = watch(page);
    const email = testEmail('reset');
    await signUpThroughPage(page, gw, email);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectHeading(page, 'Sign in');

    // Wrong password: Cognito's refusal in words, and no way in.
    await page.getByLabel('Password', { exact: true }).fill('Not-the-password-1!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/password/i);

    // Forgot it: the code from the email and a new password, then sign in with the new one.
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await expectHeading(page, 'Reset your password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the code' }).click();
    const code = await gw.cognito!.confirmationCode(email, 10_000);
    await page.getByLabel('Code from the email').fill(code);
    await page.getByLabel('New password').fill('Another-Horse-43!');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await expectHeading(page, 'Sign in');
    await page.getByText('Your password is changed.').waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    await page.getByLabel('Password', { exact: true }).fill('Another-Horse-43!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading(page, 'Overview');
    await expect.poll(() => stat(page, 'Free tokens left').textContent()).toBe('200,000');

    // A token the API refuses (401) is refreshed once and the request retried: the page still loads.
    type Stored = { accessToken: string; expiresAt: number; refreshToken: string };
    const stored = async (): Promise<Stored> => JSON.parse((await page.evaluate(() => sessionStorage.getItem('modelmux.session'))) ?? '{}') as Stored;
    const first = await stored();
    await page.evaluate(
      (s) => sessionStorage.setItem('modelmux.session', JSON.stringify({ ...JSON.parse(s), accessToken: 'not-a-token' })),
      JSON.stringify(first),
    );
    const retried = page.waitForResponse((r) => r.url().endsWith('/v1/account') && r.status() === 200);
    await page.reload();
    await retried;
    await expect.poll(() => stat(page, 'Free tokens left').textContent()).toBe('200,000');
    expect((await stored()).accessToken).not.toBe('not-a-token');

    // An access token about to expire is refreshed before the call (REFRESH_TOKEN_AUTH at Cognito).
    const refreshed = await stored();
    await page.evaluate(
      (s) => sessionStorage.setItem('modelmux.session', JSON.stringify({ ...JSON.parse(s), expiresAt: Date.now() })),
      JSON.stringify(refreshed),
    );
    const cognitoCall = page.waitForRequest((r) => r.url().startsWith(gw.cognito!.endpoint) && (r.headers()['x-amz-target'] ?? '').endsWith('.InitiateAuth'));
    await page.reload();
    expect(JSON.parse((await cognitoCall).postData() ?? '{}')).toMatchObject({ AuthFlow: 'REFRESH_TOKEN_AUTH' });
    await expect.poll(() => stat(page, 'Free tokens left').textContent()).toBe('200,000');
    expect((await stored()).expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);

    // A revoked refresh token (signed out elsewhere) ends the session with a message, not a broken page.
    await page.evaluate(
      (s) => sessionStorage.setItem('modelmux.session', JSON.stringify({ ...JSON.parse(s), accessToken: 'not-a-token', refreshToken: 'revoked' })),
      JSON.stringify(await stored()),
    );
    await page.reload();
    await expectHeading(page, 'Sign in');
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(seen.errors).toEqual([]);
    await page.close();
  }, 120_000);
});

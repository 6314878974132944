import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, signUpAndSignIn, type SignedInUser } from '../support/cognito-user';
import { billingAtRest } from '../support/settle-queue';
import { advanceClock, resetClock } from '../support/clock';
import { ledgerEntries, netSum } from '../support/ledger';

/**
 * Auto top-up and the account emails end to end, with real components: the account and chat handlers,
 * DynamoDB Local, the settle queue (SQS emulator) and its real settle function, the Stripe stand-in
 * (official SDK on both sides, signed webhooks) and the SES stand-in relaying to the SMTP catch-all.
 * 20 concurrent requests cross the threshold → ONE PaymentIntent, ONE ledger credit, ONE low-balance
 * mail; a declined card pauses auto top-up and mails once; the monthly cap stops the next one; Σ of the
 * ledger equals the balance's change to the nano-dollar throughout.
 */
let gw: RunningGateway;

beforeAll(async () => {
  // Settings reach a container's view of the account when it reads it again (after this TTL, on the
  // billing clock: `requests` moves it past).
  process.env.ACCOUNT_CACHE_TTL_MS = '150';
  gw = await startGateway({
    tablePrefix: `autotopup-${process.pid}`,
    cognito: {},
    stripe: { retryDelaysMs: [50, 100, 200, 400] },
    mail: {},
    settle: { visibilityTimeoutS: 1 },
  });
}, 120_000);

afterAll(async () => {
  resetClock();
  await gw?.close();
});

const standIn = () => gw.stripe!.standIn!;

async function account(user: SignedInUser): Promise<{ credit_nano_usd: number; email: string }> {
  return (await call(gw, 'GET', '/v1/account', user.accessToken)).body.data;
}

/** Σ of the account's ledger: payments minus request costs, nano-USD; and each entry's kind. */
async function ledger(accountId: string): Promise<{ sum: number; kinds: string[] }> {
  const items = await ledgerEntries(accountId);
  return { sum: netSum(items), kinds: items.map((i) => String(i.kind ?? 'request')) };
}

/** The auto top-up PaymentIntents the stand-in made for `accountId`. */
const autoIntents = (accountId: string) =>
  [...standIn().objects.values()].filter(
    (o) =>
      o.object === 'payment_intent' &&
      (o.metadata as Record<string, string>)?.modelmux_account === accountId &&
      (o.metadata as Record<string, string>)?.modelmux_kind === 'auto_top_up',
  );
const mailsTo = (email: string, subject: RegExp) => gw.mail!.mails.filter((m) => m.to.includes(email) && subject.test(m.subject));

/** Resolves once `ok()` is true (looked at every 100 ms). @throws Error naming `what` after `ms`. */
async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await ok())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: ms, interval: 100 },
  );
}

async function requests(key: string, n: number): Promise<void> {
  advanceClock(200); // past the view's TTL: the holds read the settings just stored
  const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 3 });
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `spend ${i}` }], max_tokens: 20 }),
    ),
  );
}

describe('auto top-up', () => {
  it('saves the card at checkout; 20 concurrent requests crossing the threshold start ONE top-up, credited once by the webhook, with one low-balance mail; a decline pauses and mails; the monthly cap holds', async () => {
    const user = await signUpAndSignIn(gw);
    const email = (await account(user)).email;
    // A user with no free tokens, so requests spend credit.
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId: user.sub },
        UpdateExpression: 'SET freeTokens = :z',
        ExpressionAttributeValues: { ':z': 0 },
      }),
    );

    // Turning it on needs a saved card.
    const settings = { enabled: true, threshold_usd: 9.99, amount_usd: 10, monthly_cap_usd: 20 };
    const refused = await call(gw, 'PUT', '/v1/credits/auto-top-up', user.accessToken, settings);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('no_saved_card');

    const checkout = await call(gw, 'POST', '/v1/credits/checkout', user.accessToken, { amount_usd: 10, setup_future_usage: 'off_session' });
    expect(checkout.status).toBe(200);
    const paid = await fetch(checkout.body.url, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    await standIn().webhooks.idle();
    const start = await account(user);
    expect(start.credit_nano_usd).toBe(10_000_000_000);

    // Threshold a hair under the balance: the first settles cross it.
    const on = await call(gw, 'PUT', '/v1/credits/auto-top-up', user.accessToken, { ...settings, threshold_usd: 9.999999 });
    expect(on.status).toBe(200);
    expect(on.body.data).toMatchObject({
      enabled: true,
      paused: false,
      amount_usd: 10,
      monthly_cap_usd: 20,
      payment_method: { id: expect.stringMatching(/^pm_/), customer: expect.stringMatching(/^cus_/) },
    });
    expect((await call(gw, 'PUT', '/v1/credits/alerts', user.accessToken, { low_balance_usd: 9.999999 })).body.data.low_balance_alert_usd).toBe(9.999999);

    const key = (await call(gw, 'POST', '/v1/keys', user.accessToken, { name: 'auto' })).body.key as string;
    await requests(key, 20);
    await billingAtRest(gw, user.sub); // nothing else is queued, charged or being delivered now
    await until('the auto top-up credit', async () => (await ledger(user.sub)).kinds.includes('auto_top_up'));
    await until('the low-balance mail', () => mailsTo(email, /below/).length > 0);
    expect(autoIntents(user.sub)).toHaveLength(1);
    expect((await ledger(user.sub)).kinds.filter((k) => k === 'auto_top_up')).toHaveLength(1);
    expect(mailsTo(email, /below/)).toHaveLength(1);
    const afterTopUp = await account(user);
    expect(afterTopUp.credit_nano_usd).toBeGreaterThan(19_000_000_000);
    expect((await ledger(user.sub)).sum).toBe(afterTopUp.credit_nano_usd);
    expect((await call(gw, 'GET', '/v1/credits/auto-top-up', user.accessToken)).body.data.month_to_date_usd).toBe(10);

    // A declined card: the next crossing's charge fails → paused, one mail, the month's amount given back.
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId: user.sub },
        UpdateExpression: 'SET stripePaymentMethodId = :pm',
        ExpressionAttributeValues: { ':pm': 'pm_card_chargeDeclined' },
      }),
    );
    await call(gw, 'PUT', '/v1/credits/auto-top-up', user.accessToken, { ...settings, threshold_usd: 25 });
    await requests(key, 3);
    await billingAtRest(gw, user.sub);
    await until('the failure mail', () => mailsTo(email, /auto top-up failed/).length > 0);
    const paused = (await call(gw, 'GET', '/v1/credits/auto-top-up', user.accessToken)).body.data;
    expect(paused).toMatchObject({ enabled: true, paused: true, paused_reason: expect.stringContaining('declined'), month_to_date_usd: 10 });
    expect(mailsTo(email, /auto top-up failed/)).toHaveLength(1);
    expect(autoIntents(user.sub)).toHaveLength(2);
    expect((await ledger(user.sub)).kinds.filter((k) => k === 'auto_top_up')).toHaveLength(1);

    // Paused: more requests under the threshold charge nothing.
    await requests(key, 2);
    await billingAtRest(gw, user.sub);
    expect(autoIntents(user.sub)).toHaveLength(2);

    // A good card again and turned on again (clears the pause), but the cap ($10 this month) is reached.
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId: user.sub },
        UpdateExpression: 'SET stripePaymentMethodId = :pm',
        ExpressionAttributeValues: { ':pm': on.body.data.payment_method.id },
      }),
    );
    const capped = await call(gw, 'PUT', '/v1/credits/auto-top-up', user.accessToken, { ...settings, threshold_usd: 25, monthly_cap_usd: 10 });
    expect(capped.body.data).toMatchObject({ paused: false, monthly_cap_usd: 10 });
    await requests(key, 3);
    await billingAtRest(gw, user.sub);
    expect(autoIntents(user.sub)).toHaveLength(2);

    // Raising the cap lets the next crossing through: a second credited auto top-up.
    await call(gw, 'PUT', '/v1/credits/auto-top-up', user.accessToken, { ...settings, threshold_usd: 25, monthly_cap_usd: 30 });
    await requests(key, 2);
    await billingAtRest(gw, user.sub);
    await until('the second auto top-up credit', async () => (await ledger(user.sub)).kinds.filter((k) => k === 'auto_top_up').length === 2);
    const end = await account(user);
    expect((await ledger(user.sub)).sum).toBe(end.credit_nano_usd);
  }, 120_000);

  it('a key reaching its spend limit emails the owner once per window', async () => {
    const user = await signUpAndSignIn(gw);
    const email = (await account(user)).email;
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId: user.sub },
        UpdateExpression: 'SET freeTokens = :z',
        ExpressionAttributeValues: { ':z': 0 },
      }),
    );
    const checkout = await call(gw, 'POST', '/v1/credits/checkout', user.accessToken, { amount_usd: 5 });
    await fetch(checkout.body.url, { method: 'POST', redirect: 'manual' });
    await standIn().webhooks.idle();
    const key = (await call(gw, 'POST', '/v1/keys', user.accessToken, { name: 'limited', limit: 0.00025 })).body.key as string;
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 });
    let [served, refused] = [0, 0];
    for (let i = 0; i < 100 && refused < 2; i++) {
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `limit ${i}` }], max_tokens: 20 }).then(
        () => served++,
        (e: { status: number }) => {
          expect(e.status).toBe(402);
          refused++;
        },
      );
    }
    expect(served).toBeGreaterThan(1);
    expect(refused).toBe(2);
    await until('the spend-limit mail', () => mailsTo(email, /spend limit/).length > 0);
    await billingAtRest(gw, user.sub);
    expect(mailsTo(email, /spend limit/)).toHaveLength(1);
    expect(mailsTo(email, /spend limit/)[0]!.raw).toContain('$0.00025');
  }, 120_000);
});

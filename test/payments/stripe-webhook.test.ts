import OpenAI from 'openai';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rateLimitsFor } from '../../functions/shared/config/env';
import { newStripeClient } from '../../functions/shared/payments/stripe-client';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, signUpAndSignIn, type SignedInUser } from '../support/cognito-user';
import { pollLedgerEntry } from '../support/ledger';
import { billingAtRest } from '../support/settle-queue';
import { expectStripeSchema } from '../support/openapi/stripe-validator';
import { captureEmf } from '../support/emf';
import { ledgerEntries, netSum } from '../support/ledger';

/**
 * Top-ups end to end through the real account handler, DynamoDB Local and the local Stripe stand-in
 * (the official `stripe` SDK on both sides): Checkout → hosted page → signed webhook → credit, and the
 * webhook's defences (signature, replay, concurrency, order), refunds and disputes. Money is checked to
 * the nano-dollar: Σ ledger (payments − request costs) == the balance's change.
 */
let gw: RunningGateway;
let webhookUrl: string;
const signer = new Stripe('sk_test_signer_only');

let emf: ReturnType<typeof captureEmf>;

beforeAll(async () => {
  // Metrics on for this file (read when the first buffer is made; worker-env.ts turns them off), their
  // EMF lines kept off the output: the webhook's failure counters are asserted below.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  emf = captureEmf();
  gw = await startGateway({ tablePrefix: `stripe-${process.pid}`, cognito: {}, stripe: { retryDelaysMs: [50, 100, 200, 400] } });
  webhookUrl = gw.stripe!.standIn!.webhooks.url!;
}, 120_000);

afterAll(async () => {
  emf?.stop();
  await gw?.close();
});

/** The sum of `name` over the EMF lines since the last `emf.clear()`, once `expected` is reached (or the last seen after 4 s). */
async function counted(name: string, expected: number): Promise<number> {
  const sum = () =>
    emf
      .metrics()
      .filter((m) => m.name === name && JSON.stringify(m.dimensions) === '[["service"]]')
      .reduce((total, m) => total + m.values.reduce((a, b) => a + b, 0), 0);
  const NOT_YET = `${name} not yet at ${expected}`;
  await vi
    .waitFor(
      () => {
        if (sum() < expected) throw new Error(NOT_YET);
      },
      { timeout: 4_000, interval: 20 },
    )
    .catch((err: unknown) => {
      if (!(err instanceof Error && err.message === NOT_YET)) throw err;
    });
  return sum();
}

/** The stand-in through the official SDK, as the gateway uses it. */
const stripeApi = (): Stripe => newStripeClient(gw.stripe!.standIn!.secretKey, gw.stripe!.standIn!.url);

async function account(user: SignedInUser): Promise<any> {
  return (await call(gw, 'GET', '/v1/account', user.accessToken)).body.data;
}

/** Pays a checkout of `usd` on the stand-in's page and waits for its webhooks. */
async function topUp(user: SignedInUser, usd: number): Promise<{ id: string; url: string }> {
  const res = await call(gw, 'POST', '/v1/credits/checkout', user.accessToken, { amount_usd: usd });
  expect(res.status).toBe(200);
  const page = await fetch(res.body.url);
  expect(await page.text()).toContain(`Pay $${usd.toFixed(2)} with a test card`);
  const paid = await fetch(res.body.url, { method: 'POST', redirect: 'manual' });
  expect(paid.status).toBe(303);
  expect(paid.headers.get('location')).toBe(`${gw.origin}/#/credits`);
  await gw.stripe!.standIn!.webhooks.idle();
  return res.body;
}

/** Σ of the account's ledger: payments minus request costs, nano-USD. */
async function ledgerSum(accountId: string): Promise<number> {
  return netSum(await ledgerEntries(accountId));
}

/** Posts `payload` to the webhook, signed with `secret` at `timestamp`. */
async function deliver(payload: string, opts: { secret?: string; timestamp?: number; body?: string } = {}): Promise<number> {
  const header = signer.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? gw.stripe!.webhookSecret,
    ...(opts.timestamp === undefined ? {} : { timestamp: opts.timestamp }),
  });
  const res = await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
    body: opts.body ?? payload,
  });
  await res.text();
  return res.status;
}

describe('Stripe top-ups', () => {
  it('checkout → pay on the hosted page → the webhook credits $10, once, and the account leaves the free tier', async () => {
    const user = await signUpAndSignIn(gw);
    const tier = (free: boolean) => ({
      requests_per_minute: rateLimitsFor(free ? 0 : 1).rpm || null,
      concurrent_requests: rateLimitsFor(free ? 0 : 1).concurrent || null,
    });
    expect(await account(user)).toMatchObject({ is_free_tier: true, credit_nano_usd: 0, rate_limit: tier(true) });
    const checkout = await topUp(user, 10);
    const session = await stripeApi().checkout.sessions.retrieve(checkout.id);
    expectStripeSchema('checkout.session', session);
    expect(session).toMatchObject({ mode: 'payment', client_reference_id: user.sub, payment_status: 'paid', amount_total: 1000 });
    expect(await account(user)).toMatchObject({ credit: 10, credit_nano_usd: 10_000_000_000, is_free_tier: false, rate_limit: tier(false) });
    const purchases = (await call(gw, 'GET', '/v1/credits/purchases', user.accessToken)).body.data;
    expect(purchases).toHaveLength(1);
    expect(purchases[0]).toMatchObject({ kind: 'top_up', amount: 10, amount_nano_usd: 10_000_000_000, stripe_id: checkout.id });
    expect(purchases[0].receipt_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/receipts\/ch_/);
    expect(await ledgerSum(user.sub)).toBe(10_000_000_000);
  });

  it('refuses amounts under the minimum or with fractions of a cent (400), and the browser coming back adds nothing', async () => {
    const user = await signUpAndSignIn(gw);
    for (const amount_usd of [4.99, 10.001, -5, 20_000]) {
      const res = await call(gw, 'POST', '/v1/credits/checkout', user.accessToken, { amount_usd });
      expect(res.status, String(amount_usd)).toBe(400);
      expect(res.body.error.param).toBe('amount_usd');
    }
    const res = await call(gw, 'POST', '/v1/credits/checkout', user.accessToken, { amount_usd: 25 });
    await fetch(`${gw.origin}/#/credits`);
    await gw.stripe!.standIn!.webhooks.idle(); // only a webhook credits: none is on its way

    expect(res.status).toBe(200);
    expect((await account(user)).credit_nano_usd).toBe(0);
  });
});

describe('the webhook', () => {
  /** A paid checkout.session.completed event for `accountId` (as Stripe would send it). */
  function completedEvent(accountId: string, cents: number): { payload: string; sessionId: string } {
    const sessionId = `cs_test_${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);
    const session = {
      id: sessionId,
      object: 'checkout.session',
      mode: 'payment',
      status: 'complete',
      payment_status: 'paid',
      amount_total: cents,
      currency: 'usd',
      client_reference_id: accountId,
      payment_intent: `pi_${sessionId.slice(8)}`,
      created,
      expires_at: created + 86_400,
      livemode: false,
      metadata: {},
      success_url: 'x',
      cancel_url: 'x',
      payment_method_types: ['card'],
      automatic_tax: { enabled: false, status: null },
      shipping_options: [],
    };
    const event = {
      id: `evt_${sessionId.slice(8)}`,
      object: 'event',
      type: 'checkout.session.completed',
      created,
      livemode: false,
      pending_webhooks: 1,
      api_version: '2025-02-24.acacia',
      request: { id: null, idempotency_key: null },
      data: { object: session },
    };
    expectStripeSchema('event', event);
    return { payload: JSON.stringify(event), sessionId };
  }

  it('a tampered body, a wrong secret, an old timestamp or no signature → 400, nothing credited', async () => {
    const user = await signUpAndSignIn(gw);
    await account(user);
    const { payload } = completedEvent(user.sub, 5_000);
    emf.clear();
    expect(await deliver(payload, { body: payload.replace('5000', '500000') })).toBe(400);
    expect(await deliver(payload, { secret: 'whsec_not_the_secret' })).toBe(400);
    expect(await deliver(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 })).toBe(400);
    const unsigned = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
    expect(unsigned.status).toBe(400);
    // Each refusal is counted (the StripeWebhookSignatures alarm), none as an event not applied.
    expect(await counted('StripeWebhookSignatureFailures', 4)).toBe(4);
    expect(await counted('StripeWebhookFailures', 0)).toBe(0);
    expect((await account(user)).credit_nano_usd).toBe(0);
    expect(await ledgerSum(user.sub)).toBe(0);
    // The same event, signed properly, is credited.
    expect(await deliver(payload)).toBe(200);
    expect((await account(user)).credit_nano_usd).toBe(50_000_000_000);
  });

  it('the same event delivered 10 times at once is credited once; unknown types are a 200 and ignored', async () => {
    const user = await signUpAndSignIn(gw);
    await account(user);
    const { payload } = completedEvent(user.sub, 1_234);
    const statuses = await Promise.all(Array.from({ length: 10 }, () => deliver(payload)));
    expect(statuses).toEqual(Array(10).fill(200));
    expect((await account(user)).credit_nano_usd).toBe(12_340_000_000);
    expect(await ledgerSum(user.sub)).toBe(12_340_000_000);
    expect(
      await deliver(
        JSON.stringify({
          id: 'evt_x',
          object: 'event',
          type: 'customer.created',
          created: 1,
          livemode: false,
          pending_webhooks: 1,
          api_version: null,
          request: null,
          data: { object: {} },
        }),
      ),
    ).toBe(200);
  });

  it('refunds (in any order, duplicated) and disputes take the money back once; below zero the API answers 402', async () => {
    const user = await signUpAndSignIn(gw);
    const checkout = await topUp(user, 20);
    const key = (await call(gw, 'POST', '/v1/keys', user.accessToken, { name: 'spend' })).body.key as string;
    const { response } = await new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 }).chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'spend some credit' }], max_tokens: 50 })
      .withResponse();
    await pollLedgerEntry(user.sub, response.headers.get('x-request-id'));

    const session = await stripeApi().checkout.sessions.retrieve(checkout.id);
    const refund = await stripeApi().refunds.create({ payment_intent: session.payment_intent as string, amount: 500 });
    expectStripeSchema('refund', refund);
    await gw.stripe!.standIn!.webhooks.idle();
    const firstRefund = gw.stripe!.standIn!.webhooks.deliveries.filter((d) => d.type === 'charge.refunded').at(-1)!;
    expect(firstRefund.statuses.at(-1)).toBe(200);
    const afterRefund = await account(user);
    expect(afterRefund.credit_nano_usd + afterRefund.credit_held_nano_usd).toBe(20_000_000_000 - 5_000_000_000 - afterRefund.total_usage_nano_usd);

    // The rest is refunded; then the first refund's event arrives again, late: nothing more moves.
    await stripeApi().refunds.create({ payment_intent: session.payment_intent as string });
    await gw.stripe!.standIn!.webhooks.idle();
    const charge = gw.stripe!.standIn!.objects.get(String((await stripeApi().paymentIntents.retrieve(session.payment_intent as string)).latest_charge))!;
    expectStripeSchema('charge', charge);
    const stale = {
      id: 'evt_stale',
      object: 'event',
      type: 'charge.refunded',
      created: 1,
      livemode: false,
      pending_webhooks: 1,
      api_version: null,
      request: null,
      data: { object: { ...charge, amount_refunded: 500 } },
    };
    expect(await deliver(JSON.stringify(stale))).toBe(200);
    const refunded = await account(user);
    expect(refunded.credit_nano_usd + refunded.total_usage_nano_usd).toBe(0);
    expect(await ledgerSum(user.sub)).toBe(refunded.credit_nano_usd);

    // A dispute on top: its own entry, once.
    const dispute = {
      id: 'dp_test_1',
      object: 'dispute',
      amount: 300,
      charge: charge.id,
      payment_intent: session.payment_intent,
      created: Math.floor(Date.now() / 1000),
      currency: 'usd',
      status: 'needs_response',
      reason: 'fraudulent',
      livemode: false,
      metadata: {},
      is_charge_refundable: false,
      balance_transactions: [],
      evidence: {},
      evidence_details: {},
    };
    const disputeEvent = JSON.stringify({
      id: 'evt_dp',
      object: 'event',
      type: 'charge.dispute.created',
      created: dispute.created,
      livemode: false,
      pending_webhooks: 1,
      api_version: null,
      request: null,
      data: { object: dispute },
    });
    expect(await Promise.all([deliver(disputeEvent), deliver(disputeEvent)])).toEqual([200, 200]);
    const disputed = await account(user);
    expect(disputed.credit_nano_usd).toBe(refunded.credit_nano_usd - 3_000_000_000);
    expect(await ledgerSum(user.sub)).toBe(disputed.credit_nano_usd);
    const kinds = (await call(gw, 'GET', '/v1/credits/purchases', user.accessToken)).body.data.map((p: { kind: string }) => p.kind);
    expect(kinds.sort()).toEqual(['dispute', 'refund', 'top_up']);

    // A lease already out keeps admitting until its validity ends (docs/credit-leases.md, "Staleness a
    // lease allows"): return this process's leases, as their validity would.
    await billingAtRest(gw, user.sub);
    const blocked = await new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: { status: number; message: string }) => e);
    expect(blocked).toMatchObject({ status: 402 });
    expect((blocked as { message: string }).message).toMatch(/refunded or disputed/);
  });

  it('a refund of a payment not credited yet is a 409, so Stripe delivers it again later, and is counted', async () => {
    emf.clear();
    const charge = { id: 'ch_unknown', object: 'charge', amount: 1000, amount_refunded: 1000, payment_intent: 'pi_never_seen', created: 1, currency: 'usd' };
    expect(
      await deliver(
        JSON.stringify({
          id: 'evt_early',
          object: 'event',
          type: 'charge.refunded',
          created: 1,
          livemode: false,
          pending_webhooks: 1,
          api_version: null,
          request: null,
          data: { object: charge },
        }),
      ),
    ).toBe(409);
    expect(await counted('StripeWebhookFailures', 1)).toBe(1);
    expect(await counted('StripeWebhookSignatureFailures', 0)).toBe(0);
  });
});

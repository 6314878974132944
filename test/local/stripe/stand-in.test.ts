import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newStripeClient } from '../../../functions/shared/payments/stripe-client';
import { startStripeStandIn, type StripeStandIn } from '../../../local/stripe/server';
import { expectStripeSchema } from '../../support/openapi/stripe-validator';

/**
 * The local Stripe stand-in through the official `stripe` SDK (pointed at it by host/port/protocol):
 * every answer validates against Stripe's published OpenAPI schemas (vendored subset), off-session
 * PaymentIntents replay by Idempotency-Key, a declined card is Stripe's 402 `card_error`, and its webhook
 * deliveries verify with `constructEvent` and are retried until a 2xx.
 */
let standIn: StripeStandIn;
let stripe: Stripe;
const secret = 'whsec_stand_in_test';
const received: Array<{ type: string; status: number }> = [];
let failFirst = 1;

beforeAll(async () => {
  const { createServer } = await import('node:http');
  const hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const event = stripe.webhooks.constructEvent(Buffer.concat(chunks).toString('utf8'), String(req.headers['stripe-signature']), secret);
        expectStripeSchema('event', event);
        const status = failFirst-- > 0 ? 500 : 200;
        received.push({ type: event.type, status });
        res.writeHead(status).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const port = (hook.address() as { port: number }).port;
  standIn = await startStripeStandIn({ webhookSecret: secret, webhookUrl: `http://127.0.0.1:${port}/hook`, retryDelaysMs: [20, 40, 80] });
  stripe = newStripeClient(standIn.secretKey, standIn.url);
  afterAll(async () => {
    await standIn.close();
    hook.close();
  });
});

describe('the Stripe stand-in', () => {
  it('creates Checkout Sessions, Customers and PaymentIntents shaped as Stripe describes them', async () => {
    const session = await stripe.checkout.sessions.create({
      mode: 'payment',
      client_reference_id: 'acct_1',
      line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 1000, product_data: { name: 'credit' } } }],
      success_url: 'http://x/ok',
      cancel_url: 'http://x/no',
    });
    expectStripeSchema('checkout.session', session);
    expect(session).toMatchObject({ object: 'checkout.session', status: 'open', payment_status: 'unpaid', amount_total: 1000, client_reference_id: 'acct_1' });
    const customer = await stripe.customers.create({ email: 'me@example.com' });
    expectStripeSchema('customer', customer);
    const params = { amount: 2000, currency: 'usd', customer: customer.id, payment_method: 'pm_card_visa', off_session: true, confirm: true };
    const intent = await stripe.paymentIntents.create(params, { idempotencyKey: 'topup-1' });
    expectStripeSchema('payment_intent', intent);
    expect(intent).toMatchObject({ status: 'succeeded', amount_received: 2000 });
    const again = await stripe.paymentIntents.create(params, { idempotencyKey: 'topup-1' });
    expect(again.id).toBe(intent.id);
    const withCharge = await stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] });
    expectStripeSchema('charge', withCharge.latest_charge);
  });

  it('answers errors as Stripe does: a declined card (402 card_error), an unknown id (404), a bad key (401)', async () => {
    const declined = await stripe.paymentIntents
      .create({ amount: 500, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true, off_session: true })
      .catch((e: Stripe.errors.StripeError) => e);
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(declined).toMatchObject({ statusCode: 402, code: 'card_declined' });
    const missing = await stripe.checkout.sessions.retrieve('cs_test_nope').catch((e: Stripe.errors.StripeError) => e);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing' });
    const res = await fetch(`${standIn.url}/v1/customers`, { method: 'POST', headers: { authorization: 'Bearer sk_test_wrong' } });
    expect(res.status).toBe(401);
    expectStripeSchema('error', await res.json());
  });

  it('delivers signed events, retrying a non-2xx answer', async () => {
    await standIn.webhooks.idle();
    const first = standIn.webhooks.deliveries[0]!;
    expect(first.statuses).toEqual([500, 200]);
    expect(received.filter((r) => r.status === 200).map((r) => r.type)).toContain('payment_intent.succeeded');
    expect(received.map((r) => r.type)).toContain('payment_intent.payment_failed');
  });
});

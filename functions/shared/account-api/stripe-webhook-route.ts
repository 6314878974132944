/**
 * `POST /v1/billing/stripe/webhook`: Stripe's events, no JWT. The raw body is verified with the
 * official SDK's `webhooks.constructEvent` (HMAC-SHA256 of `<timestamp>.<body>` with the signing secret,
 * default tolerance 300 s: docs.stripe.com/webhooks#verify-events); a missing or bad signature is a 400
 * and writes nothing. Handled (docs.stripe.com/checkout/fulfillment):
 *
 * - `checkout.session.completed` with `payment_status: paid`, and
 *   `checkout.session.async_payment_succeeded`: credit `amount_total` to `client_reference_id`;
 * - `payment_intent.succeeded` of an auto top-up (`metadata.modelmux_kind = auto_top_up`): credit;
 *   `payment_intent.payment_failed` of one: pause auto top-up and email the user (payments/auto-top-up.ts);
 * - a Checkout paid with `setup_future_usage: off_session` also remembers its customer and payment
 *   method (the card auto top-up charges);
 * - `charge.refunded`: take the charge's newly refunded amount back; `charge.dispute.created`: take the
 *   disputed amount back (payments/payment-ledger.ts: once each, whatever the order or number of
 *   deliveries).
 *
 * Unknown event types are a 200 and ignored. A refund or dispute of a payment not credited yet (its own
 * event not delivered yet) is a 409, so Stripe delivers it again later (it retries non-2xx answers for up
 * to 3 days). Without Stripe configured the path is a 404. Signature failures and events not applied are
 * counted (`StripeWebhookSignatureFailures`, `StripeWebhookFailures`; the stack alarms on both).
 */
import type Stripe from 'stripe';
import type { GatewayRequest, JsonResult } from '../http/types';
import { GatewayError, InvalidRequestError, NotFoundError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import { recordStripeWebhookFailure, recordStripeWebhookSignatureFailure } from '../observability/metrics';
import { accountOfPayment, creditPayment, debitDispute, debitRefund, type PaymentOutcome } from '../payments/payment-ledger';
import { stripeSetup } from '../payments/stripe-client';
import { AUTO_TOP_UP_KIND, failAutoTopUp } from '../payments/auto-top-up';
import { json } from './json';

/** The webhook route (see the file comment). */
export async function stripeWebhookRoute(req: GatewayRequest): Promise<JsonResult> {
  const setup = await stripeSetup();
  if (setup?.webhookSecret === undefined)
    throw new NotFoundError(`Unknown request URL: ${req.method} ${req.path}. Payments are not enabled.`, { code: 'unknown_url' });
  const signature = req.headers['stripe-signature'];
  if (signature === undefined || signature === '') {
    recordStripeWebhookSignatureFailure();
    throw new InvalidRequestError('Missing Stripe-Signature header.', { code: 'invalid_signature' });
  }
  let event: Stripe.Event;
  try {
    event = setup.stripe.webhooks.constructEvent(req.body, signature, setup.webhookSecret);
  } catch (err) {
    recordStripeWebhookSignatureFailure();
    throw new InvalidRequestError(`Webhook signature verification failed: ${(err as Error).message}`, { code: 'invalid_signature' });
  }
  let outcome: Handled;
  try {
    outcome = await handleEvent(setup.stripe, event);
  } catch (err) {
    // A 409 (not credited yet) or a failure: Stripe delivers the event again (alarmed: StripeWebhookFailures).
    recordStripeWebhookFailure();
    throw err;
  }
  logger.info('stripe webhook', { eventId: event.id, type: event.type, outcome });
  return json({ received: true, outcome });
}

type Handled = PaymentOutcome | 'ignored';

async function handleEvent(stripe: Stripe, event: Stripe.Event): Promise<Handled> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return creditSession(stripe, event.data.object);
    case 'payment_intent.succeeded':
      return creditAutoTopUp(stripe, event.data.object);
    case 'payment_intent.payment_failed':
      return autoTopUpFailed(event.data.object);
    case 'charge.refunded':
      return refundCharge(event.data.object);
    case 'charge.dispute.created':
      return disputeCharge(event.data.object);
    default:
      return 'ignored';
  }
}

const idOf = (v: string | { id: string } | null | undefined): string | undefined => (typeof v === 'string' ? v : (v?.id ?? undefined));

async function creditSession(stripe: Stripe, session: Stripe.Checkout.Session): Promise<Handled> {
  const accountId = session.client_reference_id;
  if (session.mode !== 'payment' || session.payment_status !== 'paid' || accountId === null || session.amount_total === null || session.currency !== 'usd')
    return 'ignored';
  const paymentIntentId = idOf(session.payment_intent);
  const intent = await paymentOf(stripe, paymentIntentId);
  const customerId = idOf(intent?.customer);
  const paymentMethodId = idOf(intent?.payment_method);
  return creditPayment({
    accountId,
    kind: 'top_up',
    stripeId: session.id,
    createdSec: session.created,
    amountCents: session.amount_total,
    paymentIntentId,
    receiptUrl: receiptOf(intent),
    savedCard:
      intent?.setup_future_usage === 'off_session' && customerId !== undefined && paymentMethodId !== undefined ? { customerId, paymentMethodId } : undefined,
  });
}

async function creditAutoTopUp(stripe: Stripe, intent: Stripe.PaymentIntent): Promise<Handled> {
  const accountId = intent.metadata?.modelmux_account;
  if (intent.metadata?.modelmux_kind !== AUTO_TOP_UP_KIND || accountId === undefined || intent.currency !== 'usd') return 'ignored';
  return creditPayment({
    accountId,
    kind: 'auto_top_up',
    stripeId: intent.id,
    createdSec: intent.created,
    amountCents: intent.amount_received,
    paymentIntentId: intent.id,
    receiptUrl: receiptOf(await paymentOf(stripe, intent.id)),
  });
}

/** A declined auto top-up: pause and email, once per crossing (`metadata.modelmux_seq`). */
async function autoTopUpFailed(intent: Stripe.PaymentIntent): Promise<Handled> {
  const m = intent.metadata ?? {};
  const seq = Number(m.modelmux_seq);
  if (m.modelmux_kind !== AUTO_TOP_UP_KIND || m.modelmux_account === undefined || m.modelmux_month === undefined || !Number.isSafeInteger(seq))
    return 'ignored';
  await failAutoTopUp({
    accountId: m.modelmux_account,
    seq,
    month: m.modelmux_month,
    amountCents: intent.amount,
    reason: intent.last_payment_error?.message ?? 'the payment failed.',
  });
  return 'applied';
}

async function refundCharge(charge: Stripe.Charge): Promise<Handled> {
  const paymentIntentId = idOf(charge.payment_intent);
  const accountId = paymentIntentId === undefined ? undefined : await accountOfPayment(paymentIntentId);
  if (accountId === undefined) return notCreditedYet(charge.id);
  return debitRefund({ accountId, chargeId: charge.id, createdSec: charge.created, amountRefundedCents: charge.amount_refunded, paymentIntentId });
}

async function disputeCharge(dispute: Stripe.Dispute): Promise<Handled> {
  const paymentIntentId = idOf(dispute.payment_intent);
  const accountId = paymentIntentId === undefined ? undefined : await accountOfPayment(paymentIntentId);
  if (accountId === undefined) return notCreditedYet(dispute.id);
  return debitDispute({ accountId, stripeId: dispute.id, createdSec: dispute.created, amountCents: dispute.amount, paymentIntentId });
}

/** A 409: Stripe retries later, after the payment's own event has credited it. */
function notCreditedYet(id: string): never {
  throw new GatewayError(409, 'invalid_request_error', `${id} belongs to a payment that has not been credited (yet); deliver it again later.`, {
    code: 'payment_not_found',
  });
}

/** A PaymentIntent with its charge (for the receipt link and the saved card), best effort (a failure only loses those). */
async function paymentOf(stripe: Stripe, paymentIntentId: string | undefined): Promise<Stripe.PaymentIntent | undefined> {
  if (paymentIntentId === undefined) return undefined;
  try {
    return await stripe.paymentIntents.retrieve(paymentIntentId, { expand: ['latest_charge'] });
  } catch (err) {
    logger.warn('stripe payment lookup failed', { paymentIntentId, error: (err as Error).message });
    return undefined;
  }
}

/** The receipt link of a PaymentIntent's charge. */
function receiptOf(intent: Stripe.PaymentIntent | undefined): string | undefined {
  const charge = intent?.latest_charge;
  return typeof charge === 'object' && charge !== null ? (charge.receipt_url ?? undefined) : undefined;
}

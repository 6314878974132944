/**
 * The Stripe objects the stand-in answers with, shaped as Stripe's API reference and OpenAPI
 * description define them (every `required` field of `checkout.session`, `payment_intent`, `charge`,
 * `refund`, `customer`, `event`; test/support/openapi/stripe-validator.ts checks them against the
 * vendored schemas). Amounts are integer cents, times Unix seconds, as Stripe's.
 */
import { randomBytes } from 'node:crypto';

/** A Stripe-style id: `cs_test_…`, `pi_…`. */
export function stripeId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** Now, Unix seconds. */
export const nowSec = (): number => Math.floor(Date.now() / 1000);

/** A Checkout Session (`object: checkout.session`). */
export interface CheckoutSession {
  id: string;
  object: 'checkout.session';
  mode: 'payment' | 'setup' | 'subscription';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  amount_subtotal: number;
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  customer: string | null;
  customer_email: string | null;
  customer_creation: 'always' | 'if_required' | null;
  payment_intent: string | null;
  metadata: Record<string, string>;
  success_url: string;
  cancel_url: string;
  url: string | null;
  created: number;
  expires_at: number;
  livemode: false;
  payment_method_types: string[];
  automatic_tax: { enabled: false; status: null };
  shipping_options: never[];
}

/** A new open Checkout Session for `amount` cents, paid on the stand-in's page at `pageUrl`. */
export function newCheckoutSession(input: {
  amount: number;
  currency: string;
  clientReferenceId: string | null;
  customer: string | null;
  customerEmail: string | null;
  metadata: Record<string, string>;
  successUrl: string;
  cancelUrl: string;
  pageBase: string;
  customerCreation: 'always' | 'if_required' | null;
}): CheckoutSession {
  const id = stripeId('cs_test');
  const created = nowSec();
  return {
    id,
    object: 'checkout.session',
    mode: 'payment',
    status: 'open',
    payment_status: 'unpaid',
    amount_subtotal: input.amount,
    amount_total: input.amount,
    currency: input.currency,
    client_reference_id: input.clientReferenceId,
    customer: input.customer,
    customer_email: input.customerEmail,
    customer_creation: input.customerCreation,
    payment_intent: null,
    metadata: input.metadata,
    success_url: input.successUrl,
    cancel_url: input.cancelUrl,
    url: `${input.pageBase}/pay/${id}`,
    created,
    expires_at: created + 24 * 3600,
    livemode: false,
    payment_method_types: ['card'],
    automatic_tax: { enabled: false, status: null },
    shipping_options: [],
  };
}

/** A Charge (`object: charge`), succeeded or failed. */
export function newCharge(input: {
  amount: number;
  currency: string;
  paymentIntent: string;
  customer: string | null;
  paymentMethod: string;
  receiptBase: string;
  failed?: boolean;
}): Record<string, unknown> {
  const id = stripeId('ch');
  return {
    id,
    object: 'charge',
    amount: input.amount,
    amount_captured: input.failed ? 0 : input.amount,
    amount_refunded: 0,
    billing_details: { address: null, email: null, name: null, phone: null },
    captured: !input.failed,
    created: nowSec(),
    currency: input.currency,
    customer: input.customer,
    disputed: false,
    livemode: false,
    metadata: {},
    paid: !input.failed,
    payment_intent: input.paymentIntent,
    payment_method: input.paymentMethod,
    receipt_url: `${input.receiptBase}/receipts/${id}`,
    refunded: false,
    refunds: { object: 'list', data: [], has_more: false, url: `/v1/charges/${id}/refunds` },
    status: input.failed ? 'failed' : 'succeeded',
  };
}

/** A PaymentIntent (`object: payment_intent`). */
export function newPaymentIntent(input: {
  amount: number;
  currency: string;
  customer: string | null;
  paymentMethod: string | null;
  metadata: Record<string, string>;
  setupFutureUsage: string | null;
}): Record<string, unknown> {
  return {
    id: stripeId('pi'),
    object: 'payment_intent',
    amount: input.amount,
    amount_capturable: 0,
    amount_received: 0,
    capture_method: 'automatic',
    confirmation_method: 'automatic',
    created: nowSec(),
    currency: input.currency,
    customer: input.customer,
    latest_charge: null,
    last_payment_error: null,
    livemode: false,
    metadata: input.metadata,
    payment_method: input.paymentMethod,
    payment_method_types: ['card'],
    setup_future_usage: input.setupFutureUsage,
    status: 'requires_payment_method',
  };
}

/** A Customer (`object: customer`). */
export function newCustomer(input: { email: string | null; metadata: Record<string, string> }): Record<string, unknown> {
  return {
    id: stripeId('cus'),
    object: 'customer',
    created: nowSec(),
    email: input.email,
    livemode: false,
    metadata: input.metadata,
    invoice_settings: { default_payment_method: null },
  };
}

/** A Refund (`object: refund`) of `amount` cents of a charge. */
export function newRefund(input: { amount: number; currency: string; charge: string; paymentIntent: string | null }): Record<string, unknown> {
  return {
    id: stripeId('re'),
    object: 'refund',
    amount: input.amount,
    charge: input.charge,
    created: nowSec(),
    currency: input.currency,
    metadata: {},
    payment_intent: input.paymentIntent,
    status: 'succeeded',
  };
}

/** An Event (`object: event`) around `object`. */
export function newEvent(type: string, object: unknown, apiVersion: string | null): Record<string, unknown> {
  return {
    id: stripeId('evt'),
    object: 'event',
    api_version: apiVersion,
    created: nowSec(),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** Stripe's error body (`{error: {type, message, param?, code?}}`). */
export function stripeError(
  type: 'invalid_request_error' | 'card_error' | 'api_error',
  message: string,
  extra: Record<string, unknown> = {},
): { error: Record<string, unknown> } {
  return { error: { type, message, ...extra } };
}

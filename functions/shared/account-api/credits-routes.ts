/**
 * Buying credit: `POST /v1/credits/checkout {amount_usd}` → `{id, url}` of a Stripe Checkout Session
 * the dashboard sends the user to, and `GET /v1/credits/purchases` (top-ups, auto top-ups, refunds and
 * disputes, with Stripe's receipt links). Credit is added only by Stripe's signed webhook
 * (stripe-webhook-route.ts), never by the browser coming back. The fee is already in the displayed
 * token prices, so $10 paid is $10 of credit.
 */
import * as z from '../validation/zod';
import { publicBaseUrl } from '../http/public-url';
import type { GatewayRequest, JsonResult } from '../http/types';
import { GatewayError, InvalidRequestError } from '../errors/gateway-errors';
import { parseJsonBody } from '../openai/parse-body';
import { listPayments } from '../payments/payment-ledger';
import { requireStripe } from '../payments/stripe-client';
import type { AccountCaller } from './caller';
import { json, usd } from './json';

/** Smallest top-up, USD (OpenRouter's minimum purchase is $5). */
export const MIN_TOP_UP_USD = 5;
/** Largest top-up in one payment, USD (larger amounts: several payments or the operator). */
export const MAX_TOP_UP_USD = 10_000;

const checkoutBody = z.strictObject({ amount_usd: z.number(), setup_future_usage: z.optional(z.literal('off_session')) });

/**
 * USD (JSON number) → integer cents.
 * @throws InvalidRequestError (400, param `amount_usd`) below the minimum, above the maximum, or with
 *         fractions of a cent.
 */
export function topUpCents(amountUsd: number): number {
  const cents = Math.round(amountUsd * 100);
  if (!Number.isFinite(amountUsd) || Math.abs(cents - amountUsd * 100) > 1e-6) {
    throw new InvalidRequestError('`amount_usd` must be a dollar amount with at most 2 decimals.', { param: 'amount_usd', code: 'invalid_value' });
  }
  if (amountUsd < MIN_TOP_UP_USD || amountUsd > MAX_TOP_UP_USD) {
    throw new InvalidRequestError(`\`amount_usd\` must be from $${MIN_TOP_UP_USD} to $${MAX_TOP_UP_USD.toLocaleString('en-US')}.`, {
      param: 'amount_usd',
      code: 'invalid_value',
    });
  }
  return cents;
}

/**
 * `POST /v1/credits/checkout {amount_usd, setup_future_usage?: "off_session"}` → `{id, url}`: a
 * Checkout Session in `payment` mode for `amount_usd` of credit, `client_reference_id` = the account
 * id, the dashboard's credits page as success and cancel URL (docs.stripe.com/api/checkout/sessions/create);
 * `setup_future_usage: off_session` saves the card for auto top-up (the webhook remembers it).
 * @throws NotFoundError (404 `payments_not_enabled`) without Stripe; InvalidRequestError (400);
 *         GatewayError 502 `payment_provider_error` when Stripe refuses or cannot be reached.
 */
export async function checkoutRoute(caller: AccountCaller, req: GatewayRequest): Promise<JsonResult> {
  const { stripe } = await requireStripe();
  const body = parseJsonBody(req.body, checkoutBody);
  const cents = topUpCents(body.amount_usd);
  // Saving the card for auto top-up: Stripe attaches it to a new Customer (docs.stripe.com/payments/checkout/save-during-payment).
  const save = body.setup_future_usage === 'off_session';
  const back = `${publicBaseUrl(req)}/#/credits`;
  const metadata = { modelmux_account: caller.accountId, modelmux_kind: 'top_up' };
  const session = await stripe.checkout.sessions
    .create({
      mode: 'payment',
      client_reference_id: caller.accountId,
      ...(caller.email === undefined ? {} : { customer_email: caller.email }),
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: 'usd',
            unit_amount: cents,
            product_data: { name: 'modelmux credit', description: `$${(cents / 100).toFixed(2)} of prepaid credit for the modelmux API` },
          },
        },
      ],
      metadata,
      ...(save ? { customer_creation: 'always' as const } : {}),
      payment_intent_data: { metadata, ...(save ? { setup_future_usage: 'off_session' as const } : {}) },
      success_url: back,
      cancel_url: back,
    })
    .catch((err: unknown) => {
      throw new GatewayError(502, 'server_error', `The payment provider could not start a checkout: ${(err as Error).message}`, {
        code: 'payment_provider_error',
        cause: err,
      });
    });
  if (session.url === null) throw new Error(`Stripe returned Checkout Session ${session.id} without a url`);
  return json({ id: session.id, url: session.url });
}

/**
 * `GET /v1/credits/purchases` → `{data: [{id, kind, amount, amount_nano_usd, created_at, receipt_url,
 * stripe_id}]}`, newest first (at most 100): kind `top_up`, `auto_top_up`, `refund` (amount: minus the
 * charge's total refunded so far), `dispute`.
 */
export async function purchasesRoute(caller: AccountCaller): Promise<JsonResult> {
  const entries = await listPayments(caller.accountId);
  return json({
    data: entries.map((e) => ({
      id: e.requestId,
      kind: e.kind,
      amount: usd(e.amountNanoUsd),
      amount_nano_usd: e.amountNanoUsd,
      created_at: e.createdAt,
      receipt_url: e.receiptUrl ?? null,
      stripe_id: e.stripeId,
    })),
  });
}

/**
 * The balance settings of the account API: auto top-up and the low-balance email.
 *
 * `GET|PUT /v1/credits/auto-top-up` — body (PUT) `{enabled, threshold_usd, amount_usd, monthly_cap_usd}`;
 * answer `{data:{enabled, paused, paused_reason, threshold_usd, amount_usd, monthly_cap_usd,
 * month_to_date_usd, payment_method, low_balance_alert_usd}}` (`payment_method`: `{id, customer}` of
 * the card saved by a Checkout with `setup_future_usage: off_session`, or null). Turning it on needs a
 * saved card (400 `no_saved_card`) and clears a pause. `amount_usd` is a top-up amount (the checkout's
 * minimum and maximum); `monthly_cap_usd` ≥ `amount_usd`.
 *
 * `PUT /v1/credits/alerts {low_balance_usd: number | null}` — the low-balance email's threshold (null:
 * none); answers like the GET above.
 */
import * as z from '../validation/zod';
import { usdToNanoUsd } from '../money/money';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError } from '../errors/gateway-errors';
import { parseJsonBody } from '../openai/parse-body';
import { readBalanceWatch, saveAutoTopUp, saveLowBalanceAlert } from '../payments/auto-top-up';
import { requireStripe } from '../payments/stripe-client';
import type { AccountCaller } from './caller';
import { topUpCents, MAX_TOP_UP_USD } from './credits-routes';
import { json, usd } from './json';

const autoTopUpBody = z.strictObject({ enabled: z.boolean(), threshold_usd: z.number(), amount_usd: z.number(), monthly_cap_usd: z.number() });
const alertsBody = z.strictObject({ low_balance_usd: z.nullable(z.number()) });

/** A threshold in USD → nano-USD (0 to the largest top-up). @throws InvalidRequestError (400, `param`). */
function thresholdNanoUsd(value: number, param: string): number {
  if (!Number.isFinite(value) || value < 0 || value > MAX_TOP_UP_USD)
    throw new InvalidRequestError(`\`${param}\` must be from 0 to ${MAX_TOP_UP_USD}.`, { param, code: 'invalid_value' });
  return usdToNanoUsd(value.toFixed(9).replace(/\.?0+$/, ''));
}

/** `GET /v1/credits/auto-top-up`. */
export async function getAutoTopUpRoute(caller: AccountCaller): Promise<JsonResult> {
  const w = await readBalanceWatch(caller.accountId);
  const a = w?.autoTopUp;
  return json({
    data: {
      enabled: a?.enabled === true,
      paused: a?.pausedAt !== undefined,
      paused_reason: a?.pausedReason ?? null,
      threshold_usd: a === undefined ? null : usd(a.thresholdNanoUsd),
      amount_usd: a === undefined ? null : a.amountCents / 100,
      monthly_cap_usd: a === undefined ? null : a.monthlyCapCents / 100,
      month_to_date_usd: (w?.monthCents ?? 0) / 100,
      payment_method: w?.paymentMethodId === undefined ? null : { id: w.paymentMethodId, customer: w.customerId ?? null },
      low_balance_alert_usd: w?.lowBalanceNanoUsd === undefined ? null : usd(w.lowBalanceNanoUsd),
    },
  });
}

/**
 * `PUT /v1/credits/auto-top-up`.
 * @throws NotFoundError (404 `payments_not_enabled`); InvalidRequestError (400).
 */
export async function putAutoTopUpRoute(caller: AccountCaller, req: GatewayRequest): Promise<JsonResult> {
  await requireStripe();
  const body = parseJsonBody(req.body, autoTopUpBody);
  const amountCents = topUpCents(body.amount_usd);
  const monthlyCapCents = Math.round(body.monthly_cap_usd * 100);
  if (!Number.isFinite(body.monthly_cap_usd) || monthlyCapCents < amountCents || monthlyCapCents > 100 * MAX_TOP_UP_USD * 31) {
    throw new InvalidRequestError('`monthly_cap_usd` must be at least `amount_usd`.', { param: 'monthly_cap_usd', code: 'invalid_value' });
  }
  const threshold = thresholdNanoUsd(body.threshold_usd, 'threshold_usd');
  if (body.enabled && (await readBalanceWatch(caller.accountId))?.paymentMethodId === undefined) {
    throw new InvalidRequestError(
      'Auto top-up needs a saved card: add credit once with "Save this card for auto top-up" (`setup_future_usage: "off_session"`).',
      { param: 'enabled', code: 'no_saved_card' },
    );
  }
  await saveAutoTopUp(caller.accountId, { enabled: body.enabled, thresholdNanoUsd: threshold, amountCents, monthlyCapCents });
  return getAutoTopUpRoute(caller);
}

/** `PUT /v1/credits/alerts`. @throws InvalidRequestError (400). */
export async function putAlertsRoute(caller: AccountCaller, req: GatewayRequest): Promise<JsonResult> {
  const body = parseJsonBody(req.body, alertsBody);
  await saveLowBalanceAlert(caller.accountId, body.low_balance_usd === null ? undefined : thresholdNanoUsd(body.low_balance_usd, 'low_balance_usd'));
  return getAutoTopUpRoute(caller);
}

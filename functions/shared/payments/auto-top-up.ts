/**
 * Auto top-up: the settings on the account's root item (billing/account-state.ts),
 * the charge of one crossing, and its failure. A crossing was claimed by ONE conditional marker write
 * (billing/balance-watch.ts); its charge is an off-session PaymentIntent on the saved card
 * (docs.stripe.com/payments/save-and-reuse, "charge the saved payment method later") created with the
 * Stripe idempotency key `modelmux_auto_top_up_<account>_<crossing>`, so a retried message, a crashed
 * function or a stale marker started again can never charge twice (docs.stripe.com/api/idempotent_requests).
 * Credit arrives only from the `payment_intent.succeeded` webhook (payment-ledger.ts), which also clears
 * the marker. A decline — at creation (a `card_error`) or by `payment_intent.payment_failed` — pauses
 * auto top-up, gives the month's amount back to the cap and emails the user, once per crossing.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type Stripe from 'stripe';
import { autoTopUpOf, balanceWatchOf, type AutoTopUpSettings, type BalanceWatch } from '../billing/account-state';
import type { BalanceAction } from '../billing/balance-watch';
import { notifyAccount } from '../notify/account-emails';
import { logger } from '../observability/logger';
import { UpdateBuilder } from '../store/update-builder';
import { stripeSetup } from './stripe-client';
import { readAccountItem, updateAccountItem } from '../store/account-item';

/** `metadata.modelmux_kind` of an auto top-up's PaymentIntent (the webhook credits these). */
export const AUTO_TOP_UP_KIND = 'auto_top_up';

/** The Stripe idempotency key of crossing `seq` of `accountId`. */
export function autoTopUpIdempotencyKey(accountId: string, seq: number): string {
  return `modelmux_auto_top_up_${accountId}_${seq}`;
}

/**
 * Charges one claimed crossing: an off-session, confirmed PaymentIntent for `amountCents` on the saved
 * card. A decline pauses auto top-up and emails the user (see the file comment).
 * @throws the Stripe SDK's error for anything but a decline (network, 5xx, rate limit): the message is
 *   delivered again and the same idempotency key replays or completes the same PaymentIntent.
 */
export async function chargeAutoTopUp(action: Extract<BalanceAction, { kind: 'auto_top_up' }>): Promise<'created' | 'declined' | 'disabled'> {
  const setup = await stripeSetup();
  if (setup === undefined) {
    logger.warn('auto top-up skipped: payments are not configured', { accountId: action.accountId });
    await pauseAutoTopUp({ ...action, reason: 'Payments are not enabled on this deployment.' });
    return 'disabled';
  }
  try {
    const intent = await setup.stripe.paymentIntents.create(
      {
        amount: action.amountCents,
        currency: 'usd',
        customer: action.customerId,
        payment_method: action.paymentMethodId,
        off_session: true,
        confirm: true,
        description: 'modelmux auto top-up',
        metadata: { modelmux_account: action.accountId, modelmux_kind: AUTO_TOP_UP_KIND, modelmux_seq: String(action.seq), modelmux_month: action.month },
      },
      { idempotencyKey: autoTopUpIdempotencyKey(action.accountId, action.seq) },
    );
    logger.info('auto top-up charged', { accountId: action.accountId, seq: action.seq, paymentIntentId: intent.id, status: intent.status });
    return 'created';
  } catch (err) {
    if ((err as Stripe.errors.StripeError).type !== 'StripeCardError') throw err;
    await failAutoTopUp({ ...action, reason: (err as Error).message });
    return 'declined';
  }
}

/** A failed payment of crossing `seq`: pause, give the amount back to the month's cap, email — once. */
export async function failAutoTopUp(input: { accountId: string; seq: number; month: string; amountCents: number; reason: string }): Promise<void> {
  if (await pauseAutoTopUp(input)) await notifyAccount(input.accountId, { kind: 'auto_top_up_failed', amountCents: input.amountCents, reason: input.reason });
}

/**
 * Pauses auto top-up for crossing `seq`, if it is still the one in flight (so a decline seen both at
 * creation and by the webhook acts once). True when this call paused it.
 * @throws StoreUnavailableError (503).
 */
async function pauseAutoTopUp(input: { accountId: string; seq: number; month: string; amountCents: number; reason: string }): Promise<boolean> {
  const b = new UpdateBuilder();
  b.set(
    `${b.path('autoTopUp', 'pausedAt')} = ${b.value(new Date().toISOString())}, ${b.path('autoTopUp', 'pausedReason')} = ${b.value(input.reason.slice(0, 300))}`,
  );
  b.add(b.name(input.month), -input.amountCents);
  b.remove(b.name('autoTopUpPendingAt'));
  b.when(
    `attribute_exists(${b.name('autoTopUp')}) AND attribute_exists(${b.name('autoTopUpPendingAt')}) AND ${b.name('autoTopUpSeq')} = ${b.value(input.seq)}`,
  );
  try {
    await updateAccountItem(input.accountId, b.build());
    logger.warn('auto top-up failed and is paused', { accountId: input.accountId, seq: input.seq, reason: input.reason });
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/** The account's balance settings as stored (consistent read), or undefined when the account is gone. */
export async function readBalanceWatch(accountId: string): Promise<BalanceWatch | undefined> {
  const item = await readAccountItem(accountId, { consistent: true });
  return item === undefined ? undefined : balanceWatchOf(item);
}

/**
 * Stores the auto top-up settings (turning it on again clears a pause). Returns the settings stored.
 * @throws StoreUnavailableError (503); ConditionalCheckFailedException when the account is gone.
 */
export async function saveAutoTopUp(accountId: string, settings: Omit<AutoTopUpSettings, 'pausedAt' | 'pausedReason'>): Promise<AutoTopUpSettings> {
  const attributes = await updateAccountItem(accountId, {
    UpdateExpression: 'SET autoTopUp = :s',
    ConditionExpression: 'attribute_exists(accountId)',
    ExpressionAttributeValues: { ':s': settings },
    ReturnValues: 'UPDATED_NEW',
  });
  return autoTopUpOf(attributes?.autoTopUp) ?? { ...settings };
}

/**
 * Stores (or, with undefined, removes) the low-balance email's threshold, nano-USD; a new threshold
 * starts a new crossing.
 * @throws StoreUnavailableError (503); ConditionalCheckFailedException when the account is gone.
 */
export async function saveLowBalanceAlert(accountId: string, thresholdNanoUsd: number | undefined): Promise<void> {
  await updateAccountItem(accountId, {
    UpdateExpression: thresholdNanoUsd === undefined ? 'REMOVE lowBalanceNanoUsd, lowBalanceAlertAt' : 'SET lowBalanceNanoUsd = :t REMOVE lowBalanceAlertAt',
    ConditionExpression: 'attribute_exists(accountId)',
    ...(thresholdNanoUsd === undefined ? {} : { ExpressionAttributeValues: { ':t': thresholdNanoUsd } }),
  });
}

/** Runs a crossing's follow-up (the settle function's `runBalance`). @throws to be retried (see chargeAutoTopUp). */
export async function runBalanceAction(action: BalanceAction): Promise<void> {
  switch (action.kind) {
    case 'auto_top_up':
      await chargeAutoTopUp(action);
      return;
    case 'low_balance':
      await notifyAccount(action.accountId, { kind: 'low_balance', creditNanoUsd: action.creditNanoUsd, thresholdNanoUsd: action.thresholdNanoUsd });
      return;
    case 'key_limit':
      await notifyAccount(action.accountId, { kind: 'key_limit', keyHash: action.keyHash, limitNanoUsd: action.limitNanoUsd, leftNanoUsd: action.leftNanoUsd });
  }
}

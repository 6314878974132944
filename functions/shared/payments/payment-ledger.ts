/**
 * Money that comes from Stripe, written to the ledger as entries of their own kind beside the
 * requests' entries (DATA-MODEL §4): `top_up` (Checkout), `auto_top_up` (an off-session
 * PaymentIntent), `refund`, `dispute`. Each entry and the change to the account's credit are ONE
 * DynamoDB transaction whose condition is the entry's key, so a webhook delivered twice, ten times at
 * once, or out of order moves the money once; Σ of the ledger (payments minus request costs) always
 * equals the account's balance change, to the nano-dollar.
 *
 * Keys: sk `pay_<13-digit ms>_<stripe id>` (the Stripe object's own `created`, so every delivery of
 * it names the same entry); payments sort before requests (`req_…`) and are listed with one Query.
 * Credit lands on the bank (shard 0, billing/shards.ts). A marker item `stripePayment#<payment intent>`
 * on the accounts table, written in the same transaction, finds the account of a later refund or
 * dispute (Stripe's Charge does not carry the PaymentIntent's metadata).
 */
import { GetCommand, QueryCommand } from '../store/dynamo-commands';
import * as z from '../validation/zod';
import { readState } from '../billing/account-state';
import { NANO_USD_PER_USD } from '../money/money';
import { gatherInto } from '../billing/shards';
import { ACCOUNT_EXISTS, ACCOUNT_EXISTS_AND_CREDIT_FITS, PAYMENT_ENTRY_IS_NEW, REFUND_ENTRY_UNCHANGED } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite, type TransactItems } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { atOnce, retrying, TryAgain } from '../retry/retry';
import { accountPutItem, accountUpdateItem, readAccountItem } from '../store/account-item';

/** nano-USD in one US cent (Stripe amounts are integer cents for USD). */
export const NANO_USD_PER_CENT = NANO_USD_PER_USD / 100;

/** Ledger sort keys of payment entries start with this (requests' start with `req_`). */
export const PAYMENT_ENTRY_PREFIX = 'pay_';

/** A stored payment entry. Amounts signed: credit positive, refunds and disputes negative. */
export const paymentEntrySchema = z.object({
  accountId: z.string(),
  requestId: z.string(),
  kind: z.enum(['top_up', 'auto_top_up', 'refund', 'dispute']),
  /** Signed, nano-USD (a refund entry: minus the charge's cumulative refunded amount). */
  amountNanoUsd: z.number().check(z.int()),
  /** Unsigned, cents, as Stripe reported it. */
  amountCents: z.number().check(z.int(), z.nonnegative()),
  /** The Stripe object: Checkout Session, PaymentIntent, Charge (refunds) or Dispute id. */
  stripeId: z.string(),
  paymentIntentId: z.optional(z.string()),
  receiptUrl: z.optional(z.string()),
  /** ISO 8601: the Stripe object's creation time. */
  createdAt: z.string(),
});

/** A stored payment entry. */
export type PaymentEntry = z.infer<typeof paymentEntrySchema>;

/** The sort key of the entry for Stripe object `stripeId` created at `createdSec` (Unix seconds, Stripe's `created`). */
export function paymentEntryId(createdSec: number, stripeId: string): string {
  return `${PAYMENT_ENTRY_PREFIX}${String(Math.max(0, Math.trunc(createdSec * 1000))).padStart(13, '0')}_${stripeId}`;
}

/** The accounts-table item that maps a PaymentIntent to the account it credited. */
export function paymentMarkerId(paymentIntentId: string): string {
  return `stripePayment#${paymentIntentId}`;
}

/** A credit from Stripe (Checkout Session or auto top-up PaymentIntent). */
export interface CreditInput {
  accountId: string;
  kind: 'top_up' | 'auto_top_up';
  stripeId: string;
  /** Unix seconds (the Stripe object's `created`). */
  createdSec: number;
  amountCents: number;
  paymentIntentId?: string | undefined;
  receiptUrl?: string | undefined;
  /** The card to remember for auto top-up (a Checkout with `setup_future_usage: off_session`). */
  savedCard?: { customerId: string; paymentMethodId: string } | undefined;
}

/** What a webhook's write did. */
export type PaymentOutcome = 'applied' | 'duplicate' | 'no_account';

/**
 * Adds `amountCents` to the account's credit and lifetime purchases (so it leaves the free tier at
 * once), with its ledger entry and PaymentIntent marker, in one transaction conditioned on the entry
 * being new; the same transaction remembers a saved card and ends an auto top-up's crossing.
 * @returns `duplicate` when the entry exists (already credited), `no_account` when the account is gone.
 * @throws StoreUnavailableError (503).
 */
export async function creditPayment(input: CreditInput): Promise<PaymentOutcome> {
  const nanoUsd = input.amountCents * NANO_USD_PER_CENT;
  if (!Number.isSafeInteger(nanoUsd) || nanoUsd <= 0) return 'duplicate';
  const entry: PaymentEntry = {
    accountId: input.accountId,
    requestId: paymentEntryId(input.createdSec, input.stripeId),
    kind: input.kind,
    amountNanoUsd: nanoUsd,
    amountCents: input.amountCents,
    stripeId: input.stripeId,
    createdAt: new Date(input.createdSec * 1000).toISOString(),
    ...(input.paymentIntentId === undefined ? {} : { paymentIntentId: input.paymentIntentId }),
    ...(input.receiptUrl === undefined ? {} : { receiptUrl: input.receiptUrl }),
  };
  const card = input.savedCard;
  // The card is remembered for auto top-up; an auto top-up's credit ends its crossing (billing/balance-watch.ts).
  const set = card === undefined ? '' : ' SET stripeCustomerId = :customer, stripePaymentMethodId = :pm';
  const remove = input.kind === 'auto_top_up' ? ' REMOVE autoTopUpPendingAt' : '';
  const items: TransactItems = [
    { Put: { TableName: tableNames().ledger, Item: entry, ConditionExpression: PAYMENT_ENTRY_IS_NEW } },
    accountUpdateItem(input.accountId, {
      UpdateExpression: `ADD creditNanoUsd :amount, purchasedNanoUsd :amount${set}${remove}`,
      ConditionExpression: ACCOUNT_EXISTS_AND_CREDIT_FITS,
      ExpressionAttributeValues: {
        ':amount': nanoUsd,
        ':ceiling': Number.MAX_SAFE_INTEGER - nanoUsd,
        ...(card === undefined ? {} : { ':customer': card.customerId, ':pm': card.paymentMethodId }),
      },
    }),
  ];
  if (input.paymentIntentId !== undefined) {
    items.push(accountPutItem({ Item: { accountId: paymentMarkerId(input.paymentIntentId), owner: input.accountId, entryId: entry.requestId } }));
  }
  return writeOnce(items);
}

/**
 * Takes a dispute's amount out of credit once per dispute (`stripeId` = the dispute id). The balance
 * may go below zero: the account is then refused with a 402 until it is paid back (billing/hold-plan.ts).
 * @throws StoreUnavailableError (503).
 */
export async function debitDispute(input: {
  accountId: string;
  stripeId: string;
  createdSec: number;
  amountCents: number;
  paymentIntentId?: string | undefined;
}): Promise<PaymentOutcome> {
  const nanoUsd = input.amountCents * NANO_USD_PER_CENT;
  if (!Number.isSafeInteger(nanoUsd) || nanoUsd <= 0) return 'duplicate';
  const entry: PaymentEntry = {
    accountId: input.accountId,
    requestId: paymentEntryId(input.createdSec, input.stripeId),
    kind: 'dispute',
    amountNanoUsd: -nanoUsd,
    amountCents: input.amountCents,
    stripeId: input.stripeId,
    createdAt: new Date(input.createdSec * 1000).toISOString(),
    ...(input.paymentIntentId === undefined ? {} : { paymentIntentId: input.paymentIntentId }),
  };
  const outcome = await writeOnce([
    { Put: { TableName: tableNames().ledger, Item: entry, ConditionExpression: PAYMENT_ENTRY_IS_NEW } },
    debitAccount(input.accountId, nanoUsd),
  ]);
  return afterDebit(input.accountId, outcome);
}

/**
 * A charge's refunds: `amountRefundedCents` is Stripe's cumulative `amount_refunded`. The charge's
 * refund entry (`pay_<charge created>_<charge id>`) holds the cumulative amount taken back; only the
 * difference is debited, conditioned on the amount read, so duplicates, concurrent deliveries and an
 * older event arriving after a newer one take each refunded cent back exactly once.
 * @throws StoreUnavailableError (503).
 */
export async function debitRefund(input: {
  accountId: string;
  chargeId: string;
  createdSec: number;
  amountRefundedCents: number;
  paymentIntentId?: string | undefined;
}): Promise<PaymentOutcome> {
  const key = { accountId: input.accountId, requestId: paymentEntryId(input.createdSec, input.chargeId) };
  try {
    return await retrying(async () => {
      const out = await storeCall(() => documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: key, ConsistentRead: true })));
      const old = typeof out.Item?.amountCents === 'number' ? out.Item.amountCents : 0;
      const delta = input.amountRefundedCents - old;
      if (delta <= 0) return afterDebit(input.accountId, 'duplicate');
      const entry: PaymentEntry = {
        ...key,
        kind: 'refund',
        amountNanoUsd: -input.amountRefundedCents * NANO_USD_PER_CENT,
        amountCents: input.amountRefundedCents,
        stripeId: input.chargeId,
        createdAt: new Date(input.createdSec * 1000).toISOString(),
        ...(input.paymentIntentId === undefined ? {} : { paymentIntentId: input.paymentIntentId }),
      };
      const put =
        out.Item === undefined
          ? { Put: { TableName: tableNames().ledger, Item: entry, ConditionExpression: PAYMENT_ENTRY_IS_NEW } }
          : { Put: { TableName: tableNames().ledger, Item: entry, ConditionExpression: REFUND_ENTRY_UNCHANGED, ExpressionAttributeValues: { ':old': old } } };
      const outcome = await writeOnce([put, debitAccount(input.accountId, delta * NANO_USD_PER_CENT)]);
      if (outcome !== 'duplicate') return afterDebit(input.accountId, outcome);
      throw new TryAgain('refund entry moved'); // another delivery moved the entry since it was read: read it again
    }, atOnce(8));
  } catch (err) {
    if (err instanceof TryAgain) return 'duplicate';
    throw err;
  }
}

/**
 * After a refund or dispute (also a repeated delivery, in case the first stopped half-way): when the
 * debit left a sharded account's bank below zero, every shard's funds are gathered into the bank
 * (billing/shards.ts), so they pay the debt at once and what remains below zero is what the account
 * owes; its requests are then refused with the debt's 402 on whichever shard they land (shards.ts
 * `pickShard`, `refillShard`). An account of one item needs nothing: its only item is the bank.
 * @returns `outcome`, unchanged.
 * @throws StoreUnavailableError (503): Stripe delivers the event again and the gather runs again.
 */
async function afterDebit(accountId: string, outcome: PaymentOutcome): Promise<PaymentOutcome> {
  if (outcome === 'no_account') return outcome;
  const bank = await readState(accountId, { consistent: true });
  if (bank.shards > 1 && bank.creditNanoUsd < 0) await gatherInto(accountId, bank.shards, 0);
  return outcome;
}

function debitAccount(accountId: string, nanoUsd: number): TransactItems[number] {
  return accountUpdateItem(accountId, {
    UpdateExpression: 'ADD creditNanoUsd :debit',
    ConditionExpression: ACCOUNT_EXISTS,
    ExpressionAttributeValues: { ':debit': -nanoUsd },
  });
}

/** Runs a payment transaction: its first item is the entry (condition: the key), its second the account. */
async function writeOnce(items: TransactItems): Promise<PaymentOutcome> {
  try {
    await transactWrite(items);
    return 'applied';
  } catch (err) {
    const codes = cancellationCodes(err);
    if (codes?.[0] === 'ConditionalCheckFailed') return 'duplicate';
    if (codes?.[1] === 'ConditionalCheckFailed') return 'no_account';
    throw err;
  }
}

/**
 * The account a PaymentIntent credited (from its marker), or undefined when none did (yet: a refund or
 * dispute can arrive before the payment's own event).
 * @throws StoreUnavailableError (503).
 */
export async function accountOfPayment(paymentIntentId: string): Promise<string | undefined> {
  const marker = await readAccountItem(paymentMarkerId(paymentIntentId), { consistent: true });
  return typeof marker?.owner === 'string' ? marker.owner : undefined;
}

/**
 * The account's payment entries, newest first (one Query on its bank partition; at most `limit`).
 * @throws StoreUnavailableError (503).
 */
export async function listPayments(accountId: string, limit = 100): Promise<PaymentEntry[]> {
  const out = await storeCall(() =>
    documentClient().send(
      new QueryCommand({
        TableName: tableNames().ledger,
        KeyConditionExpression: 'accountId = :a AND begins_with(requestId, :p)',
        ExpressionAttributeValues: { ':a': accountId, ':p': PAYMENT_ENTRY_PREFIX },
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    ),
  );
  return (out.Items ?? []).map((i) => paymentEntrySchema.parse(i));
}

/**
 * The account emails: low balance, a key reaching its spend limit, an auto top-up that
 * failed. Each goes to the account's sign-in email (the root item's `email`; an account without one,
 * e.g. the operator's dev account, gets none), through {@link sendEmail}. Amounts are shown in USD.
 */
import { formatNanoUsd } from '../money/money';
import { config } from '../config/env';
import { readAccountItem } from '../store/account-item';
import { sendEmail, type EmailOutcome } from './email';

/** What an email is about, with its facts (nano-USD; cents where named). */
export type AccountNotice =
  | { kind: 'low_balance'; creditNanoUsd: number; thresholdNanoUsd: number }
  | { kind: 'key_limit'; keyHash: string; limitNanoUsd: number; leftNanoUsd: number }
  | { kind: 'auto_top_up_failed'; amountCents: number; reason: string };

/** Where the dashboard is, for "go to …" lines (`PUBLIC_BASE_URL`; none when unset). */
function dashboard(page: string): string {
  const base = config().PUBLIC_BASE_URL?.replace(/\/+$/, '').replace(/\/v1$/, '');
  return base === undefined ? `the dashboard's ${page} page` : `${base}/#/${page.toLowerCase()}`;
}

/** Subject and text of a notice. */
export function noticeText(n: AccountNotice): { subject: string; text: string } {
  switch (n.kind) {
    case 'low_balance':
      return {
        subject: `modelmux: your credit is below ${formatNanoUsd(n.thresholdNanoUsd)}`,
        text: `Your modelmux credit is ${formatNanoUsd(n.creditNanoUsd)}, below the ${formatNanoUsd(n.thresholdNanoUsd)} you asked to be told about.\nRequests stop with 402 once the credit cannot cover them. Add credit (or turn on auto top-up) at ${dashboard('Credits')}.\n\nYou get this once each time the credit falls below the threshold; change or remove it on the same page.\n`,
      };
    case 'key_limit':
      return {
        subject: 'modelmux: an API key reached its spend limit',
        text: `Your API key ${n.keyHash.slice(0, 8)}… has used its spend limit of ${formatNanoUsd(n.limitNanoUsd)} for this period (${formatNanoUsd(Math.max(0, n.leftNanoUsd))} left, too little for its next requests): they are refused with 402 until the limit resets or is raised.\nChange it at ${dashboard('Keys')}.\n`,
      };
    case 'auto_top_up_failed':
      return {
        subject: 'modelmux: auto top-up failed and is paused',
        text: `An automatic top-up of $${(n.amountCents / 100).toFixed(2)} could not be charged to your saved card: ${n.reason}\nAuto top-up is paused: no further charge will be tried. Update your card (buy credit with "Save this card for auto top-up") and turn auto top-up on again at ${dashboard('Credits')}.\n`,
      };
  }
}

/**
 * Emails `notice` to the account's sign-in address. Never throws for the mail itself (see sendEmail).
 * @throws StoreUnavailableError (503) when the account cannot be read.
 */
export async function notifyAccount(accountId: string, notice: AccountNotice): Promise<EmailOutcome | undefined> {
  const to = (await readAccountItem(accountId, { projection: 'email' }))?.email;
  if (typeof to !== 'string' || to === '') return undefined;
  return sendEmail({ to, ...noticeText(notice) });
}

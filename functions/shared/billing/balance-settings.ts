/**
 * What the account's root item carries for watching its balance (DATA-MODEL §2, issue 22): the auto
 * top-up settings and saved card, the low-balance alert threshold, and the markers that make each
 * crossing act once. A leaf module: billing's view (account-state.ts) reads it from every item it
 * sees, the account API writes the settings, the settle path and the webhook move the markers.
 *
 * Attributes (all optional; nano-USD unless named in cents):
 * - `autoTopUp` {enabled, thresholdNanoUsd, amountCents, monthlyCapCents, pausedAt?, pausedReason?};
 * - `stripeCustomerId`, `stripePaymentMethodId`: the card saved by a Checkout with
 *   `setup_future_usage: off_session` (set by the webhook);
 * - `autoTopUpSeq`: auto top-ups started so far (the crossing's number; Stripe idempotency key);
 * - `autoTopUpPendingAt`: epoch ms an auto top-up was started and not yet credited or failed;
 * - `autoTopUpCents_<YYYYMM>`: cents of auto top-ups started in that UTC month (the monthly cap);
 * - `lowBalanceNanoUsd`: the low-balance email's threshold; `lowBalanceAlertAt`: epoch ms it was sent
 *   for the current crossing (removed once the balance is back at or above the threshold);
 * - `keys.<h16>.limitAlertWindow`: the spend-limit window whose "limit reached" email was sent.
 */

/** The auto top-up settings as stored. */
export interface AutoTopUpSettings {
  enabled: boolean;
  /** Start a top-up when available credit falls under this (nano-USD). */
  thresholdNanoUsd: number;
  /** Each top-up (US cents). */
  amountCents: number;
  /** Auto top-ups started per UTC calendar month at most (US cents). */
  monthlyCapCents: number;
  /** ISO 8601, set when a payment failed: no top-up until the user turns it on again. */
  pausedAt?: string;
  pausedReason?: string;
}

/** The balance-watching state of a root account item. */
export interface BalanceWatch {
  autoTopUp: AutoTopUpSettings | undefined;
  customerId: string | undefined;
  paymentMethodId: string | undefined;
  /** Epoch ms of the auto top-up in flight, if any. */
  pendingAt: number | undefined;
  seq: number;
  /** Cents of auto top-ups started in the current UTC month. */
  monthCents: number;
  lowBalanceNanoUsd: number | undefined;
  lowBalanceAlertAt: number | undefined;
  /** Per key entry (`h16`): the window whose limit email was sent. */
  keyAlertWindows: Record<string, string>;
}

/** An auto top-up still pending after this long (ms) may be started again (same idempotency key). */
export const AUTO_TOP_UP_STALE_MS = 60 * 60_000;

/** A key has reached its spend limit when less than this share of the limit is left (or less than twice what its last request held). */
export const KEY_LIMIT_REACHED_SHARE = 0.01;

/** The attribute counting this month's auto top-ups (UTC `YYYYMM`). */
export function monthAttribute(at: number): string {
  const d = new Date(at);
  return `autoTopUpCents_${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The previous month's attribute (removed when this month's is first written). */
export function previousMonthAttribute(at: number): string {
  const d = new Date(at);
  return monthAttribute(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Reads the stored settings map, or undefined when absent or malformed. */
export function autoTopUpOf(raw: unknown): AutoTopUpSettings | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const thresholdNanoUsd = num(r.thresholdNanoUsd);
  const amountCents = num(r.amountCents);
  const monthlyCapCents = num(r.monthlyCapCents);
  if (thresholdNanoUsd === undefined || amountCents === undefined || monthlyCapCents === undefined) return undefined;
  const pausedAt = str(r.pausedAt);
  const pausedReason = str(r.pausedReason);
  return { enabled: r.enabled === true, thresholdNanoUsd, amountCents, monthlyCapCents, ...(pausedAt ? { pausedAt } : {}), ...(pausedReason ? { pausedReason } : {}) };
}

/** Reads the balance-watching state of an (unmarshalled) root item at `now` (epoch ms). */
export function balanceWatchOf(item: Record<string, unknown>, now = Date.now()): BalanceWatch {
  const keyAlertWindows: Record<string, string> = {};
  if (typeof item.keys === 'object' && item.keys !== null) {
    for (const [h16, entry] of Object.entries(item.keys as Record<string, unknown>)) {
      const w = str((entry as Record<string, unknown> | null)?.limitAlertWindow);
      if (w !== undefined) keyAlertWindows[h16] = w;
    }
  }
  return {
    autoTopUp: autoTopUpOf(item.autoTopUp),
    customerId: str(item.stripeCustomerId),
    paymentMethodId: str(item.stripePaymentMethodId),
    pendingAt: num(item.autoTopUpPendingAt),
    seq: num(item.autoTopUpSeq) ?? 0,
    monthCents: num(item[monthAttribute(now)]) ?? 0,
    lowBalanceNanoUsd: num(item.lowBalanceNanoUsd),
    lowBalanceAlertAt: num(item.lowBalanceAlertAt),
    keyAlertWindows,
  };
}

/**
 * The money and rate-limit state of one account item (a fund shard, DATA-MODEL §2 and §5) as billing
 * reads it, and this container's view of it: the last state read (a GetItem or a failed condition's
 * ALL_OLD), updated locally by this container's own holds and settles. The view only predicts: every
 * hold is a conditional write, so a stale view costs one failed attempt, never a wrong balance.
 *
 * Also here: what the root item carries for watching its balance (read from every item the view sees;
 * the account API writes the settings, the settle path and the webhook move the markers), and an
 * account's totals over its fund shards, as readers show them.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TtlCache } from '../store/ttl-cache';
import type { UpdateBuilder } from '../store/update-builder';
import { keyStateOf, shardPks, type KeyState as KeyEntry } from '../accounts/keys/key-account-entry';
import { isLeaseId } from '../http/request-id';
import { now } from '../time/clock';
import { decodeInlineHold, HOLDS_MAP, slotsOf } from './hold-record';
import { readAccountItem } from '../store/account-item';

/** Per-key state on the account item (`keys.<h16>`, accounts/keys/key-account-entry.ts), as billing reads it. Money in nano-USD. */
export type KeyState = KeyEntry & { heldNanoUsd: number };

/** One account item's billing state. Tokens and nano-USD. */
export interface ShardState {
  /** False when the item does not exist (the account is gone). */
  exists: boolean;
  freeTokens: number;
  creditNanoUsd: number;
  heldNanoUsd: number;
  /** Of `heldNanoUsd`, what credit leases hold (lease.ts): leased, not yet known to be spent. */
  leasedNanoUsd?: number;
  purchasedNanoUsd: number;
  /** Fund shards of the account (root item only; absent = 1). */
  shards: number;
  /** Live keys of the account (root item only). */
  keyCount?: number;
  rpmWindow?: number;
  rpmCount?: number;
  inflight?: number;
  /** Undefined on an item written before per-key state existed. */
  keys: Record<string, KeyState> | undefined;
  /** Holds in flight on the item that took a concurrency slot (hold-plan.ts frees the expired ones' slots). */
  slotHolds?: SlotHold[];
  /** Expiries (epoch ms) of the credit leases on the item (lease-reclaim.ts reconciles those long past). */
  leaseExpiries?: number[];
  /** Auto top-up, low-balance and spend-limit alert state (root item; {@link BalanceWatch}). */
  watch?: BalanceWatch;
}

/** A hold in flight that took a concurrency slot: its request id, expiry (epoch ms) and which slots. */
export interface SlotHold {
  requestId: string;
  expiresAt: number;
  accountSlot: boolean;
  /** The key entry (`h16`) whose slot it took, if it took one. */
  keySlot: string | undefined;
  /** Slots it took on each (a lease's grant; else 1). */
  slots: number;
}

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const opt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Reads a stored (unmarshalled) account item; `undefined` = no item. */
export function shardStateOf(item: Record<string, unknown> | undefined): ShardState {
  if (item === undefined) return { exists: false, freeTokens: 0, creditNanoUsd: 0, heldNanoUsd: 0, purchasedNanoUsd: 0, shards: 1, keys: undefined };
  const keysRaw = item.keys;
  let keys: Record<string, KeyState> | undefined;
  if (typeof keysRaw === 'object' && keysRaw !== null) {
    keys = {};
    for (const [h16, raw] of Object.entries(keysRaw as Record<string, unknown>)) {
      const entry = keyStateOf(raw);
      keys[h16] = { ...entry, heldNanoUsd: entry.heldNanoUsd ?? 0 };
    }
  }
  return {
    exists: true,
    freeTokens: num(item.freeTokens),
    creditNanoUsd: num(item.creditNanoUsd),
    heldNanoUsd: num(item.heldNanoUsd),
    leasedNanoUsd: opt(item.leasedNanoUsd),
    purchasedNanoUsd: num(item.purchasedNanoUsd),
    shards: Math.max(1, Math.floor(num(item.shards, 1))),
    keyCount: opt(item.keyCount),
    rpmWindow: opt(item.rpmWindow),
    rpmCount: opt(item.rpmCount),
    inflight: opt(item.inflight),
    keys,
    ...inlineHoldsOf(item[HOLDS_MAP]),
    watch: balanceWatchOf(item),
  };
}

/** What the item's inline holds tell billing: the holds that took slots, and the leases' expiries. */
function inlineHoldsOf(holds: unknown): { slotHolds: SlotHold[]; leaseExpiries?: number[] } {
  const slotHolds: SlotHold[] = [];
  const leaseExpiries: number[] = [];
  if (typeof holds !== 'object' || holds === null) return { slotHolds };
  for (const [requestId, value] of Object.entries(holds as Record<string, unknown>)) {
    const h = decodeInlineHold('', requestId, value);
    if (h === undefined) continue;
    if (isLeaseId(requestId)) leaseExpiries.push(h.holdExpiresAt);
    if (h.accountSlot || h.keySlot)
      slotHolds.push({ requestId, expiresAt: h.holdExpiresAt, accountSlot: h.accountSlot, keySlot: h.keySlot ? h.h16 : undefined, slots: slotsOf(h) });
  }
  return leaseExpiries.length > 0 ? { slotHolds, leaseExpiries } : { slotHolds };
}

/** A raw ALL_OLD item from a cancelled transaction (marshalled; lib-dynamodb leaves it so). */
export function unmarshallItem(item: unknown): Record<string, unknown> | undefined {
  if (typeof item !== 'object' || item === null || Object.keys(item).length === 0) return undefined;
  return unmarshall(item as Record<string, AttributeValue>);
}

/** A view entry: the state and when it was read (epoch ms, on the billing clock: a test ages a view by moving it). */
interface ViewEntry {
  state: ShardState;
  readAt: number;
}

/** Up to 1,000 account items per container (~1 KB each). */
const views = new TtlCache<string, ViewEntry>({ ttlMs: 10 * 60_000, maxEntries: 1_000 });

/** The view of an account item (pk), with its age; undefined when this container has none. */
export function viewOf(pk: string): ViewEntry | undefined {
  return views.get(pk);
}

/** Remembers `state` as read from the store now. */
export function rememberState(pk: string, state: ShardState): void {
  views.set(pk, { state, readAt: now() });
}

/** Applies a committed change to the view without making it younger. */
export function updateView(pk: string, change: (s: ShardState) => void): void {
  views.update(pk, (v) => {
    change(v.state);
    return v;
  });
}

/**
 * One change of a number on an account item, as data: the attribute's path from the item's root
 * (`['creditNanoUsd']`, `['keys', h16, 'leftNanoUsd']`) and the amount added (negative: taken; tokens or
 * nano-USD, as the attribute counts). A settle is a list of these (settle.ts `settleDeltas`), and the same
 * list gives both the DynamoDB update ({@link addDeltas}) and the container's view of the item
 * ({@link applyDeltasToView}), so the two cannot drift; test/billing/account-deltas.test.ts proves them
 * equal on DynamoDB Local.
 */
export interface AccountDelta {
  path: readonly string[];
  by: number;
}

/** Adds each delta to `b` as `path = if_not_exists(path, 0) + by` (an absent number counts as 0). */
export function addDeltas(b: UpdateBuilder, deltas: readonly AccountDelta[]): UpdateBuilder {
  for (const d of deltas) b.add(b.path(...d.path), d.by);
  return b;
}

/** Numbers the view starts at 0 when the item it was read from had none (as DynamoDB's `if_not_exists`). */
const VIEW_FROM_ZERO = new Set(['leasedNanoUsd']);

/**
 * Applies `deltas` to the view of item `pk` (without making it younger): each delta moves the number
 * at its path where the view holds one (the view keeps a subset of the item: ShardState), and
 * {@link VIEW_FROM_ZERO}'s from 0. No view, nothing to do.
 */
export function applyDeltasToView(pk: string, deltas: readonly AccountDelta[]): void {
  updateView(pk, (s) => {
    for (const d of deltas) {
      const parent = d.path.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], s) as Record<string, unknown> | undefined;
      const leaf = d.path.at(-1)!;
      const at = parent?.[leaf];
      if (typeof at === 'number') parent![leaf] = at + d.by;
      else if (parent !== undefined && d.path.length === 1 && VIEW_FROM_ZERO.has(leaf)) parent[leaf] = d.by;
    }
  });
}

/** Forgets every view (tests). */
export function clearViews(): void {
  views.clear();
}

/**
 * Reads an account item (eventually consistent unless asked: the hold's condition is the check, the
 * read only predicts) and remembers it.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function readState(pk: string, opts: { consistent?: boolean } = {}): Promise<ShardState> {
  const state = shardStateOf(await readAccountItem(pk, opts));
  if (state.exists) rememberState(pk, state);
  return state;
}

/*
 * Balance watching: what the account's root item carries for watching its balance (DATA-MODEL §2):
 * the auto top-up settings and saved card, the low-balance alert threshold, and the markers
 * that make each crossing act once (balance-watch.ts claims the crossings).
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

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Reads the stored settings map, or undefined when absent or malformed. */
export function autoTopUpOf(raw: unknown): AutoTopUpSettings | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const thresholdNanoUsd = opt(r.thresholdNanoUsd);
  const amountCents = opt(r.amountCents);
  const monthlyCapCents = opt(r.monthlyCapCents);
  if (thresholdNanoUsd === undefined || amountCents === undefined || monthlyCapCents === undefined) return undefined;
  const pausedAt = str(r.pausedAt);
  const pausedReason = str(r.pausedReason);
  return {
    enabled: r.enabled === true,
    thresholdNanoUsd,
    amountCents,
    monthlyCapCents,
    ...(pausedAt ? { pausedAt } : {}),
    ...(pausedReason ? { pausedReason } : {}),
  };
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
    pendingAt: opt(item.autoTopUpPendingAt),
    seq: opt(item.autoTopUpSeq) ?? 0,
    monthCents: opt(item[monthAttribute(now)]) ?? 0,
    lowBalanceNanoUsd: opt(item.lowBalanceNanoUsd),
    lowBalanceAlertAt: opt(item.lowBalanceAlertAt),
    keyAlertWindows,
  };
}

/*
 * Totals: an account's balances as readers show them (the account API, key info, the admin CLI): the
 * root item plus, for an account with fund shards (DATA-MODEL §5), every other shard item, summed.
 * Money moves only between an account's items, so the sums are exact at any instant each item was read.
 */

/** Sums over the account's items. Tokens and nano-USD. */
export interface AccountTotals {
  /** Free tokens available (not held). */
  freeTokens: number;
  heldFreeTokens: number;
  /** Credit available (not held). */
  creditNanoUsd: number;
  heldNanoUsd: number;
  /** Lifetime credit spent (Σ ledger costs: every settle ADDs it in its own transaction). */
  usedNanoUsd: number;
  usedFreeTokens: number;
}

/** The root's counters as read by the caller (an account item parsed by account-store.ts). */
export interface RootCounters extends AccountTotals {
  accountId: string;
  shards: number;
}

const FIELDS: ReadonlyArray<keyof AccountTotals> = ['freeTokens', 'heldFreeTokens', 'creditNanoUsd', 'heldNanoUsd', 'usedNanoUsd', 'usedFreeTokens'];

/**
 * The account's totals: the root's counters, plus the other shards' (read strongly consistent, in
 * parallel, projected to the counters) when it has more than one.
 * @throws StoreUnavailableError (503).
 */
export async function accountTotals(root: RootCounters): Promise<AccountTotals> {
  const totals = Object.fromEntries(FIELDS.map((f) => [f, root[f] ?? 0])) as unknown as AccountTotals;
  if (root.shards <= 1) return totals;
  const others = await Promise.all(
    shardPks(root.accountId, root.shards)
      .slice(1)
      .map((pk) => readAccountItem(pk, { projection: FIELDS.join(', '), consistent: true })),
  );
  for (const item of others) for (const f of FIELDS) totals[f] += typeof item?.[f] === 'number' ? (item[f] as number) : 0;
  return totals;
}

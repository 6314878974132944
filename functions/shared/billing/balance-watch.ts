/**
 * After a settle: did the account's balance cross a line the user drew? (An auto top-up,
 * a low-balance email, a key reaching its spend limit.) The check reads nothing: it looks at this
 * container's view of the root item (account-state.ts), which the settle just updated, and only when
 * the view says a line is crossed does it write — ONE conditional UpdateItem per crossing that holds the
 * real test (credit under the threshold, no top-up in flight, room under the monthly cap…), so however
 * many settles cross at once, in however many containers, exactly one wins. The winner hands the
 * follow-up ({@link BalanceAction}: the Stripe charge or an email) to `dispatch`: the request functions
 * queue it on the settle queue (they carry neither Stripe nor SES), the settle function runs it
 * (payments/balance-actions.ts). The view only predicts: a stale view costs a failed condition (its
 * ALL_OLD refreshes the view) or a crossing noticed at the next settle after the view's refresh.
 *
 * The balance judged is the credit not yet spent: `creditNanoUsd` plus what credit leases hold
 * (`leasedNanoUsd`, lease.ts): a lease moves a slice out of `creditNanoUsd` before any of it is spent,
 * so judging `creditNanoUsd` alone would cross a line early. A lease's spending becomes visible when it
 * is returned (its return runs this watch), so a crossing is seen at most a lease's life late.
 *
 * Only the root item (shard 0, the bank) is watched: top-ups land there, shards refill from it, and
 * keys with a spend limit are served by it (shards.ts).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import * as z from '../validation/zod';
import { logger } from '../observability/logger';
import {
  readState,
  rememberState,
  shardStateOf,
  unmarshallItem,
  updateView,
  viewOf,
  type ShardState,
  AUTO_TOP_UP_STALE_MS,
  KEY_LIMIT_REACHED_SHARE,
  monthAttribute,
  previousMonthAttribute,
} from './account-state';
import { UpdateBuilder } from '../store/update-builder';
import { updateAccountItem } from '../store/account-item';

/** A follow-up of a crossing, run by the settle function (a settle-queue message's `balance`). */
export const balanceActionSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('auto_top_up'),
    accountId: z.string(),
    /** The crossing's number: the Stripe idempotency key is derived from it. */
    seq: z.number().check(z.int(), z.positive()),
    amountCents: z.number().check(z.int(), z.positive()),
    customerId: z.string(),
    paymentMethodId: z.string(),
    /** The month attribute the amount was counted in (given back if the payment fails). */
    month: z.string(),
  }),
  z.object({ kind: z.literal('low_balance'), accountId: z.string(), creditNanoUsd: z.number(), thresholdNanoUsd: z.number() }),
  z.object({ kind: z.literal('key_limit'), accountId: z.string(), keyHash: z.string(), limitNanoUsd: z.number(), leftNanoUsd: z.number(), window: z.string() }),
]);

/** A follow-up of a crossing. */
export type BalanceAction = z.infer<typeof balanceActionSchema>;

/** Runs (or queues) a follow-up. */
export type BalanceDispatch = (action: BalanceAction) => Promise<void>;

/**
 * Acts on the crossings the account's root item shows after a settle. Never throws (it runs after the
 * answer; a failure is logged and the next settle looks again).
 * @param pk the settled item (a shard other than 0 is not watched).
 * @param opts `keyHash`: the settled request's key (its spend limit is checked); `heldNanoUsd`: what
 *   that request held (a key with less than twice that left, or less than 1% of its limit, has reached
 *   it: its next request or two will be refused); `read`: read the item when this container has no
 *   view of it (the settle function, which placed no hold).
 */
export async function watchBalance(pk: string, opts: { keyHash?: string; heldNanoUsd?: number; read?: boolean }, dispatch: BalanceDispatch): Promise<void> {
  if (pk.includes('#')) return;
  try {
    const state = viewOf(pk)?.state ?? (opts.read ? await readState(pk) : undefined);
    if (state?.watch === undefined || !state.exists) return;
    const now = Date.now();
    const top = autoTopUpWrite(pk, state, now);
    if (top !== undefined) await act(pk, top.builder, (item) => top.action(item), dispatch);
    const low = lowBalanceWrite(pk, state, now);
    if (low !== undefined) await act(pk, low.builder, () => low.action, dispatch);
    const key = opts.keyHash === undefined ? undefined : keyLimitWrite(pk, state, opts.keyHash, opts.heldNanoUsd ?? 0);
    if (key !== undefined) await act(pk, key.builder, () => key.action, dispatch);
  } catch (err) {
    logger.warn('balance watch failed; the next settle looks again', { accountId: pk, error: err as Error });
  }
}

type Planned<A> = { builder: UpdateBuilder; action: A };

/** The auto top-up's marker write, when the view shows credit under the threshold and nothing stops it. */
function autoTopUpWrite(pk: string, s: ShardState, now: number): Planned<(item: Record<string, unknown>) => BalanceAction> | undefined {
  const w = s.watch;
  const a = w?.autoTopUp;
  if (w === undefined || a === undefined || !a.enabled || a.pausedAt !== undefined || w.customerId === undefined || w.paymentMethodId === undefined)
    return undefined;
  if (unspent(s) >= a.thresholdNanoUsd) return undefined;
  const stale = w.pendingAt !== undefined && now - w.pendingAt > AUTO_TOP_UP_STALE_MS;
  if (w.pendingAt !== undefined && !stale) return undefined;
  if (!stale && w.monthCents + a.amountCents > a.monthlyCapCents) return undefined;
  const b = new UpdateBuilder();
  const month = monthAttribute(now);
  const settings = (attr: string) => b.path('autoTopUp', attr);
  b.set(`${b.name('autoTopUpPendingAt')} = ${b.value(now)}`);
  b.when(`${settings('enabled')} = ${b.value(true)} AND attribute_not_exists(${settings('pausedAt')})`);
  b.when(
    `${settings('thresholdNanoUsd')} = ${b.value(a.thresholdNanoUsd)} AND ${settings('amountCents')} = ${b.value(a.amountCents)} AND ${settings('monthlyCapCents')} = ${b.value(a.monthlyCapCents)}`,
  );
  b.when(`${unspentBelow(b, s, a.thresholdNanoUsd)} AND ${b.name('stripePaymentMethodId')} = ${b.value(w.paymentMethodId)}`);
  if (stale) {
    // The same crossing again (its charge was never confirmed): same number, same idempotency key, cap already counted.
    b.when(`${b.name('autoTopUpPendingAt')} = ${b.value(w.pendingAt)}`);
  } else {
    b.when(`attribute_not_exists(${b.name('autoTopUpPendingAt')})`);
    b.when(`attribute_not_exists(${b.name(month)}) OR ${b.name(month)} <= ${b.value(a.monthlyCapCents - a.amountCents)}`);
    b.add(b.name('autoTopUpSeq'), 1);
    b.add(b.name(month), a.amountCents);
    b.remove(b.name(previousMonthAttribute(now)));
  }
  return {
    builder: b,
    action: (item) => ({
      kind: 'auto_top_up',
      accountId: pk,
      seq: Number(item.autoTopUpSeq),
      amountCents: a.amountCents,
      customerId: w.customerId as string,
      paymentMethodId: w.paymentMethodId as string,
      month,
    }),
  };
}

/** The low-balance email's marker (or its removal once the balance is back at or above the threshold). */
function lowBalanceWrite(pk: string, s: ShardState, now: number): Planned<BalanceAction | undefined> | undefined {
  const w = s.watch;
  if (w === undefined) return undefined;
  const b = new UpdateBuilder();
  const threshold = w.lowBalanceNanoUsd;
  if (w.lowBalanceAlertAt !== undefined && (threshold === undefined || unspent(s) >= threshold)) {
    b.remove(b.name('lowBalanceAlertAt'));
    b.when(
      threshold === undefined
        ? `attribute_not_exists(${b.name('lowBalanceNanoUsd')})`
        : `${b.name('lowBalanceNanoUsd')} = ${b.value(threshold)} AND NOT (${unspentBelow(b, s, threshold)})`,
    );
    return { builder: b, action: undefined };
  }
  if (threshold === undefined || w.lowBalanceAlertAt !== undefined || unspent(s) >= threshold) return undefined;
  b.set(`${b.name('lowBalanceAlertAt')} = ${b.value(now)}`);
  b.when(
    `attribute_not_exists(${b.name('lowBalanceAlertAt')}) AND ${b.name('lowBalanceNanoUsd')} = ${b.value(threshold)} AND ${unspentBelow(b, s, threshold)}`,
  );
  return { builder: b, action: { kind: 'low_balance', accountId: pk, creditNanoUsd: unspent(s), thresholdNanoUsd: threshold } };
}

/** Credit not yet spent, as the view knows it: available + leased (nano-USD). */
function unspent(s: ShardState): number {
  return s.creditNanoUsd + (s.leasedNanoUsd ?? 0);
}

/**
 * The store's test of `credit + leased < threshold` (a condition cannot add two attributes): the
 * leased amount must still be the view's, and the credit under the threshold less it. A lease taken
 * or returned meanwhile fails it; the ALL_OLD refreshes the view and the next settle looks again.
 */
function unspentBelow(b: UpdateBuilder, s: ShardState, threshold: number): string {
  const leased = s.leasedNanoUsd ?? 0;
  const same =
    leased === 0
      ? `(attribute_not_exists(${b.name('leasedNanoUsd')}) OR ${b.name('leasedNanoUsd')} = ${b.value(0)})`
      : `${b.name('leasedNanoUsd')} = ${b.value(leased)}`;
  return `(${b.name('creditNanoUsd')} < ${b.value(threshold - leased)} AND ${same})`;
}

/** The "limit reached" marker of the settled request's key, once per spend-limit window. */
function keyLimitWrite(pk: string, s: ShardState, keyHash: string, heldNanoUsd: number): Planned<BalanceAction> | undefined {
  const h16 = keyHash.slice(0, 16);
  const key = s.keys?.[h16];
  const { limitNanoUsd, leftNanoUsd, window } = key ?? {};
  if (limitNanoUsd === undefined || leftNanoUsd === undefined || window === undefined) return undefined;
  const edge = Math.max(Math.floor(limitNanoUsd * KEY_LIMIT_REACHED_SHARE), 2 * heldNanoUsd);
  if (leftNanoUsd > edge || s.watch?.keyAlertWindows[h16] === window) return undefined;
  const b = new UpdateBuilder();
  const field = (attr: string) => b.path('keys', h16, attr);
  const w = b.value(window);
  b.set(`${field('limitAlertWindow')} = ${w}`);
  b.when(
    `${field('window')} = ${w} AND ${field('leftNanoUsd')} <= ${b.value(edge)} AND (attribute_not_exists(${field('limitAlertWindow')}) OR ${field('limitAlertWindow')} <> ${w})`,
  );
  return { builder: b, action: { kind: 'key_limit', accountId: pk, keyHash, limitNanoUsd, leftNanoUsd, window } };
}

/** One marker write: when it wins, the view learns it and the follow-up is dispatched; when it loses, the view is refreshed. */
async function act(
  pk: string,
  b: UpdateBuilder,
  action: (item: Record<string, unknown>) => BalanceAction | undefined,
  dispatch: BalanceDispatch,
): Promise<void> {
  let item: Record<string, unknown>;
  try {
    item = (await updateAccountItem(pk, { ...b.build(), ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })) ?? {};
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    const old = unmarshallItem(err.Item);
    if (old !== undefined) rememberState(pk, shardStateOf(old));
    return;
  }
  const after = shardStateOf(item);
  updateView(pk, (s) => {
    s.watch = after.watch;
  });
  const follow = action(item);
  if (follow !== undefined) await dispatch(follow);
}

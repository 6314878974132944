/**
 * What a hold takes from one account item, decided from a state (the container's view, or the
 * ALL_OLD of a failed attempt) — a pure function, so the refusal a client sees is computed from the
 * store's own numbers, and is unit-tested — and the ONE write that takes it.
 *
 * Money rules: free tokens pay first, prompt before completion (money/price.ts); the rest is credit,
 * priced at the highest displayed price among the request's targets. A key's USD spend limit counts
 * credit only (free tokens are not money). Rate limits: fixed epoch-minute window and in-flight count,
 * per account item and per key (rate-limit.ts).
 *
 * The write ({@link holdUpdate}) is a conditional UpdateItem of the account item (or fund shard) under
 * conditions that cannot over-commit (each clause and its invariant: docs/DATA-MODEL.md §4), which
 * also SETs the hold's compact inline record `holds.<requestId>` (hold-record.ts, encodeInlineHold)
 * under HOLD_IS_NEW, and marks the item for the orphan sweep's sparse index (hold-record.ts
 * `markPendingHolds`; an index write only when the mark is new). No ledger item is written until the
 * settle. 1 WRU while the account item is ≤ 1 KB (a non-transactional write of an item costs 1 WRU per
 * KB of the larger of its old and new image). It asks for ALL_OLD on a failed condition, so a refusal
 * or a stale prediction is answered from the store's own numbers with no extra read.
 */
import { AuthenticationError, InsufficientCreditError, type GatewayError } from '../errors/gateway-errors';
import { windowEnd, windowId } from '../accounts/keys/key-account-entry';
import { formatNanoUsd } from '../money/money';
import { computeCharge } from '../money/price';
import type { RateLimits } from '../config/env';
import { isLeaseId } from '../http/request-id';
import { HOLD_IS_NEW } from '../store/conditions';
import type { AccountUpdate } from '../store/account-item';
import { UpdateBuilder } from '../store/update-builder';
import type { KeyState, ShardState, SlotHold } from './account-state';
import { encodeInlineHold, HOLDS_MAP, keyEntryId, markPendingHolds, type HoldRecord } from './hold-record';
import { epochMinute, MINUTE_MS, RateLimitError, type RpmBranch } from './rate-limit';

/** The most one request can cost, in tokens and prices (µUSD per 1M tokens). */
export interface HoldDemand {
  /** Prompt tokens reserved (our bound, media included). */
  promptTokens: number;
  /** Output tokens reserved: n × the output limit sent upstream. */
  outputTokens: number;
  /** Output limit per choice sent upstream (tokens), for the 402 message. */
  outputLimitPerChoice: number;
  /** Choices asked for (`n`). */
  choices: number;
  inputPrice: number;
  outputPrice: number;
}

/** How the key's spend limit is written. */
export type KeyLimitPart = { kind: 'none' } | { kind: 'same'; limit: number; window: string } | { kind: 'roll'; limit: number; window: string };

/** One hold, ready to be written. Tokens and nano-USD. */
export interface HoldSpec {
  freeTokens: number;
  nanoUsd: number;
  /** The hold takes every free token the item has: condition `freeTokens = :f`, not `>=`. */
  takeAllFree: boolean;
  keyLimit: KeyLimitPart;
  accountRpm: RpmBranch;
  accountSlot: number | undefined;
  keyRpm: RpmBranch;
  keySlot: number | undefined;
  /** Concurrency slots taken on each counter (1; a lease's grant). */
  slots: number;
  /**
   * Holds past their expiry whose slots this hold may reuse (crashed functions, not yet swept): the
   * write requires each to still be there, and allows `inflight` as many above the limit as they hold.
   */
  accountStale?: StaleSlots;
  keyStale?: StaleSlots;
}

/** Expired holds whose slots a hold reuses: their ids and the slots they hold in all. */
export interface StaleSlots {
  ids: string[];
  slots: number;
}

/** What a credit lease asks of the rate limits (lease.ts): up to this many request-rate units and slots. */
export interface RateGrant {
  rpm: number;
  slots: number;
}

/** Most expired holds' slots one hold write reuses (each adds a condition to the write). */
export const MAX_STALE_SLOTS = 16;

/** The plan: a spec, or the client's refusal, or a key entry missing from the item (a view older than the key, or a key older than per-key state). */
export type HoldPlan = { ok: true; spec: HoldSpec } | { ok: false; error: GatewayError } | { ok: false; missingKey: true };

/** Inputs of {@link planHold}. */
export interface PlanInput {
  state: ShardState;
  h16: string;
  demand: HoldDemand;
  limits: RateLimits;
  /** Epoch ms (billing clock). */
  now: number;
  /** Accept fewer free tokens than the item has (`>=` condition): the last attempt under contention. */
  relaxFree?: boolean;
  /** A lease's ask: up to this many request-rate units and concurrency slots (default 1 and 1); as many as are left, at least 1. */
  grant?: RateGrant;
  /**
   * A lease's slice, taken exactly instead of `demand`'s charge: this many free tokens and nano-USD of
   * credit. A credit slice (no free tokens) is written only while the item has no free tokens
   * (condition `freeTokens = 0`), so a lease never charges credit where a free token would have paid.
   */
  slice?: LeaseSlice;
}

/** A lease's slice of an account: free tokens and nano-USD of credit (one of them is 0). */
export interface LeaseSlice {
  freeTokens: number;
  nanoUsd: number;
}

/** Plans a hold on one account item. */
export function planHold(input: PlanInput): HoldPlan {
  const { state, demand, limits, now } = input;
  if (!state.exists) return { ok: false, error: new AuthenticationError('The account this API key belongs to no longer exists.') };
  const key = state.keys?.[input.h16];
  if (key === undefined) return { ok: false, missingKey: true };
  if (key.status !== 'active')
    return { ok: false, error: new AuthenticationError('This API key is disabled. Enable it or use another key.', 'invalid_api_key') };

  const minute = epochMinute(now);
  const wantRpm = Math.max(1, input.grant?.rpm ?? 1);
  const accountRpm = rpmBranch(state.rpmWindow, state.rpmCount, limits.rpm, minute, wantRpm);
  if (accountRpm === 'full') return { ok: false, error: rpmRefusal('account', limits.rpm, state.rpmWindow ?? minute, now) };
  const keyRpm = rpmBranch(key.rpmWindow, key.rpmCount, limits.rpm, minute, rpmUnitsOf(accountRpm, wantRpm));
  if (keyRpm === 'full') return { ok: false, error: rpmRefusal('key', limits.rpm, key.rpmWindow ?? minute, now) };
  const rpmUnits = rpmUnitsOf(keyRpm, rpmUnitsOf(accountRpm, wantRpm));
  // A slot whose hold is past its expiry (the function's own deadline: it can no longer run)
  // is free now, not when the sweep settles the orphan.
  const expired = (state.slotHolds ?? []).filter((h) => h.expiresAt <= now);
  const accountStale = staleOf(expired.filter((h) => h.accountSlot));
  const keyStale = staleOf(expired.filter((h) => h.keySlot === input.h16));
  const accountFree = limits.concurrent - ((state.inflight ?? 0) - accountStale.slots);
  const keyFree = limits.concurrent - ((key.inflight ?? 0) - keyStale.slots);
  if (limits.concurrent > 0 && accountFree <= 0) return { ok: false, error: concurrencyRefusal('account', limits.concurrent) };
  if (limits.concurrent > 0 && keyFree <= 0) return { ok: false, error: concurrencyRefusal('key', limits.concurrent) };
  const slots = limits.concurrent > 0 ? Math.max(1, Math.min(input.grant?.slots ?? 1, accountFree, keyFree)) : 1;

  const keyLimit = keyLimitPart(key, now);
  const keyLeft = keyAllowance(key, now);
  const charge =
    input.slice === undefined
      ? computeCharge({
          promptTokens: demand.promptTokens,
          completionTokens: demand.outputTokens,
          freeTokensAvailable: state.freeTokens,
          inputPrice: demand.inputPrice,
          outputPrice: demand.outputPrice,
        })
      : { freeTokensUsed: input.slice.freeTokens, costNanoUsd: input.slice.nanoUsd };
  if (charge.costNanoUsd > state.creditNanoUsd || charge.costNanoUsd > keyLeft || (input.slice !== undefined && charge.freeTokensUsed > state.freeTokens)) {
    return { ok: false, error: insufficient(state, key, keyLimit, keyLeft, demand, now) };
  }
  const takeAllFree =
    input.slice === undefined ? input.relaxFree !== true && charge.freeTokensUsed < demand.promptTokens + demand.outputTokens : input.slice.freeTokens === 0;
  return {
    ok: true,
    spec: {
      freeTokens: charge.freeTokensUsed,
      nanoUsd: charge.costNanoUsd,
      takeAllFree,
      keyLimit,
      accountRpm: withUnits(accountRpm, rpmUnits),
      accountSlot: limits.concurrent > 0 ? limits.concurrent : undefined,
      keyRpm: withUnits(keyRpm, rpmUnits),
      keySlot: limits.concurrent > 0 ? limits.concurrent : undefined,
      slots,
      ...(limits.concurrent > 0 && accountStale.ids.length > 0 ? { accountStale } : {}),
      ...(limits.concurrent > 0 && keyStale.ids.length > 0 ? { keyStale } : {}),
    },
  };
}

/** A counter's branch taking up to `want` units (at least 1; fewer when fewer are left in the minute). */
function rpmBranch(window: number | undefined, count: number | undefined, limit: number, minute: number, want: number): RpmBranch | 'full' {
  if (limit <= 0) return { kind: 'off' };
  if (window !== undefined && window >= minute)
    return (count ?? 0) >= limit ? 'full' : { kind: 'same', window, limit, units: Math.min(want, limit - (count ?? 0)) };
  return { kind: 'new', window: minute, units: Math.min(want, limit) };
}

function rpmUnitsOf(branch: RpmBranch, fallback: number): number {
  return branch.kind === 'off' ? fallback : branch.units;
}

/** The branch taking exactly `units` (the fewer the account's and the key's counters allow). */
function withUnits(branch: RpmBranch, units: number): RpmBranch {
  return branch.kind === 'off' ? branch : { ...branch, units };
}

function staleOf(holds: readonly SlotHold[]): StaleSlots {
  const some = holds.slice(0, MAX_STALE_SLOTS);
  return { ids: some.map((h) => h.requestId), slots: some.reduce((n, h) => n + h.slots, 0) };
}

/** What a key's spend limit still allows (nano-USD) at `now`: +Infinity for a key without a limit. */
export function keyAllowance(key: KeyState, now: number): number {
  const part = keyLimitPart(key, now);
  return part.kind === 'none' ? Number.POSITIVE_INFINITY : part.kind === 'same' ? (key.leftNanoUsd ?? 0) : part.limit - key.heldNanoUsd;
}

function keyLimitPart(key: KeyState, now: number): KeyLimitPart {
  if (key.limitNanoUsd === undefined) return { kind: 'none' };
  const current = windowId(key.limitReset, now);
  if (key.window !== undefined && key.window >= current && key.leftNanoUsd !== undefined) return { kind: 'same', limit: key.limitNanoUsd, window: key.window };
  return { kind: 'roll', limit: key.limitNanoUsd, window: current };
}

function rpmRefusal(scope: 'account' | 'key', limit: number, window: number, now: number): GatewayError {
  return new RateLimitError({ scope, kind: 'rpm', limit, resetMs: Math.max(1, (window + 1) * MINUTE_MS - now) });
}

function concurrencyRefusal(scope: 'account' | 'key', limit: number): GatewayError {
  return new RateLimitError({ scope, kind: 'concurrent', limit, resetMs: 1_000 });
}

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * The 402: what the request could cost, what is left, and how many output tokens per choice the
 * balance (or the key's limit) can pay for (OpenRouter's "You requested up to N tokens, but can only
 * afford M").
 */
function insufficient(state: ShardState, key: KeyState, keyLimit: KeyLimitPart, keyLeft: number, demand: HoldDemand, now: number): GatewayError {
  if (state.creditNanoUsd < 0) {
    // A refund or dispute took back credit already spent (payments/payment-ledger.ts): nothing runs,
    // not even on free tokens, until the balance is paid back.
    return new InsufficientCreditError(
      `Your credit balance is ${formatNanoUsd(state.creditNanoUsd)} (a payment was refunded or disputed after its credit was used). Add at least ${formatNanoUsd(-state.creditNanoUsd)} of credit to continue.`,
    );
  }
  const byKey = keyLeft < state.creditNanoUsd;
  const credit = Math.max(0, Math.min(state.creditNanoUsd, keyLeft));
  const free = Math.max(0, state.freeTokens);
  const prompt = computeCharge({
    promptTokens: demand.promptTokens,
    completionTokens: 0,
    freeTokensAvailable: free,
    inputPrice: demand.inputPrice,
    outputPrice: demand.outputPrice,
  });
  const max = computeCharge({
    promptTokens: demand.promptTokens,
    completionTokens: demand.outputTokens,
    freeTokensAvailable: free,
    inputPrice: demand.inputPrice,
    outputPrice: demand.outputPrice,
  });
  const costs = `This request could cost up to ${formatNanoUsd(max.costNanoUsd)}`;
  const has = byKey
    ? `this API key's spend limit of ${formatNanoUsd(keyLimit.kind === 'none' ? 0 : keyLimit.limit)}${resetText(key, now)} has ${formatNanoUsd(Math.max(0, keyLeft))} left`
    : `your account has ${fmt(free)} free tokens and ${formatNanoUsd(Math.max(0, state.creditNanoUsd))} of credit available`;
  if (prompt.costNanoUsd > credit) {
    return new InsufficientCreditError(
      `${costs}, but ${has}: the prompt alone (up to ${fmt(demand.promptTokens)} tokens) costs more. ${byKey ? "Raise the key's limit or wait for it to reset." : 'Add credit to continue.'}`,
    );
  }
  const freeAfterPrompt = Math.max(0, free - demand.promptTokens);
  const paid = demand.outputPrice === 0 ? Number.MAX_SAFE_INTEGER : Math.floor(((credit - prompt.costNanoUsd) * 1000) / demand.outputPrice);
  const affordable = Math.floor(Math.min(Number.MAX_SAFE_INTEGER, freeAfterPrompt + paid) / Math.max(1, demand.choices));
  const per = demand.choices > 1 ? ` per choice (n = ${demand.choices})` : '';
  return new InsufficientCreditError(
    `${costs}, but ${has}: requested up to ${fmt(demand.outputLimitPerChoice)} output tokens${per}, can afford ${fmt(affordable)}; lower max_tokens${byKey ? ", raise the key's limit or wait for it to reset" : ' or add credit'}.`,
  );
}

function resetText(key: KeyState, now: number): string {
  const end = windowEnd(key.limitReset, now);
  return end === undefined
    ? ''
    : ` per ${key.limitReset === 'daily' ? 'day' : key.limitReset === 'weekly' ? 'week' : 'month'} (resets ${new Date(end).toISOString()})`;
}

// The write: the plan's spec as ONE conditional UpdateItem (see the file comment).

/** The hold's UpdateItem of account item `record.accountId` (store/account-item.ts sends it). */
export function holdUpdate(record: HoldRecord, spec: HoldSpec): AccountUpdate {
  const b = accountHoldUpdate(record, spec);
  const inline = b.path(HOLDS_MAP, record.requestId);
  b.when(HOLD_IS_NEW.replace('#holds.#rid', inline));
  b.set(`${inline} = ${b.value(encodeInlineHold(record))}`);
  markPendingHolds(b, record.accountId);
  return { ...b.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' };
}

function accountHoldUpdate(record: HoldRecord, spec: HoldSpec): UpdateBuilder {
  const b = new UpdateBuilder();
  const h16 = keyEntryId(record.keyHash);
  const key = (attr: string) => b.path('keys', h16, attr);
  const f = b.value(spec.freeTokens);
  const c = b.value(spec.nanoUsd);
  b.when('attribute_exists(accountId)');
  b.when(spec.takeAllFree ? `freeTokens = ${f}` : `freeTokens >= ${f}`);
  b.when(`creditNanoUsd >= ${c}`);
  b.when(`${key('status')} = ${b.value('active')}`);
  b.set(`freeTokens = freeTokens - ${f}`);
  b.set(`creditNanoUsd = creditNanoUsd - ${c}`);
  b.add('heldFreeTokens', spec.freeTokens);
  b.add('heldNanoUsd', spec.nanoUsd);
  b.add(key('heldNanoUsd'), spec.nanoUsd);
  if (isLeaseId(record.requestId)) b.add('leasedNanoUsd', spec.nanoUsd); // credit leased, not yet spent (balance-watch.ts)

  const limit = spec.keyLimit;
  if (limit.kind === 'none') {
    b.when(`attribute_not_exists(${key('limitNanoUsd')})`);
  } else if (limit.kind === 'same') {
    b.when(`${key('limitNanoUsd')} = ${b.value(limit.limit)} AND ${key('window')} = ${b.value(limit.window)} AND ${key('leftNanoUsd')} >= ${c}`);
    b.set(`${key('leftNanoUsd')} = ${key('leftNanoUsd')} - ${c}`);
  } else {
    // A new window: what is left is the limit less what is held in flight (and this hold).
    const rest = b.value(limit.limit - spec.nanoUsd);
    b.when(`${key('limitNanoUsd')} = ${b.value(limit.limit)} AND (attribute_not_exists(${key('window')}) OR ${key('window')} < ${b.value(limit.window)})`);
    b.when(`attribute_not_exists(${key('heldNanoUsd')}) OR ${key('heldNanoUsd')} <= ${rest}`);
    b.set(`${key('window')} = ${b.value(limit.window)}`);
    b.set(`${key('leftNanoUsd')} = ${rest} - if_not_exists(${key('heldNanoUsd')}, ${b.value(0)})`);
  }
  rpm(b, spec.accountRpm, () => [b.name('rpmWindow'), b.name('rpmCount')]);
  rpm(b, spec.keyRpm, () => [key('rpmWindow'), key('rpmCount')]);
  slot(b, spec.accountSlot, spec.slots, () => b.name('inflight'), spec.accountStale);
  slot(b, spec.keySlot, spec.slots, () => key('inflight'), spec.keyStale);
  return b;
}

function rpm(b: UpdateBuilder, branch: RpmBranch, paths: () => [window: string, count: string]): void {
  if (branch.kind === 'off') return;
  const [window, count] = paths();
  if (branch.kind === 'same') {
    // count + units <= limit
    b.when(`${window} = ${b.value(branch.window)} AND ${count} <= ${b.value(branch.limit - branch.units)}`);
    b.set(`${count} = ${count} + ${b.value(branch.units)}`);
  } else if (branch.kind === 'new') {
    const w = b.value(branch.window);
    b.when(`attribute_not_exists(${window}) OR ${window} < ${w}`);
    b.set(`${window} = ${w}`);
    b.set(`${count} = ${b.value(branch.units)}`);
  }
}

/**
 * Takes `slots` concurrency slots: `inflight + slots <= limit`, or `limit + n` when expired holds
 * (`stale`) still hold n slots; each must still be on the item, so a slot is never counted free twice
 * (a settled one has already given its slots back).
 */
function slot(b: UpdateBuilder, limit: number | undefined, slots: number, path: () => string, stale: StaleSlots = { ids: [], slots: 0 }): void {
  if (limit === undefined) return;
  const inflight = path();
  b.when(`attribute_not_exists(${inflight}) OR ${inflight} <= ${b.value(limit + stale.slots - slots)}`);
  for (const requestId of stale.ids) b.when(`attribute_exists(${b.path(HOLDS_MAP, requestId)})`);
  b.add(inflight, slots);
}

/**
 * The ONE write of a hold: a conditional UpdateItem of the account item (or fund shard) under
 * conditions that cannot over-commit (store/conditions.ts, HOLD_CONDITIONS_DOC), which also SETs the
 * hold's compact inline record `holds.<requestId>` (hold-record.ts, encodeInlineHold) under
 * HOLD_IS_NEW, and marks the item for the orphan sweep's sparse index (pending-holds.ts; an index write
 * only when the mark is new). No ledger item is written until the settle. 1 WRU while the account item is ≤ 1 KB
 * (a non-transactional write of an item costs 1 WRU per KB of the larger of its old and new image).
 * It asks for ALL_OLD on a failed condition, so a refusal or a stale prediction is answered from the
 * store's own numbers with no extra read.
 */
import type { UpdateCommandInput } from '../store/commands';
import { tableNames } from '../store/tables';
import { HOLD_IS_NEW } from '../store/conditions';
import type { HoldSpec, RpmBranch, StaleSlots } from './hold-plan';
import { encodeInlineHold, HOLDS_MAP, keyEntryId, type HoldRecord } from './hold-record';
import { markPendingHolds } from './pending-holds';
import { isLeaseId } from '../http/request-id';
import { UpdateBuilder } from '../store/update-builder';

/** The hold's UpdateItem input (the account item's pk is `record.accountId`). */
export function holdUpdate(record: HoldRecord, spec: HoldSpec): UpdateCommandInput {
  const b = accountHoldUpdate(record, spec);
  const inline = b.path(HOLDS_MAP, record.requestId);
  b.when(HOLD_IS_NEW.replace('#holds.#rid', inline));
  b.set(`${inline} = ${b.value(encodeInlineHold(record))}`);
  markPendingHolds(b, record.accountId);
  return { TableName: tableNames().accounts, Key: { accountId: record.accountId }, ...b.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' };
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

/**
 * The store side of credit leases (lease.ts, docs/credit-leases.md):
 *
 * - what one lease takes ({@link leaseTerms}): a slice of the credit, and — when the account's tier has
 *   rate limits (config/env.ts `rateLimitsFor`) — request-rate units of the current minute and
 *   concurrency slots, granted by the same conditional write as a hold (hold-plan.ts `grant`: the
 *   counters move by n instead of 1, never past their limit); a pure function of the account's state,
 *   so who leases is unit-tested;
 * - a request admitted against a lease is settled by its ledger entry ALONE: one PutItem under
 *   LEDGER_ENTRY_IS_NEW (idempotent on the request id), whose size never depends on other requests
 *   in flight (RFC 4006 §5.1: the client reports Used-Service-Unit; here, per request, after the answer);
 * - a lease is returned by ONE UpdateItem of the account item: the lease's hold replaced by the sum of
 *   its requests' charges (the rest released), its inline record removed under HOLD_IS_PENDING, so a
 *   return and the sweep's reconciliation never both land;
 * - the account's next use (lease-reclaim.ts) or the orphan sweep reconciles the lease of a container
 *   that stopped (past its expiry, RFC 4006 Validity-Time) from the ledger: the charges of the entries
 *   that name the lease, summed.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { LEDGER_ENTRY_IS_NEW } from '../store/conditions';
import { accountUpdateItem, updateAccountItem } from '../store/account-item';
import { PutCommand, QueryCommand } from '../store/dynamo-commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite } from '../store/transact-write';
import { cancellationReasons, settleConflictPolicy } from '../store/transaction-retry';
import type { UpdateBuilder } from '../store/update-builder';
import { logger } from '../observability/logger';
import { recordOverHoldLoss } from '../observability/metrics';
import { rateLimitsFor, type Config } from '../config/env';
import { computeCharge } from '../money/price';
import { retrying, TryAgain } from '../retry/retry';
import { now as billingNow } from '../time/clock';
import { requestIdFloor } from '../http/request-id';
import { unmarshallItem, type ShardState } from './account-state';
import { keyAllowance, type HoldDemand, type RateGrant } from './hold-plan';
import { HOLDS_MAP, keyEntryId, type HoldRecord } from './hold-record';
import { epochMinute } from './rate-limit';
import {
  accountSettleUpdate,
  applySettleToView,
  chargeFor,
  ledgerEntryItem,
  settleHold,
  settledBefore,
  type SettleOutcome,
  type SettleResult,
  type UsageEntry,
} from './settle';

/** A credit slice must cover at least this many of the request's most (else the account leases per request). */
const MIN_REQUESTS_PER_LEASE = 8;

/**
 * Most of an account's free tokens one lease takes (%): free tokens are few (a sign-up's 200,000 are
 * about twelve requests' most at a 16,384-token default output budget), so a slice is sized by the
 * requests waiting for it, not by CREDIT_LEASE_SHARE_PERCENT alone; half stays for other containers
 * and for the per-request path near exhaustion, where a request may draw on free tokens and credit.
 */
const MAX_FREE_SHARE_PERCENT = 50;

/**
 * What a lease asks for: a slice of credit (nano-USD) OR of free tokens — one of the two is 0 — and up
 * to `rpm` units / `slots` slots (0: that limit is off).
 */
export interface LeaseTerms extends RateGrant {
  nanoUsd: number;
  freeTokens: number;
}

/** What one request asks of a lease: its most in nano-USD with no free tokens, and in tokens (prompt + output). */
export interface LeaseNeed {
  costNanoUsd: number;
  tokens: number;
}

/** What a request asks of a lease: its most in nano-USD (`costNanoUsd`, as lease.ts's ask carries it) and in tokens. */
export function needOf(ask: { costNanoUsd: number; demand: HoldDemand }): LeaseNeed {
  return { costNanoUsd: ask.costNanoUsd, tokens: ask.demand.promptTokens + ask.demand.outputTokens };
}

/**
 * The per-request record of a request admitted against `lease` (a lease's hold record): its most as
 * its hold — in free tokens on a free-token lease, else in credit — and no slots (the lease holds them).
 */
export function leasedRequestRecord(
  lease: HoldRecord,
  ask: Pick<HoldRecord, 'requestId' | 'keyHash' | 'promptTokensEstimate' | 'publicModel'> & { demand: HoldDemand },
  need: LeaseNeed,
): HoldRecord {
  const free = lease.holdFreeTokens > 0;
  return {
    ownerAccountId: lease.ownerAccountId,
    accountId: lease.accountId,
    shard: lease.shard,
    requestId: ask.requestId,
    keyHash: ask.keyHash,
    holdFreeTokens: free ? need.tokens : 0,
    holdNanoUsd: free ? 0 : need.costNanoUsd,
    keyLimited: lease.keyLimited,
    ...(lease.keyWindow !== undefined ? { keyWindow: lease.keyWindow } : {}),
    accountSlot: false,
    keySlot: false,
    promptTokensEstimate: ask.promptTokensEstimate,
    promptTokensHeld: ask.demand.promptTokens,
    maxCompletionTokens: ask.demand.outputTokens,
    holdInputPrice: ask.demand.inputPrice,
    holdOutputPrice: ask.demand.outputPrice,
    publicModel: ask.publicModel,
    createdAt: new Date().toISOString(),
    holdExpiresAt: lease.holdExpiresAt,
    leaseId: lease.requestId,
  };
}

/** The request's most, nano-USD, with no free tokens (a credit lease pays no free token). */
export function requestCost(demand: HoldDemand): number {
  return computeCharge({
    promptTokens: demand.promptTokens,
    completionTokens: demand.outputTokens,
    freeTokensAvailable: 0,
    inputPrice: demand.inputPrice,
    outputPrice: demand.outputPrice,
  }).costNanoUsd;
}

/**
 * The lease this instance would take from an account item, or undefined when the account leases per
 * request: leases off, fund shards, an inactive key, a credit slice smaller than
 * {@link MIN_REQUESTS_PER_LEASE} of the request's most, free tokens too few for a slice that holds one
 * request's most (the per-request path then spends the last of them, and credit beside them), or a
 * rate limit with nothing left (the per-request hold then answers the 429 from the store's own counters).
 *
 * - free tokens, while the account has any: a request admitted on this slice is paid by free tokens
 *   alone, as the per-request path charges it while free tokens remain. The slice is the larger of
 *   CREDIT_LEASE_SHARE_PERCENT of them and what `demand` + half again requests hold at most (at least
 *   2), never more than {@link MAX_FREE_SHARE_PERCENT}; no credit is leased beside it;
 * - credit (no free tokens left): CREDIT_LEASE_SHARE_PERCENT of what the account (or the key's spend
 *   limit) has;
 * - request rate: the same share of the units left in the current minute, or as many as the requests
 *   the slots are sized for when that is more (the free tier's 20 a minute would otherwise grant 2),
 *   never more than are left;
 * - concurrency: as many slots as this instance has requests of the account and key in flight or
 *   waiting (`demand`), plus half again (at least 1: a per-invocation Lambda container, which serves
 *   one request at a time, takes 1), never more than are left.
 * @param need the asking request's most (nano-USD and tokens).
 * @param demand requests of this account and key in flight or waiting in this instance, the asking one included.
 * @param now epoch ms (billing clock).
 */
export function leaseTerms(state: ShardState, h16: string, need: LeaseNeed, cfg: Config, now: number, demand = 1): LeaseTerms | undefined {
  if (cfg.CREDIT_LEASE_VALIDITY_MS <= 0 || !state.exists || state.shards > 1 || state.creditNanoUsd < 0) return undefined;
  const key = state.keys?.[h16];
  if (key === undefined || key.status !== 'active') return undefined;
  const share = cfg.CREDIT_LEASE_SHARE_PERCENT / 100;
  let nanoUsd = 0;
  let freeTokens = 0;
  if (state.freeTokens > 0) {
    const wanted = Math.max(2, demand + Math.floor(demand / 2)) * Math.max(1, need.tokens);
    freeTokens = Math.min(Math.floor((state.freeTokens * MAX_FREE_SHARE_PERCENT) / 100), Math.max(Math.floor(state.freeTokens * share), wanted));
    if (freeTokens < Math.max(1, need.tokens)) return undefined;
  } else {
    nanoUsd = Math.floor(Math.min(state.creditNanoUsd, keyAllowance(key, now)) * share);
    if (nanoUsd < MIN_REQUESTS_PER_LEASE * Math.max(1, need.costNanoUsd)) return undefined;
  }
  const limits = rateLimitsFor(state.purchasedNanoUsd, cfg);
  const wantedRequests = Math.max(1, demand + Math.floor(demand / 2));
  let rpm = 0;
  if (limits.rpm > 0) {
    const minute = epochMinute(now);
    const used = Math.max(state.rpmWindow === minute ? (state.rpmCount ?? 0) : 0, key.rpmWindow === minute ? (key.rpmCount ?? 0) : 0);
    const left = limits.rpm - used;
    if (left < 1) return undefined;
    rpm = Math.max(Math.ceil(left * share), Math.min(left, wantedRequests));
  }
  let slots = 0;
  if (limits.concurrent > 0) {
    const left = limits.concurrent - Math.max(state.inflight ?? 0, key.inflight ?? 0);
    if (left < 1) return undefined;
    slots = Math.min(left, wantedRequests);
  }
  return { nanoUsd, freeTokens, rpm, slots };
}

/** When a lease was taken (epoch ms), from its id; NaN for a malformed id. */
function leaseTakenAt(leaseId: string): number {
  return Number(/^lease_(\d{13})_/.exec(leaseId)?.[1] ?? Number.NaN);
}

/**
 * How much earlier than its lease a request admitted against it may have arrived (ms): lease.ts admits
 * no request whose id is older, so the sweep reads the ledger from the lease's time less this.
 */
export const LEASE_ADMIT_SKEW_MS = 60_000;

/**
 * Settles any hold record: a leased request's by its ledger entry alone (a cancel writes nothing: its
 * reservation lived in the container's memory), every other by {@link settleHold}. What the settle
 * queue's consumer and the durable settle call.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function settleRecord(hold: HoldRecord, outcome: SettleOutcome): Promise<SettleResult> {
  if (hold.leaseId === undefined) return settleHold(hold, outcome);
  if (outcome.kind === 'cancel') return { alreadySettled: false, freeTokensUsed: 0, costNanoUsd: 0 };
  const charge = chargeFor(hold, outcome.entry);
  try {
    const Item = ledgerEntryItem(hold, outcome.entry, charge);
    await storeCall(() =>
      documentClient().send(
        new PutCommand({ TableName: tableNames().ledger, Item, ConditionExpression: LEDGER_ENTRY_IS_NEW, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
      ),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return settledBefore(unmarshallItem(err.Item));
    throw err;
  }
  if (charge.lossNanoUsd > 0) {
    recordOverHoldLoss(charge.lossNanoUsd);
    logger.warn('usage over the hold', {
      requestId: hold.requestId,
      leaseId: hold.leaseId,
      heldNanoUsd: hold.holdNanoUsd,
      costNanoUsd: charge.costNanoUsd,
      lossNanoUsd: charge.lossNanoUsd,
    });
  }
  return { alreadySettled: false, freeTokensUsed: charge.freeTokensUsed, costNanoUsd: charge.costNanoUsd };
}

/** A leased request's ledger entry that neither DynamoDB nor the settle queue took: written with its lease's return. */
export interface UnwrittenEntry {
  record: HoldRecord;
  entry: UsageEntry;
}

/** What a return gives back besides the credit: request-rate units unused in the grant's minute, and ledger entries to write. */
export interface ReturnExtras {
  unusedRpm?: number;
  entries?: readonly UnwrittenEntry[];
}

/** What a lease's requests were charged in all: nano-USD of credit and free tokens. */
export interface LeaseSpent {
  nanoUsd: number;
  freeTokens: number;
}

/**
 * Returns a lease: charges `spent` (each part capped at the lease's: no bill exceeds its hold) and releases
 * the rest, its concurrency slots and — still in the grant's minute — its unused request-rate units,
 * in one conditional UpdateItem; with `entries`, one TransactWriteItems that also Puts them (each under
 * LEDGER_ENTRY_IS_NEW; one that exists already is dropped), so their charges never land without them.
 * A lease already returned or reconciled is a no-op (`alreadySettled`). A key deleted meanwhile: the
 * account alone is settled.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function returnLease(lease: HoldRecord, spent: LeaseSpent, extras: ReturnExtras = {}, maxAttempts = 30): Promise<SettleResult> {
  const costNanoUsd = Math.min(Math.max(0, spent.nanoUsd), lease.holdNanoUsd);
  const freeTokensUsed = Math.min(Math.max(0, spent.freeTokens), lease.holdFreeTokens);
  const charge = { freeTokensUsed, costNanoUsd, freePromptTokens: 0, freeCompletionTokens: 0 };
  let entries = [...(extras.entries ?? [])];
  let withRpm = (extras.unusedRpm ?? 0) > 0 && lease.rpmWindow !== undefined && epochMinute(billingNow()) === lease.rpmWindow;
  let withKey = true;
  // Replans: each drops at least one entry, or the minute's units once, or the key once.
  return retrying(
    async () => {
      try {
        const update = accountSettleUpdate(lease, charge, withKey);
        if (withRpm) giveBackRpm(update, lease, extras.unusedRpm ?? 0, withKey);
        const input = { ...update.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
        if (entries.length === 0) await updateAccountItem(lease.accountId, input);
        else await transactWrite([accountUpdateItem(lease.accountId, input), ...entries.map((e) => ({ Put: ledgerPut(e) }))], { retryConflicts: false });
        applySettleToView(lease, charge, withKey);
        return { alreadySettled: false, freeTokensUsed, costNanoUsd };
      } catch (err) {
        const reasons = cancellationReasons(err);
        const written = new Set((reasons ?? []).flatMap((r, i) => (i > 0 && r.code === 'ConditionalCheckFailed' ? [i - 1] : [])));
        if (written.size > 0) {
          entries = entries.filter((_, i) => !written.has(i)); // already in the ledger (a write whose answer was lost)
          throw new TryAgain();
        }
        const accountOld =
          err instanceof ConditionalCheckFailedException ? err.Item : reasons?.[0]?.code === 'ConditionalCheckFailed' ? reasons[0].item : undefined;
        if (accountOld !== undefined || err instanceof ConditionalCheckFailedException) {
          const holds = unmarshallItem(accountOld)?.[HOLDS_MAP] as Record<string, unknown> | undefined;
          if (holds?.[lease.requestId] !== undefined && (withRpm || withKey)) {
            if (withRpm)
              withRpm = false; // the minute turned meanwhile: its units count no more
            else withKey = false; // the key was deleted while the lease was out
            throw new TryAgain();
          }
          return { alreadySettled: true, freeTokensUsed: 0, costNanoUsd: 0 };
        }
        throw err; // a conflict is retried by the policy
      }
    },
    settleConflictPolicy(maxAttempts, entries.length + 2),
  );
}

/** Gives back unused request-rate units, only while the counters are still in the grant's minute. */
function giveBackRpm(b: UpdateBuilder, lease: HoldRecord, unused: number, withKey: boolean): void {
  const w = b.value(lease.rpmWindow ?? 0);
  b.when(`rpmWindow = ${w}`);
  b.add('rpmCount', -unused);
  if (!withKey) return;
  const key = (attr: string) => b.path('keys', keyEntryId(lease.keyHash), attr);
  b.when(`${key('rpmWindow')} = ${w}`);
  b.add(key('rpmCount'), -unused);
}

/** The Put of an unwritten ledger entry (idempotent on its request id). */
function ledgerPut(e: UnwrittenEntry) {
  return {
    TableName: tableNames().ledger,
    Item: ledgerEntryItem(e.record, e.entry, chargeFor(e.record, e.entry)),
    ConditionExpression: LEDGER_ENTRY_IS_NEW,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/**
 * What a lease's requests were charged (nano-USD and free tokens): the ledger entries of its item's partition that name
 * it, read over the ids it could have admitted (from its time less {@link LEASE_ADMIT_SKEW_MS} to its
 * expiry; strongly consistent, paginated).
 * @throws StoreUnavailableError (503).
 */
async function leaseSpend(lease: HoldRecord): Promise<LeaseSpent> {
  const taken = leaseTakenAt(lease.requestId);
  const from = requestIdFloor((Number.isFinite(taken) ? taken : lease.holdExpiresAt - 24 * 3_600_000) - LEASE_ADMIT_SKEW_MS);
  const to = requestIdFloor(lease.holdExpiresAt + 1);
  const spent: LeaseSpent = { nanoUsd: 0, freeTokens: 0 };
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() =>
      documentClient().send(
        new QueryCommand({
          TableName: tableNames().ledger,
          KeyConditionExpression: 'accountId = :pk AND requestId BETWEEN :from AND :to',
          FilterExpression: 'leaseId = :lease',
          ProjectionExpression: 'costNanoUsd, freeTokensUsed',
          ExpressionAttributeValues: { ':pk': lease.accountId, ':from': from, ':to': to, ':lease': lease.requestId },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      spent.nanoUsd += Number(item.costNanoUsd ?? 0);
      spent.freeTokens += Number(item.freeTokensUsed ?? 0);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return spent;
}

/**
 * The settle of a lease whose container stopped (the sweep's, and lease-reclaim.ts's): its requests'
 * ledger entries, summed, charged by {@link returnLease}.
 * @throws StoreUnavailableError (503).
 */
export async function reconcileLease(lease: HoldRecord): Promise<SettleResult> {
  return returnLease(lease, await leaseSpend(lease));
}

/**
 * Settling a hold (DATA-MODEL §4). A bill is ONE TransactWriteItems: Put the ledger entry (condition
 * LEDGER_ENTRY_IS_NEW: idempotent on the request id) and, on the account item, replace the hold by the
 * actual cost — free tokens used ≤ the free tokens held, the rest credit — releasing the remainder,
 * the concurrency slots and the key's allowance, and REMOVE the inline hold `holds.<requestId>`
 * (condition HOLD_IS_PENDING). 4 WRU while both items are ≤ 1 KB (a transactional write costs 2 WRU
 * per KB). A cancel (the request got no answer) is ONE UpdateItem of the account that releases
 * everything and removes the inline hold: no ledger entry. A settle of a hold that is not (or no
 * longer) on the account is a no-op: `alreadySettled`, with the ledger entry's figures if there is one.
 *
 * A bill never exceeds its hold: the charge is min(the reported usage's cost, the hold) — free tokens
 * only from those held, credit at most the held nano-USD — so no upstream, honest or not, can take an
 * account (or a key's spend limit) below what the hold already reserved. When the reported usage costs
 * more than the hold (an upstream that ignored the output limit or over-reports, a prompt counted past
 * our margin), the difference is the platform's loss: the ledger entry's `lossNanoUsd`, the
 * `UpstreamOverHoldNanoUsd` metric (alarmed) and a `usage over the hold` warning.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { HOLD_IS_PENDING, LEDGER_ENTRY_IS_NEW } from '../store/conditions';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import { transactWrite, type TransactItems } from '../store/transact-write';
import { cancellationReasons, settleConflictPolicy } from '../store/transaction-retry';
import { UpdateBuilder } from '../store/update-builder';
import { logger } from '../observability/logger';
import { recordOverHoldLoss } from '../observability/metrics';
import { computeCharge, type Charge } from '../money/price';
import { isLeaseId } from '../http/request-id';
import { retrying, TryAgain } from '../retry/retry';
import { addDeltas, applyDeltasToView, unmarshallItem, type AccountDelta } from './account-state';
import { HOLDS_MAP, keyEntryId, slotsOf, type HoldRecord } from './hold-record';
import { cacheBucketsOf, type CacheEntryFields, type CacheEntryKey } from './ledger';
import { accountUpdateItem, updateAccountItem } from '../store/account-item';
import { GetCommand } from '../store/dynamo-commands';

/** Positions of the items of a bill's transaction (cancellation reasons come in this order). */
const SETTLE_ITEM = { ledgerEntry: 0, account: 1 } as const;

/** How a request ended, for its ledger entry. `orphaned`: settled by the sweep from the hold alone. */
export type SettledStatus = 'complete' | 'partial' | 'aborted' | 'orphaned';

/**
 * What the ledger entry records about an answered request. Tokens; prices µUSD per 1M tokens.
 * `promptTokens` is the whole prompt; its cache reads and writes, with their prices, are in the
 * {@link CacheEntryFields} (ledger.ts).
 */
export interface UsageEntry extends CacheEntryFields {
  publicModel: string;
  servedModel: string;
  provider: string;
  promptTokens: number;
  completionTokens: number;
  inputPrice: number;
  outputPrice: number;
  usageEstimated: boolean;
  fallbackPath: string[];
  status: SettledStatus;
  /** Served with the account's own provider key (BYOK): the prices are the platform fee alone. */
  byok?: boolean;
  /** The upstream model id that answered (`GET /v1/generation`). */
  upstreamModel?: string;
  /** Epoch ms of the answer's first token (time to first token = this − the request id's time). */
  firstTokenAt?: number;
  /** Epoch ms the answer ended (latency = this − the request id's time). */
  endedAt?: number;
  /** The first choice's `finish_reason`, when the answer had one. */
  finishReason?: string;
  /** The caller's end user, as the request named it (`user`, `safety_identifier`, `metadata.user_id`), at most 64 bytes. */
  user?: string;
  /** The caller's session (`session_id`, `x-session-id`, Claude Code's session), at most 64 bytes. */
  sessionId?: string;
}

/** A settle: bill the usage, or cancel the hold (no answer was produced). */
export type SettleOutcome = { kind: 'bill'; entry: UsageEntry } | { kind: 'cancel' };

/** The result of {@link settleHold}. */
export interface SettleResult {
  /** The hold was already settled or cancelled (or never landed): nothing was written now. */
  alreadySettled: boolean;
  freeTokensUsed: number;
  costNanoUsd: number;
}

/** The usage fields a charge is computed from. */
export type ChargedUsage = Pick<UsageEntry, 'promptTokens' | 'completionTokens' | 'inputPrice' | 'outputPrice' | CacheEntryKey>;

/**
 * A charge as billed against its hold: {@link Charge} capped at the hold, and what the cap left unbilled.
 * `lossNanoUsd` = the reported usage's cost − `costNanoUsd` (nano-USD, 0 when the hold covered it).
 */
export interface HeldCharge extends Charge {
  lossNanoUsd: number;
}

/**
 * The charge of a usage against its hold, bucket by bucket (money/price.ts): free tokens only from those held (prompt first), credit at
 * most the hold's nano-USD; the rest of the usage's cost is the platform's loss (`lossNanoUsd`).
 */
export function chargeFor(hold: Pick<HoldRecord, 'holdFreeTokens' | 'holdNanoUsd'>, entry: ChargedUsage): HeldCharge {
  const { promptTokens, completionTokens, inputPrice, outputPrice } = entry;
  const actual = computeCharge({
    promptTokens,
    completionTokens,
    inputPrice,
    outputPrice,
    cache: cacheBucketsOf(entry),
    freeTokensAvailable: hold.holdFreeTokens,
  });
  const costNanoUsd = Math.min(actual.costNanoUsd, Math.max(0, hold.holdNanoUsd));
  return { ...actual, costNanoUsd, lossNanoUsd: actual.costNanoUsd - costNanoUsd };
}

const NO_CHARGE: HeldCharge = { freeTokensUsed: 0, costNanoUsd: 0, freePromptTokens: 0, freeCompletionTokens: 0, lossNanoUsd: 0 };

/**
 * Settles (or cancels) one hold, retrying transaction conflicts up to `maxAttempts`.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable; the SDK's error otherwise.
 */
export async function settleHold(hold: HoldRecord, outcome: SettleOutcome, maxAttempts = 30): Promise<SettleResult> {
  const charge = outcome.kind === 'bill' ? chargeFor(hold, outcome.entry) : NO_CHARGE;
  let withKey = true; // one replan at most: without the key
  return retrying(
    async () => {
      try {
        if (outcome.kind === 'cancel') await cancelUpdate(hold, withKey);
        else await transactWrite(settleTransaction(hold, outcome.entry, charge, withKey), { retryConflicts: false });
        applySettleToView(hold, charge, withKey);
        if (charge.lossNanoUsd > 0 && outcome.kind === 'bill') {
          recordOverHoldLoss(charge.lossNanoUsd);
          logger.warn('usage over the hold', {
            requestId: hold.requestId,
            accountId: hold.accountId,
            provider: outcome.entry.provider,
            servedModel: outcome.entry.servedModel,
            heldNanoUsd: hold.holdNanoUsd,
            costNanoUsd: charge.costNanoUsd,
            lossNanoUsd: charge.lossNanoUsd,
            promptTokens: outcome.entry.promptTokens,
            promptTokensHeld: hold.promptTokensHeld,
            completionTokens: outcome.entry.completionTokens,
            completionTokensHeld: hold.maxCompletionTokens,
          });
        }
        return { alreadySettled: false, freeTokensUsed: charge.freeTokensUsed, costNanoUsd: charge.costNanoUsd };
      } catch (err) {
        const reasons = cancellationReasons(err);
        const ledgerReason = reasons?.[SETTLE_ITEM.ledgerEntry];
        const accountReason = reasons?.[SETTLE_ITEM.account];
        if (ledgerReason?.code === 'ConditionalCheckFailed') {
          const stored = settledBefore(unmarshallItem(ledgerReason.item));
          if (accountReason?.code === 'None' || inlineOf(unmarshallItem(accountReason?.item), hold.requestId) !== undefined) await releaseDuplicate(hold);
          return stored;
        }
        if (err instanceof ConditionalCheckFailedException || accountReason?.code === 'ConditionalCheckFailed') {
          const accountOld = unmarshallItem(err instanceof ConditionalCheckFailedException ? err.Item : accountReason?.item);
          if (inlineOf(accountOld, hold.requestId) !== undefined && withKey) {
            withKey = false; // the key was deleted while the request ran: settle the account alone
            throw new TryAgain();
          }
          // Not (or no longer) on the account: settled or cancelled before, or never placed.
          // A bill's transaction reports the ledger entry's own failed condition when one exists; a
          // cancel reads the entry (a cancel racing a settle that landed returns what it charged).
          return settledBefore(outcome.kind === 'cancel' ? await readLedgerEntry(hold) : undefined);
        }
        throw err; // a conflict is retried by the policy
      }
    },
    settleConflictPolicy(maxAttempts, 1),
  );
}

/**
 * The account item's numbers a settle changes, as data ({@link AccountDelta}): the hold's free tokens and
 * credit back less what was charged, the held amounts released, the usage counted, a lease's share of
 * what is held, the concurrency slots; and on the key's entry (`withKey`: it still exists) its held
 * amount, usage, spend-limit left and slot. Tokens and nano-USD. One list for both the store's update
 * ({@link accountSettleUpdate}) and the container's view ({@link applySettleToView}).
 */
export function settleDeltas(hold: HoldRecord, charge: Charge, withKey: boolean): AccountDelta[] {
  const d: AccountDelta[] = [
    { path: ['freeTokens'], by: hold.holdFreeTokens - charge.freeTokensUsed },
    { path: ['heldFreeTokens'], by: -hold.holdFreeTokens },
    { path: ['creditNanoUsd'], by: hold.holdNanoUsd - charge.costNanoUsd },
    { path: ['heldNanoUsd'], by: -hold.holdNanoUsd },
    { path: ['usedNanoUsd'], by: charge.costNanoUsd },
    { path: ['usedFreeTokens'], by: charge.freeTokensUsed },
  ];
  if (isLeaseId(hold.requestId)) d.push({ path: ['leasedNanoUsd'], by: -hold.holdNanoUsd });
  if (hold.accountSlot) d.push({ path: ['inflight'], by: -slotsOf(hold) });
  if (!withKey) return d;
  const key = ['keys', keyEntryId(hold.keyHash)];
  d.push({ path: [...key, 'heldNanoUsd'], by: -hold.holdNanoUsd }, { path: [...key, 'usedNanoUsd'], by: charge.costNanoUsd });
  if (hold.keyLimited) d.push({ path: [...key, 'leftNanoUsd'], by: hold.holdNanoUsd - charge.costNanoUsd });
  if (hold.keySlot) d.push({ path: [...key, 'inflight'], by: -slotsOf(hold) });
  return d;
}

/** The settle's {@link settleDeltas} applied to this container's view of the account item, once the store took them. */
export function applySettleToView(hold: HoldRecord, charge: Charge, withKey: boolean): void {
  applyDeltasToView(hold.accountId, settleDeltas(hold, charge, withKey));
}

function inlineOf(account: Record<string, unknown> | undefined, requestId: string): unknown {
  return (account?.[HOLDS_MAP] as Record<string, unknown> | undefined)?.[requestId];
}

/**
 * The request is settled (its ledger entry exists) yet its hold is on the account again: a late
 * duplicate of the hold's write (an SDK retry whose first attempt reached DynamoDB after the settle)
 * re-placed it. It is released with nothing charged (the entry stands), by whichever settle meets it
 * first — the orphan sweep at the latest.
 */
async function releaseDuplicate(hold: HoldRecord): Promise<void> {
  logger.warn('duplicate hold of a settled request released', { requestId: hold.requestId, accountId: hold.accountId, heldNanoUsd: hold.holdNanoUsd });
  await settleHold(hold, { kind: 'cancel' });
}

/** What an earlier settle of the request charged (its ledger entry's figures): `alreadySettled`. */
export function settledBefore(old: Record<string, unknown> | undefined): SettleResult {
  return { alreadySettled: true, freeTokensUsed: Number(old?.freeTokensUsed ?? 0), costNanoUsd: Number(old?.costNanoUsd ?? 0) };
}

/** The ledger entry of a request (strongly consistent read), undefined when there is none. */
async function readLedgerEntry(hold: HoldRecord): Promise<Record<string, unknown> | undefined> {
  const out = await storeCall(() =>
    documentClient().send(
      new GetCommand({ TableName: tableNames().ledger, Key: { accountId: hold.accountId, requestId: hold.requestId }, ConsistentRead: true }),
    ),
  );
  return out.Item;
}

/** The cancel: one UpdateItem of the account releasing everything the hold took. */
async function cancelUpdate(hold: HoldRecord, withKey: boolean): Promise<void> {
  await updateAccountItem(hold.accountId, { ...accountSettleUpdate(hold, NO_CHARGE, withKey).build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
}

/** The bill: [Put the ledger entry, Update the account]. */
function settleTransaction(hold: HoldRecord, entry: UsageEntry, charge: HeldCharge, withKey: boolean): TransactItems {
  const tables = tableNames();
  return [
    {
      Put: {
        TableName: tables.ledger,
        Item: ledgerEntryItem(hold, entry, charge),
        ConditionExpression: LEDGER_ENTRY_IS_NEW,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    accountUpdateItem(hold.accountId, { ...accountSettleUpdate(hold, charge, withKey).build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
  ];
}

/** The ledger entry of a billed request: its hold's record (a leased request's names its lease), the usage and the charge. */
export function ledgerEntryItem(hold: HoldRecord, entry: UsageEntry, charge: HeldCharge): Record<string, unknown> {
  const { holdExpiresAt: _expiry, ...held } = hold;
  return {
    ...held,
    ...entry,
    status: entry.status,
    byok: entry.byok === true,
    freeTokensUsed: charge.freeTokensUsed,
    costNanoUsd: charge.costNanoUsd,
    // Only when the usage cost more than the hold (keeps the common entry, and its write units, as they were).
    ...(charge.lossNanoUsd > 0 ? { lossNanoUsd: charge.lossNanoUsd } : {}),
    settledAt: new Date().toISOString(),
  };
}

/**
 * The account item's side of a settle: the hold replaced by the charge (the remainder, the slots and
 * the key's allowance released), and the inline hold removed under HOLD_IS_PENDING. A lease's return
 * (lease-settle.ts) is this update alone, with the lease's requests' charges summed.
 */
export function accountSettleUpdate(hold: HoldRecord, charge: Charge, withKey: boolean): UpdateBuilder {
  const b = addDeltas(new UpdateBuilder(), settleDeltas(hold, charge, withKey));
  const inline = b.path(HOLDS_MAP, hold.requestId);
  b.when(HOLD_IS_PENDING.replace('#holds.#rid', inline));
  b.remove(inline);
  if (!withKey) return b;
  const h16 = keyEntryId(hold.keyHash);
  b.when(`attribute_exists(${b.path('keys', h16)})`);
  b.set(`${b.path('keys', h16, 'lastUsedAt')} = ${b.value(new Date().toISOString())}`);
  return b;
}

/**
 * The ledger (DATA-MODEL §4): one entry per settled request — pk `accountId` (the fund shard's pk), sk
 * `requestId` — with its prompt-cache buckets, and how readers see it: the account API (month usage,
 * activity, `GET /v1/generation`) and the admin CLI (usage). Entries are written by the settle
 * (settle.ts, lease-settle.ts); nothing here writes.
 *
 * Reads cover every fund shard's partition (DATA-MODEL §5), every page of a Query, strongly consistent
 * (a user checking right after a request sees it), from a time onwards (the request id is
 * time-ordered: http/request-id.ts). Items still `held` (holds in flight, not yet settled) and payment
 * entries are skipped: they are reservations, or money in, not charges.
 */
import { InvalidRequestError } from '../errors/gateway-errors';
import type { TokenPrices } from '../catalogue/catalogue';
import type { CacheBuckets } from '../money/price';
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { GetCommand, QueryCommand } from '../store/dynamo-commands';
import { documentClient } from '../store/dynamo';
import { storeCall } from '../store/store-errors';
import { tableNames } from '../store/tables';
import type { TokenUsage } from '../usage/token-usage';
import * as z from '../validation/zod';
import { requestIdFloor } from '../http/request-id';
import { shardPks } from '../accounts/keys/key-account-entry';
import { readState } from './account-state';

const count = z.number().check(z.int(), z.nonnegative());

/**
 * The prompt-cache buckets of a ledger entry and of a queued settle's usage ({@link CacheEntryFields}
 * below): tokens, and prices in µUSD per 1M tokens; written only when not empty. One shape for both, so
 * a queued settle cannot lose a bucket the entry has (it once billed cache reads at the full input price).
 */
export const CACHE_ENTRY_SHAPE = {
  cachedTokens: z.optional(count),
  cachedInputPrice: z.optional(count),
  cacheWrite5mTokens: z.optional(count),
  cacheWrite5mPrice: z.optional(count),
  cacheWrite1hTokens: z.optional(count),
  cacheWrite1hPrice: z.optional(count),
  reasoningTokens: z.optional(count),
};

/** A settled ledger entry (readers skip `held` items: parse those with {@link isSettledItem} first). */
export const ledgerItemSchema = z.object({
  accountId: z.string(),
  requestId: z.string(),
  publicModel: z.string(),
  servedModel: z.string(),
  provider: z.string(),
  promptTokens: count,
  completionTokens: count,
  inputPrice: count,
  outputPrice: count,
  usageEstimated: z.boolean(),
  fallbackPath: z.array(z.string()),
  /** How the request ended: complete, partial (cut off midway), aborted (the client left), orphaned (settled by the sweep from its hold). */
  status: z.enum(['complete', 'partial', 'aborted', 'orphaned']),
  /** Tokens paid with free tokens (prompt first). */
  freeTokensUsed: count,
  /** Charged to credit, nano-USD (never more than the request's hold). */
  costNanoUsd: count,
  /**
   * What the reported usage cost beyond the hold, nano-USD: the platform's loss, not charged (settle.ts).
   * Absent when the hold covered the usage.
   */
  lossNanoUsd: z.optional(count),
  /** SHA-256 hex of the API key (entries written before per-key billing have none). */
  keyHash: z.optional(z.string()),
  /** Served with the account's own provider key (BYOK): prices are the platform fee only. */
  byok: z.optional(z.boolean()),
  /** ISO 8601: when the hold was written. */
  createdAt: z.string(),
  /** The upstream model id that answered (older entries may have none). */
  upstreamModel: z.optional(z.string()),
  /** Epoch ms of the first token; of the answer's end (the request id carries its arrival). */
  firstTokenAt: z.optional(z.number()),
  endedAt: z.optional(z.number()),
  /** The first choice's finish reason. */
  finishReason: z.optional(z.string()),
  ...CACHE_ENTRY_SHAPE,
  /** The caller's end user and session, as the request named them (app/settle-request.ts `callerIds`). */
  user: z.optional(z.string()),
  sessionId: z.optional(z.string()),
});

/** A stored, settled ledger entry. */
export type LedgerItem = z.infer<typeof ledgerItemSchema>;

/**
 * True for a settled request entry: not a hold in flight, and not a payment entry (a top-up, refund or
 * dispute has a `kind`: payments/payment-ledger.ts).
 */
function isSettledItem(raw: Record<string, unknown>): boolean {
  return raw.status !== 'held' && raw.kind === undefined;
}

// The prompt-cache buckets of an entry (docs/prices.md): how many of its prompt tokens were read from
// or written to the provider's cache, and the price each was billed at (µUSD per 1M tokens, the
// displayed price — or the BYOK fee — of that bucket). Written only for buckets that are not empty, so
// an entry without caching keeps its size (a bill is 4 WRU while the entry is ≤ 1 KB, settle.ts).

/** The cache fields of a ledger entry (tokens; prices µUSD per 1M tokens). All absent without caching. */
export interface CacheEntryFields {
  /** Of `promptTokens`, read from the cache. */
  cachedTokens?: number;
  cachedInputPrice?: number;
  /** Of `promptTokens`, written to the cache for 5 minutes. */
  cacheWrite5mTokens?: number;
  cacheWrite5mPrice?: number;
  /** Of `promptTokens`, written to the cache for 1 hour. */
  cacheWrite1hTokens?: number;
  cacheWrite1hPrice?: number;
  /** Of `completionTokens`, reasoning (informational: billed as output). */
  reasoningTokens?: number;
}

/** The non-empty cache buckets of a usage, with the prices they are billed at. */
export function cacheEntryFields(t: TokenUsage, price: TokenPrices): CacheEntryFields {
  const out: CacheEntryFields = {};
  if (t.cachedRead > 0) Object.assign(out, { cachedTokens: t.cachedRead, cachedInputPrice: price.cachedInput });
  if (t.cacheWrite5m > 0) Object.assign(out, { cacheWrite5mTokens: t.cacheWrite5m, cacheWrite5mPrice: price.cacheWrite5m });
  if (t.cacheWrite1h > 0) Object.assign(out, { cacheWrite1hTokens: t.cacheWrite1h, cacheWrite1hPrice: price.cacheWrite1h });
  if (t.reasoning > 0) out.reasoningTokens = t.reasoning;
  return out;
}

/** The buckets `computeCharge` (money/price.ts) prices, from an entry's cache fields; undefined when it has none. */
export function cacheBucketsOf(e: CacheEntryFields): CacheBuckets | undefined {
  if (e.cachedTokens === undefined && e.cacheWrite5mTokens === undefined && e.cacheWrite1hTokens === undefined) return undefined;
  return {
    readTokens: e.cachedTokens ?? 0,
    readPrice: e.cachedInputPrice ?? 0,
    write5mTokens: e.cacheWrite5mTokens ?? 0,
    write5mPrice: e.cacheWrite5mPrice ?? 0,
    write1hTokens: e.cacheWrite1hTokens ?? 0,
    write1hPrice: e.cacheWrite1hPrice ?? 0,
  };
}

/** Keys of {@link CacheEntryFields}, for `Pick`s of a usage entry that must carry them. */
export type CacheEntryKey = keyof CacheEntryFields;

// Reads (see the file comment).

/** Every page of one partition's Query, settled items only. */
async function forEachSettled(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>, visit: (raw: Record<string, unknown>) => void): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await storeCall(() => documentClient().send(new QueryCommand({ ...input, ExclusiveStartKey: startKey })));
    for (const raw of page.Items ?? []) if (isSettledItem(raw)) visit(raw);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

function rangeQuery(pk: string, sinceMs: number | undefined): Omit<QueryCommandInput, 'ExclusiveStartKey'> {
  return {
    TableName: tableNames().ledger,
    KeyConditionExpression: sinceMs === undefined ? 'accountId = :a' : 'accountId = :a AND requestId >= :from',
    ExpressionAttributeValues: { ':a': pk, ...(sinceMs === undefined ? {} : { ':from': requestIdFloor(sinceMs) }) },
    ConsistentRead: true,
  };
}

/**
 * Calls `visit` for each settled ledger entry of `accountId` made at or after `sinceMs` (epoch ms; all
 * when undefined): shard by shard, each in time order.
 * @param shards the account's fund shards (its root item's `shards`; 1 = the single partition).
 * @throws StoreUnavailableError (503).
 */
async function forEachLedgerEntry(accountId: string, sinceMs: number | undefined, visit: (e: LedgerItem) => void, shards = 1): Promise<void> {
  for (const pk of shardPks(accountId, shards)) await forEachSettled(rangeQuery(pk, sinceMs), (raw) => visit(ledgerItemSchema.parse(raw)));
}

/**
 * What the account was charged since `sinceMs` (epoch ms), nano-USD: a Query bounded to that range on
 * each shard's partition, projected to the two attributes it needs (the dashboard's first render
 * waits on it, so it never reads the whole ledger).
 * @throws StoreUnavailableError (503).
 */
export async function chargedSince(accountId: string, sinceMs: number, shards = 1): Promise<number> {
  let total = 0;
  await Promise.all(
    shardPks(accountId, shards).map((pk) =>
      forEachSettled({ ...rangeQuery(pk, sinceMs), ProjectionExpression: 'costNanoUsd, #status', ExpressionAttributeNames: { '#status': 'status' } }, (raw) => {
        total += typeof raw.costNanoUsd === 'number' ? raw.costNanoUsd : 0;
      }),
    ),
  );
  return total;
}

/** Epoch ms of the first instant of `now`'s month, UTC. */
export function monthStartMs(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}

/**
 * One settled ledger entry by request id (`GET /v1/generation`): a strongly consistent GetItem on each
 * fund shard's partition at once (one GetItem for an unsharded account), the first found. Undefined
 * while the request is still held (not settled) or when no such entry exists.
 * @param shards the account's fund shards (its root item's `shards`).
 * @throws StoreUnavailableError (503).
 */
export async function findLedgerEntry(accountId: string, requestId: string, shards = 1): Promise<LedgerItem | undefined> {
  const found = await Promise.all(
    shardPks(accountId, shards).map((pk) =>
      storeCall(() => documentClient().send(new GetCommand({ TableName: tableNames().ledger, Key: { accountId: pk, requestId }, ConsistentRead: true }))),
    ),
  );
  const raw = found.map((out) => out.Item).find((item) => item !== undefined && isSettledItem(item));
  return raw === undefined ? undefined : ledgerItemSchema.parse(raw);
}

// Activity: the ledger grouped by UTC day × served model × provider × API key, for the account API's
// `GET /v1/activity` (OpenRouter's activity shape, per key). Sums are exact integers, read from the
// entries' stored buckets (the cache fields above): no other table.

/** One group. Money in nano-USD. */
export interface ActivityGroup {
  /** `YYYY-MM-DD` (UTC) of the requests' settle time. */
  date: string;
  /** The model that answered (what was billed). */
  model: string;
  provider: string;
  /** SHA-256 hex of the key, or '' for entries from before keys were recorded. */
  keyHash: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costNanoUsd: number;
  /** How many were served with the account's own provider key. */
  byokRequests: number;
  /** Of `promptTokens`, read from the provider's prompt cache. */
  cachedTokens: number;
  /** Of `promptTokens`, written to the provider's prompt cache (5-minute and 1-hour writes). */
  cacheWriteTokens: number;
  /** What the cache reads saved, nano-USD: see {@link cacheReadSavingMilliNano}; rounded down once per group. */
  cacheDiscountNanoUsd: number;
  /** How many distinct end users (`user`) and sessions (`sessionId`) the group's requests named. */
  externalUsers: number;
  sessions: number;
}

/** Which entries an activity counts: those naming this end user and/or this session (all when empty). */
export interface ActivityFilter {
  user?: string;
  sessionId?: string;
}

/**
 * What one entry's cache reads saved, in thousandths of a nano-USD (exact): its cached tokens × (the
 * input price − the cached-input price it was billed at), both µUSD per 1M tokens as stored on the entry
 * (the displayed prices; the platform fee alone for BYOK). Cache writes are not subtracted: this is
 * the read discount, what those tokens would have cost uncached minus what they cost.
 */
export function cacheReadSavingMilliNano(e: Pick<LedgerItem, 'inputPrice' | 'cachedTokens' | 'cachedInputPrice'>): bigint {
  const tokens = e.cachedTokens ?? 0;
  const perMTok = e.inputPrice - (e.cachedInputPrice ?? e.inputPrice);
  return tokens > 0 && perMTok > 0 ? BigInt(tokens) * BigInt(perMTok) : 0n;
}

/**
 * The groups of the last `days` days (today included), oldest day first, over every fund shard, of
 * the entries `only` selects.
 * @param shards the account's fund shards (its root item's `shards`).
 * @throws StoreUnavailableError (503).
 */
export async function accountActivity(accountId: string, days: number, now = Date.now(), shards = 1, only: ActivityFilter = {}): Promise<ActivityGroup[]> {
  const today = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
  const since = today - (days - 1) * 86_400_000;
  const groups = new Map<string, ActivityGroup>();
  const savings = new Map<ActivityGroup, bigint>();
  const named = new Map<ActivityGroup, { users: Set<string>; sessions: Set<string> }>();
  await forEachLedgerEntry(
    accountId,
    since,
    (e: LedgerItem) => {
      if ((only.user !== undefined && e.user !== only.user) || (only.sessionId !== undefined && e.sessionId !== only.sessionId)) return;
      const date = e.createdAt.slice(0, 10);
      const keyHash = e.keyHash ?? '';
      const id = [date, e.servedModel, e.provider, keyHash].join('\u0000');
      let g = groups.get(id);
      if (g === undefined) {
        g = {
          date,
          model: e.servedModel,
          provider: e.provider,
          keyHash,
          requests: 0,
          promptTokens: 0,
          completionTokens: 0,
          costNanoUsd: 0,
          byokRequests: 0,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          cacheDiscountNanoUsd: 0,
          externalUsers: 0,
          sessions: 0,
        };
        groups.set(id, g);
        named.set(g, { users: new Set(), sessions: new Set() });
      }
      if (e.user !== undefined) named.get(g)!.users.add(e.user);
      if (e.sessionId !== undefined) named.get(g)!.sessions.add(e.sessionId);
      g.requests += 1;
      g.promptTokens += e.promptTokens;
      g.completionTokens += e.completionTokens;
      g.costNanoUsd += e.costNanoUsd;
      if (e.byok === true) g.byokRequests += 1;
      g.cachedTokens += e.cachedTokens ?? 0;
      g.cacheWriteTokens += (e.cacheWrite5mTokens ?? 0) + (e.cacheWrite1hTokens ?? 0);
      savings.set(g, (savings.get(g) ?? 0n) + cacheReadSavingMilliNano(e));
    },
    shards,
  );
  for (const [g, milli] of savings) g.cacheDiscountNanoUsd = Number(milli / 1000n);
  for (const [g, n] of named) Object.assign(g, { externalUsers: n.users.size, sessions: n.sessions.size });
  return [...groups.values()].sort((a, b) => a.date.localeCompare(b.date) || a.model.localeCompare(b.model) || a.keyHash.localeCompare(b.keyHash));
}

// Sums of an account's ledger: what the admin CLI's `usage` prints.

/** Token and money totals over a set of ledger entries. */
export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  freeTokensUsed: number;
  /** nano-USD. */
  costNanoUsd: number;
}

/** Totals for an account, overall and per public model. */
export interface UsageSummary extends UsageTotals {
  accountId: string;
  /** ISO 8601 lower bound, when one was given. */
  since?: string;
  byModel: Record<string, UsageTotals>;
}

const emptyTotals = (): UsageTotals => ({ requests: 0, promptTokens: 0, completionTokens: 0, freeTokensUsed: 0, costNanoUsd: 0 });

function add(t: UsageTotals, e: Omit<UsageTotals, 'requests'>): void {
  t.requests += 1;
  t.promptTokens += e.promptTokens;
  t.completionTokens += e.completionTokens;
  t.freeTokensUsed += e.freeTokensUsed;
  t.costNanoUsd += e.costNanoUsd;
}

/**
 * Sums the account's settled ledger entries (all pages, every fund shard's partition; holds in flight
 * are skipped), optionally only those whose request id was made at or after `since` (ISO 8601; uses
 * the time-ordered request id as the range key, see http/request-id.ts).
 * @throws InvalidRequestError for an unparsable `since`; StoreUnavailableError (503).
 */
export async function usageSummary(accountId: string, opts: { since?: string } = {}): Promise<UsageSummary> {
  const sinceMs = opts.since === undefined ? undefined : Date.parse(opts.since);
  if (sinceMs !== undefined && Number.isNaN(sinceMs)) {
    throw new InvalidRequestError(`"${opts.since}" is not an ISO 8601 date.`, { param: 'since' });
  }
  const summary: UsageSummary = { accountId, ...emptyTotals(), byModel: {} };
  if (sinceMs !== undefined) summary.since = new Date(sinceMs).toISOString();
  const root = await readState(accountId, { consistent: true });
  await forEachLedgerEntry(
    accountId,
    sinceMs,
    (e) => {
      add(summary, e);
      add((summary.byModel[e.publicModel] ??= emptyTotals()), e);
    },
    root.shards,
  );
  return summary;
}

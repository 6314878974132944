/**
 * The accounts table and its items: the ONE module that names the table. Every read and write of an
 * account item (or of a marker item kept beside the accounts) is a command built here, and every write
 * is checked against the item's attributes ({@link ACCOUNT_ITEM_ATTRIBUTES}): a write of an attribute
 * this module does not declare throws before it is sent, so a new attribute is declared here, with its
 * unit and invariant, or it is not written (test/store/account-item.test.ts; every money test writes
 * through these builders).
 *
 * Items (pk `accountId`, DATA-MODEL §2 and §5):
 * - the account's root item `<accountId>` (`acct_…`) and its fund shards `<accountId>#<k>`;
 * - marker items: `freeGrant#<sha256>` (a person had the free grant: accounts/self-serve-account.ts),
 *   `stripePayment#<PaymentIntent id>` (the account a payment credited: payments/payment-ledger.ts),
 *   `signupIp#<network>#<UTC day>` (the day's sign-up grants of a client network: accounts/signup-network.ts).
 *
 * Invariants (each held by a condition in the write that could break it, store/conditions.ts, never by
 * a read before a write):
 * - `freeTokens` ≥ 0 and `creditNanoUsd` ≥ 0 once a request is settled (a hold takes what it may cost
 *   under a `>=` condition; a settle returns the hold and takes the bill, which the hold bounds);
 * - `heldNanoUsd` = Σ of the holds in flight on the item, `leasedNanoUsd` ≤ `heldNanoUsd` (leases are holds);
 * - `creditNanoUsd` ≤ Number.MAX_SAFE_INTEGER (a credit is refused past it);
 * - `keyCount` ≤ 5 live keys (spec §8), equal to the number of live entries in `keys`;
 * - `inflight` = the holds in flight that took an account concurrency slot;
 * - an account id, a grant marker and a payment entry are each created once.
 */
import type * as Doc from '@aws-sdk/lib-dynamodb';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from './dynamo-commands';
import { documentClient } from './dynamo';
import { storeCall } from './store-errors';
import { tableNames } from './tables';
import type { TransactItems } from './transact-write';

/**
 * Every top-level attribute an item of the accounts table may be written with, and what it holds
 * (money in nano-USD, tokens, epoch ms unless named). Nested maps' entries are their owners' (named).
 */
export const ACCOUNT_ITEM_ATTRIBUTES = {
  accountId: 'the pk: account id, shard `<id>#<k>`, or a marker id',
  email: 'sign-in email, lower case (the byEmail index key)',
  createdAt: 'ISO 8601 creation time',
  keyCount: 'live API keys, 0..5',
  freeTokens: 'free tokens available (not held), ≥ 0',
  heldFreeTokens: 'free tokens held by requests in flight',
  creditNanoUsd: 'prepaid credit available (not held), ≥ 0 once settled',
  heldNanoUsd: 'credit held by requests in flight (leases included)',
  leasedNanoUsd: 'of heldNanoUsd, what credit leases hold (billing/lease.ts)',
  purchasedNanoUsd: 'lifetime credit added; 0 = the free tier',
  usedNanoUsd: 'lifetime credit spent',
  usedFreeTokens: 'lifetime free tokens spent',
  inflight: 'holds in flight that took an account concurrency slot',
  rpmWindow: 'the rate-limit minute (epoch minutes) rpmCount counts',
  rpmCount: 'requests admitted in rpmWindow',
  shards: 'fund shards of the account (root only; absent = 1)',
  ownerAccountId: 'a fund shard: its account',
  shard: 'a fund shard: its number k',
  keys: 'per-key state by the key hash’s first 16 hex characters (accounts/keys/key-account-entry.ts)',
  byok: 'provider keys brought by the account, sealed (accounts/byok/byok-store.ts)',
  holds: 'holds in flight, inline, by request id (billing/hold-record.ts)',
  sweepShard: 'set while the item has holds in flight: the sweep index’s partition (billing/hold-record.ts)',
  freeGrantWithheld: 'why a self-serve account started without free tokens',
  autoTopUp: 'auto top-up settings {enabled, thresholdNanoUsd, amountCents, monthlyCapCents, pausedAt?, pausedReason?}',
  stripeCustomerId: 'the Stripe Customer of the saved card',
  stripePaymentMethodId: 'the saved card (a Checkout with setup_future_usage: off_session)',
  autoTopUpSeq: 'auto top-ups started so far (the Stripe idempotency key’s number)',
  autoTopUpPendingAt: 'when the auto top-up in flight was started',
  lowBalanceNanoUsd: 'the low-balance email’s threshold',
  lowBalanceAlertAt: 'when the low-balance email of the current crossing was sent',
  grantedTo: 'a free-grant marker: the identity (Cognito sub) that had the grant',
  backfilled: 'a free-grant marker put by the backfill (accounts/grant-backfill.ts)',
  grants: 'a sign-up network counter: grants taken on its day',
  network: 'a sign-up network counter: the network (IPv4 address or IPv6 /64)',
  deleteAfterEpochSeconds: 'DynamoDB TTL (epoch seconds) of a counter item',
  owner: 'a payment marker: the account the PaymentIntent credited',
  entryId: 'a payment marker: the ledger entry of the credit (requestId)',
} as const;

/** `autoTopUpCents_<YYYYMM>`: US cents of auto top-ups started in that UTC month (the monthly cap). */
const MONTHLY_ATTRIBUTE = /^autoTopUpCents_\d{6}$/;

/** Words of DynamoDB's expression grammar that are not attribute names (DynamoDB Developer Guide, "Expressions"). */
const GRAMMAR = new Set([
  'SET',
  'REMOVE',
  'ADD',
  'DELETE',
  'AND',
  'OR',
  'NOT',
  'BETWEEN',
  'IN',
  'if_not_exists',
  'list_append',
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
  'size',
]);

/** The first name of each attribute path in an expression (`#n0` of `#n0.#n1`, `keyCount` of `keyCount + :one`), by expression text. */
const firstNames = new Map<string, string[]>();

function pathHeads(expression: string): string[] {
  let heads = firstNames.get(expression);
  if (heads !== undefined) return heads;
  // A path: a name (bare or #placeholder), then `.name` or `[n]` parts; values (`:v`), numbers and the grammar's words are not.
  const found = new Set<string>();
  for (const m of expression.matchAll(/(?<![.\w#:])(#?[A-Za-z_]\w*)/g)) if (!GRAMMAR.has(m[1]!)) found.add(m[1]!);
  heads = [...found];
  if (firstNames.size < 500) firstNames.set(expression, heads);
  return heads;
}

/**
 * Throws when `expression` (an update, condition, key condition or projection) names a top-level
 * attribute the accounts table does not declare.
 * @throws Error naming the attribute (a bug in the caller: declare it in ACCOUNT_ITEM_ATTRIBUTES).
 */
function checkExpression(expression: string | undefined, names: Record<string, string> | undefined): void {
  if (expression === undefined) return;
  for (const head of pathHeads(expression)) {
    const attr = head.startsWith('#') ? names?.[head] : head;
    if (attr === undefined) throw new Error(`accounts table: ${head} in "${expression}" has no ExpressionAttributeNames entry`);
    if (!(attr in ACCOUNT_ITEM_ATTRIBUTES) && !MONTHLY_ATTRIBUTE.test(attr))
      throw new Error(`accounts table: unknown attribute ${attr} (declare it in ACCOUNT_ITEM_ATTRIBUTES)`);
  }
}

function checkItem(item: Record<string, unknown>): void {
  for (const attr of Object.keys(item))
    if (!(attr in ACCOUNT_ITEM_ATTRIBUTES) && !MONTHLY_ATTRIBUTE.test(attr))
      throw new Error(`accounts table: unknown attribute ${attr} (declare it in ACCOUNT_ITEM_ATTRIBUTES)`);
}

/** An UpdateItem's fields other than the table and the key. */
export type AccountUpdate = Omit<Doc.UpdateCommandInput, 'TableName' | 'Key'>;
/** A TransactWriteItems Update's fields other than the table and the key. */
export type AccountTransactUpdate = Omit<NonNullable<TransactItems[number]['Update']>, 'TableName' | 'Key'>;
/** A PutItem's fields other than the table. */
export type AccountPut = Omit<Doc.PutCommandInput, 'TableName'>;
/** A Query's fields other than the table (an index of the accounts table, or its pk). */
export type AccountQuery = Omit<Doc.QueryCommandInput, 'TableName'>;

function checkedUpdate<U extends AccountUpdate | AccountTransactUpdate>(update: U): U {
  const names = update.ExpressionAttributeNames;
  checkExpression(update.UpdateExpression, names);
  checkExpression(update.ConditionExpression, names);
  return update;
}

/**
 * The UpdateItem of item `pk` (the SDK's input shape; send it with `documentClient().send`).
 * @throws Error when it writes an undeclared attribute.
 */
export function accountUpdateCommand(pk: string, update: AccountUpdate): UpdateCommand {
  return new UpdateCommand({ TableName: tableNames().accounts, Key: { accountId: pk }, ...checkedUpdate(update) });
}

/**
 * The PutItem of an accounts-table item (`put.Item.accountId` is its pk).
 * @throws Error when the item holds an undeclared attribute.
 */
export function accountPutCommand(put: AccountPut): PutCommand {
  checkItem(put.Item ?? {});
  checkExpression(put.ConditionExpression, put.ExpressionAttributeNames);
  return new PutCommand({ TableName: tableNames().accounts, ...put });
}

/** A TransactWriteItems entry updating item `pk`. @throws Error when it writes an undeclared attribute. */
export function accountUpdateItem(pk: string, update: AccountTransactUpdate): TransactItems[number] {
  return { Update: { TableName: tableNames().accounts, Key: { accountId: pk }, ...checkedUpdate(update) } };
}

/** A TransactWriteItems entry putting an accounts-table item. @throws Error when it holds an undeclared attribute. */
export function accountPutItem(put: AccountPut): TransactItems[number] {
  return { Put: accountPutCommand(put).input as NonNullable<TransactItems[number]['Put']> };
}

/** Options of a read of one item: strongly consistent or not (default eventually), and a projection of declared attributes. */
export interface AccountReadOptions {
  consistent?: boolean;
  /** Comma-separated attributes (`#placeholders` resolved through `names`). */
  projection?: string;
  names?: Record<string, string>;
}

/** The GetItem of item `pk`. */
export function accountGetCommand(pk: string, opts: AccountReadOptions = {}): GetCommand {
  checkExpression(opts.projection, opts.names);
  return new GetCommand({
    TableName: tableNames().accounts,
    Key: { accountId: pk },
    ConsistentRead: opts.consistent ?? false,
    ...(opts.projection === undefined ? {} : { ProjectionExpression: opts.projection }),
    ...(opts.names === undefined ? {} : { ExpressionAttributeNames: opts.names }),
  });
}

/**
 * Reads item `pk` (unmarshalled), or undefined when there is none.
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function readAccountItem(pk: string, opts: AccountReadOptions = {}): Promise<Record<string, unknown> | undefined> {
  const out = await storeCall(() => documentClient().send(accountGetCommand(pk, opts)));
  return out.Item;
}

/**
 * Updates item `pk` and returns what `ReturnValues` asked for (undefined when none).
 * @throws StoreUnavailableError (503); the SDK's ConditionalCheckFailedException when the condition fails.
 */
export async function updateAccountItem(pk: string, update: AccountUpdate): Promise<Record<string, unknown> | undefined> {
  const out = await storeCall(() => documentClient().send(accountUpdateCommand(pk, update)));
  return out.Attributes;
}

/** @throws StoreUnavailableError (503); ConditionalCheckFailedException when the condition fails. */
export async function putAccountItem(put: AccountPut): Promise<void> {
  await storeCall(() => documentClient().send(accountPutCommand(put)));
}

/** One page of a Query on the accounts table or one of its indexes. @throws StoreUnavailableError (503). */
export async function queryAccountItems(query: AccountQuery): Promise<Doc.QueryCommandOutput> {
  checkExpression(query.KeyConditionExpression, query.ExpressionAttributeNames);
  checkExpression(query.ProjectionExpression, query.ExpressionAttributeNames);
  return storeCall(() => documentClient().send(new QueryCommand({ TableName: tableNames().accounts, ...query })));
}

/** One page of a Scan of an index of the accounts table, from `start`. @throws StoreUnavailableError (503). */
export async function scanAccountIndex(index: string, start: Record<string, unknown> | undefined): Promise<Doc.ScanCommandOutput> {
  return storeCall(() => documentClient().send(new ScanCommand({ TableName: tableNames().accounts, IndexName: index, ExclusiveStartKey: start })));
}

/**
 * One BatchGetItem of up to 100 items by pk (eventually consistent), projected: the items read and the
 * pks DynamoDB left unprocessed (ask again).
 * @throws StoreUnavailableError (503).
 */
export async function batchReadAccountItems(
  pks: readonly string[],
  projection: string,
  names?: Record<string, string>,
): Promise<{ items: Array<Record<string, unknown>>; unprocessed: string[] }> {
  checkExpression(projection, names);
  const table = tableNames().accounts;
  const page = await storeCall(() =>
    documentClient().send(
      new BatchGetCommand({
        RequestItems: {
          [table]: { Keys: pks.map((accountId) => ({ accountId })), ProjectionExpression: projection, ...(names ? { ExpressionAttributeNames: names } : {}) },
        },
      }),
    ),
  );
  const unprocessed = (page.UnprocessedKeys?.[table]?.Keys ?? []).map((k) => String((k as { accountId: unknown }).accountId));
  return { items: page.Responses?.[table] ?? [], unprocessed };
}

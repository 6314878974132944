/**
 * The four DynamoDB tables as data: the CDK construct (lib/constructs/data-tables.ts) and the local
 * table creator (local/dynamodb-local.ts) both read this, so deployed and local keys never drift.
 *
 * - keys:     pk `keyHash`  = SHA-256 hex of the full API key. Attributes: accountId, name, createdAt,
 *             updatedAt, status (active | disabled | deleted; older rows: revoked), hint (first
 *             characters of the secret), limitNanoUsd?, limitReset?.
 *             GSI `byAccount` (accountId, createdAt) for listing an account's keys.
 * - accounts: pk `accountId` (fund shards: `accountId#k`). Attributes: email?, keyCount, freeTokens,
 *             credit (nano-USD), held amounts, rate-limit state, createdAt, the per-key map `keys`, the
 *             BYOK map `byok`, and the map `holds` (request id → compact inline record of each hold in
 *             flight, billing/hold-record.ts) (DATA-MODEL §2), and `sweepShard` while it has (or just
 *             had) holds in flight. GSI `byEmailKeys` (email; sparse: self-serve accounts; keys only)
 *             so the admin CLI finds an account by email. GSI `pendingHolds` (sweepShard; sparse: only
 *             items with holds in flight; keys only) so the orphan sweep finds them without a Scan
 *             (billing/hold-record.ts). Beside the accounts: the free-grant markers `freeGrant#…` and
 *             the sign-up counters `signupIp#<network>#<day>` (accounts/signup-network.ts), which carry
 *             the table's TTL attribute `deleteAfterEpochSeconds` (no other item has it).
 * - ledger:   pk `accountId` (or a fund shard's `accountId#k`), sk `requestId` (time-ordered, so a Query
 *             returns entries in time order). One item per settled request, written by its settle;
 *             holds in flight live on the account item, not here. No index.
 * - responses: pk `accountId`, sk `responseId` (`resp_…`; a large response's extra parts `resp_…#o1`,
 *             `resp_…#i1`, …). Stored Responses API responses (responses/response-store.ts): brotli-
 *             compressed input and response, `createdAt`, `model`, `status`, and the TTL attribute
 *             `expiresAt` (epoch seconds). No point-in-time recovery: a deleted or expired response must
 *             be gone, not restorable for 35 more days.
 */

/** A DynamoDB key attribute. */
export interface KeyAttribute {
  name: string;
  type: 'S' | 'N';
}

/** One table's key schema and indexes. */
export interface TableSchema {
  /** Logical name; the physical name comes from the environment (see `store/tables.ts`). */
  logicalName: 'keys' | 'accounts' | 'ledger' | 'responses';
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  globalSecondaryIndexes?: ReadonlyArray<{
    indexName: string;
    partitionKey: KeyAttribute;
    sortKey?: KeyAttribute;
    /** What the index copies: every attribute (default) or only the keys (smaller, cheaper writes). */
    projection?: 'ALL' | 'KEYS_ONLY';
  }>;
  /** DynamoDB TTL attribute (a Number, epoch seconds): items past it are deleted by DynamoDB, at no write cost. */
  timeToLiveAttribute?: string;
  /** Point-in-time recovery; default true. */
  pointInTimeRecovery?: boolean;
}

/** The accounts table's sparse index of items with holds in flight (billing/hold-record.ts). */
export const PENDING_HOLDS_INDEX = 'pendingHolds';
/** Its key: one of {@link SWEEP_SHARDS} shard names, present only while the item has holds in flight. */
export const SWEEP_SHARD_ATTRIBUTE = 'sweepShard';
/** Partitions of the pendingHolds index (`s0`…`s15`): first holds of many accounts spread their index writes. */
export const SWEEP_SHARDS = 16;

export const KEYS_TABLE: TableSchema = {
  logicalName: 'keys',
  partitionKey: { name: 'keyHash', type: 'S' },
  globalSecondaryIndexes: [{ indexName: 'byAccount', partitionKey: { name: 'accountId', type: 'S' }, sortKey: { name: 'createdAt', type: 'S' } }],
};

/** The accounts table's index by sign-in email (keys only). */
export const BY_EMAIL_INDEX = 'byEmailKeys';

/** The index it replaces (projection ALL), kept only during the two-step upgrade (lib/constructs/data-tables.ts). */
export const LEGACY_BY_EMAIL_INDEX = 'byEmail';

/**
 * The accounts table's TTL attribute (epoch seconds), carried only by the sign-up counter items
 * (accounts/signup-network.ts). Not `expiresAt`: a name no account, marker or shard item has ever
 * held at its top level, so turning TTL on deletes nothing else.
 */
export const ACCOUNTS_TTL_ATTRIBUTE = 'deleteAfterEpochSeconds';

export const ACCOUNTS_TABLE: TableSchema = {
  logicalName: 'accounts',
  partitionKey: { name: 'accountId', type: 'S' },
  timeToLiveAttribute: ACCOUNTS_TTL_ATTRIBUTE,
  globalSecondaryIndexes: [
    // Keys only: its readers want the account id alone (accounts/self-serve-account.ts), and an ALL
    // projection made every hold and settle of a dashboard account write the index too. A new name,
    // because CloudFormation cannot change a deployed index's projection; the old `byEmail` (ALL) is
    // kept during the upgrade with `-c legacyEmailIndex=true` (README, "Runbook": upgrading to byEmailKeys).
    { indexName: BY_EMAIL_INDEX, partitionKey: { name: 'email', type: 'S' }, projection: 'KEYS_ONLY' },
    { indexName: PENDING_HOLDS_INDEX, partitionKey: { name: SWEEP_SHARD_ATTRIBUTE, type: 'S' }, projection: 'KEYS_ONLY' },
  ],
};

export const LEDGER_TABLE: TableSchema = {
  logicalName: 'ledger',
  partitionKey: { name: 'accountId', type: 'S' },
  sortKey: { name: 'requestId', type: 'S' },
};

export const RESPONSES_TABLE: TableSchema = {
  logicalName: 'responses',
  partitionKey: { name: 'accountId', type: 'S' },
  sortKey: { name: 'responseId', type: 'S' },
  timeToLiveAttribute: 'expiresAt',
  pointInTimeRecovery: false,
};

export const TABLE_SCHEMAS: readonly TableSchema[] = [KEYS_TABLE, ACCOUNTS_TABLE, LEDGER_TABLE, RESPONSES_TABLE];

/** Environment variables that carry the physical table names into the functions and the admin CLI. */
export const TABLE_ENV = {
  keys: 'KEYS_TABLE',
  accounts: 'ACCOUNTS_TABLE',
  ledger: 'LEDGER_TABLE',
  responses: 'RESPONSES_TABLE',
} as const;

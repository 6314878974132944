/**
 * Every DynamoDB condition expression the gateway writes with, named for the invariant it holds.
 * Invariants are enforced by these conditions inside single writes or TransactWriteItems, never by
 * read-then-write. Attribute names are written through `#placeholders` where they are DynamoDB
 * reserved words (`status`).
 */

/** Accounts: an account id is created once; a second create with the same id fails instead of resetting balances. */
export const ACCOUNT_IS_NEW = 'attribute_not_exists(accountId)';

/**
 * Accounts: credit is added only to an account that exists (an Update would otherwise create a stub
 * item), and credit stays a safe JS integer (nano-USD ≤ Number.MAX_SAFE_INTEGER, about $9M) so it reads back
 * exactly. `:ceiling` = MAX_SAFE_INTEGER − the amount added.
 */
export const ACCOUNT_EXISTS_AND_CREDIT_FITS = 'attribute_exists(accountId) AND creditNanoUsd <= :ceiling';

/** Keys: a key hash is written once (a collision of 256-bit secrets would be a bug, not a key). */
export const KEY_IS_NEW = 'attribute_not_exists(keyHash)';

/** Accounts: keyCount ≤ MAX_KEYS_PER_ACCOUNT (spec §8: at most 5 keys). `:max` = the limit. */
export const ACCOUNT_EXISTS_AND_HAS_KEY_ROOM = 'attribute_exists(accountId) AND keyCount < :max';

/**
 * Keys: only the owning account changes or deletes a key, and a deleted key never comes back (keyCount
 * is decremented once per key). `:deleted` = 'deleted', `:revoked` = 'revoked' (older rows).
 */
export const KEY_IS_LIVE_AND_OWNED = 'accountId = :accountId AND #status <> :deleted AND #status <> :revoked';

/**
 * Accounts: a map attribute (`#map`: the per-key map `keys`, the BYOK map `byok`) is added once, to an
 * existing account that lacks it (never overwritten).
 */
export const ACCOUNT_EXISTS_WITHOUT_MAP = 'attribute_exists(accountId) AND attribute_not_exists(#map)';

/**
 * Accounts: a key's limit is changed relative to the limit it had when read (optimistic concurrency:
 * `leftNanoUsd` is moved by the difference, so a concurrent change must not be overwritten).
 * `:oldLimit` = the limit read.
 */
export const KEY_STATE_LIMIT_UNCHANGED = 'attribute_exists(#keys.#h) AND #keys.#h.limitNanoUsd = :oldLimit';

/** Accounts: the key's entry exists (it is being changed, not created by accident). */
export const KEY_STATE_EXISTS = 'attribute_exists(#keys.#h)';

/**
 * Accounts (root item): the account still has the number of fund shards a key write was planned for,
 * so the write covers every shard item (a concurrent `accounts shards` makes it plan again).
 * `:shards` = the count read.
 */
export const ACCOUNT_SHARDS_UNCHANGED = '(attribute_not_exists(shards) OR shards = :shards)';

/** Accounts (a fund shard item): the shard exists (an Update would otherwise create a stub item). */
export const SHARD_EXISTS = 'attribute_exists(accountId)';

/**
 * Accounts (root item), when fund shards are added: no key was created, deleted, enabled or disabled
 * since the root was read, so the new shards get every live key's entry as it is. `:keyCount` = the
 * count read; each key's `#keys.#kN.#status = :sN` is appended per key.
 */
export const ACCOUNT_KEYS_UNCHANGED = 'keyCount = :keyCount';

/**
 * Accounts: a self-serve account's free tokens are granted once per sign-in email. The marker item
 * `freeGrant#<sha256(email)>` is put with the account in one transaction, and only if new.
 */
export const FREE_GRANT_IS_NEW = 'attribute_not_exists(accountId)';

/**
 * Accounts (a sign-up counter item, accounts/signup-network.ts): the network has a free-grant slot left
 * today. `#grants` = `grants`; `:limit` = SIGNUP_GRANTS_PER_IP_PER_DAY.
 */
export const SIGNUP_NETWORK_HAS_ROOM = 'attribute_not_exists(#grants) OR #grants < :limit';

/** Accounts: keyCount never goes below zero. */
export const ACCOUNT_EXISTS_AND_HAS_KEYS = 'attribute_exists(accountId) AND keyCount > :zero';

/** Ledger: one entry per request id, so a replayed settle is a no-op, not a double charge. */
export const LEDGER_ENTRY_IS_NEW = 'attribute_not_exists(requestId)';

/**
 * Accounts: a hold is placed once per request id: its inline record `holds.<requestId>` is new
 * (`#holds.#rid` = the path; billing/hold-plan.ts substitutes its own placeholders). A retried write
 * whose first attempt landed fails here, and ALL_OLD shows the hold that stands.
 */
export const HOLD_IS_NEW = 'attribute_not_exists(#holds.#rid)';

/**
 * Accounts: a hold is settled (or cancelled) once: only while its inline record `holds.<requestId>`
 * is on the account item; the settle REMOVEs it in the same write. With the ledger's
 * LEDGER_ENTRY_IS_NEW in the settle's transaction, every settle path — in-process, the settle queue,
 * the orphan sweep, the admin CLI — is idempotent on the request id. `#holds.#rid` = the path.
 */
export const HOLD_IS_PENDING = 'attribute_exists(#holds.#rid)';

/**
 * Ledger: a payment entry (a top-up, an auto top-up, a dispute: `pay_<ms>_<stripe id>`) is written
 * once, in the transaction that moves its money, so a duplicate or concurrent webhook moves it once.
 */
export const PAYMENT_ENTRY_IS_NEW = 'attribute_not_exists(requestId)';

/**
 * Ledger: a charge's refund entry holds the charge's cumulative refunded amount; it moves forward only
 * from the amount read (`:old` cents), so each refunded cent is taken back once, whatever the order.
 */
export const REFUND_ENTRY_UNCHANGED = 'amountCents = :old';

/** Accounts: a debit (refund, dispute) lands only on an account that exists. */
export const ACCOUNT_EXISTS = 'attribute_exists(accountId)';

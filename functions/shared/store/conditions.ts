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

/** Keys: only the owning account revokes a key, and only once (keyCount is decremented once per key). */
export const KEY_IS_ACTIVE_AND_OWNED = 'accountId = :accountId AND #status = :active';

/** Accounts: keyCount never goes below zero. */
export const ACCOUNT_EXISTS_AND_HAS_KEYS = 'attribute_exists(accountId) AND keyCount > :zero';

/** Ledger: one entry per request id, so a replayed settle is a no-op, not a double charge. */
export const LEDGER_ENTRY_IS_NEW = 'attribute_not_exists(requestId)';

/** Accounts: free tokens never go negative. `:free` = the free tokens this settle consumes. */
export const ACCOUNT_EXISTS_AND_HAS_FREE_TOKENS = 'attribute_exists(accountId) AND freeTokens >= :free';

/**
 * Ledger: a hold is settled (or cancelled) once: only while its item still says `held`. Every settle
 * path — in-process, the settle queue, the orphan sweep, the admin CLI — is idempotent on the request
 * id through this condition. `#status` = `status`, `:held` = `held`.
 */
export const HOLD_IS_PENDING = '#status = :held';

/**
 * The hold's conditions on the account item (billing/hold-write.ts builds them per request; each
 * clause is one invariant):
 * - `freeTokens >= :f` (or `= :f` when the hold takes them all): available free tokens never negative,
 *   and credit is held only when no free tokens are left;
 * - `creditNanoUsd >= :c`: available credit never negative (held amounts count as spent);
 * - `keys.<h16>.status = active`: a disabled or deleted key is refused at once, in every container;
 * - `keys.<h16>.leftNanoUsd >= :c` in the current window (or the roll to a new window): a key never
 *   holds beyond its spend limit;
 * - `rpmWindow = :minute AND rpmCount < :rpm` (or a new minute), `inflight < :concurrent`, on the
 *   account and on the key: the rate limits.
 */
export const HOLD_CONDITIONS_DOC = 'billing/hold-write.ts';

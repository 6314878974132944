/**
 * Accounts: creating, reading and crediting one (through store/account-item.ts, the accounts table's
 * owner, which declares every attribute). Root item (DATA-MODEL §2): `{ accountId, email?, keyCount, freeTokens,
 * heldFreeTokens, creditNanoUsd, heldNanoUsd, purchasedNanoUsd, usedNanoUsd, usedFreeTokens, inflight,
 * shards?, createdAt, keys: {}, byok: {}, holds: {} }` (money in nano-USD, see money/money.ts; holds in
 * billing/hold.ts, each in flight kept inline in `holds`). `keys` maps the first 16 hex characters of each key's hash to its per-key state,
 * written with the key row in one transaction (keys/api-key-store.ts, keys/api-key-update.ts).
 */
import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import * as z from '../validation/zod';
import { InvalidRequestError } from '../errors/gateway-errors';
import { ACCOUNT_EXISTS_AND_CREDIT_FITS, ACCOUNT_IS_NEW } from '../store/conditions';
import { putAccountItem, readAccountItem, updateAccountItem } from '../store/account-item';
import { AccountExistsError, AccountNotFoundError } from './account-errors';
import { NEW_ACCOUNT_FREE_TOKENS } from './limits';

/** One account as stored. */
export interface Account {
  accountId: string;
  /** Active API keys, 0..MAX_KEYS_PER_ACCOUNT. */
  keyCount: number;
  /** Free tokens available (not held; input and output alike); never negative. */
  freeTokens: number;
  /** Free tokens held by requests in flight. */
  heldFreeTokens: number;
  /**
   * Prepaid credit available (not held), nano-USD (1e-9 USD). Never below zero except by the bounded
   * estimate error documented in billing/settle.ts (an upstream counting more than our margin held).
   */
  creditNanoUsd: number;
  /** Credit held by requests in flight, nano-USD. */
  heldNanoUsd: number;
  /** Lifetime credit added (top-ups), nano-USD; 0 = free tier. */
  purchasedNanoUsd: number;
  /** Lifetime credit spent, nano-USD. */
  usedNanoUsd: number;
  /** Lifetime free tokens spent. */
  usedFreeTokens: number;
  /** Fund shards (DATA-MODEL §5); 1 = the single-item layout. */
  shards: number;
  /** ISO 8601 creation time. */
  createdAt: string;
  /** Sign-in email (self-serve accounts; also the `byEmail` index key). */
  email?: string | undefined;
  /**
   * Why a self-serve account started with no free tokens: its address's person already had the grant,
   * its domain is a disposable one (accounts/disposable-domain.ts), or its client network had used up
   * its sign-up grants for the day (accounts/signup-network.ts). Absent when it got the grant.
   */
  freeGrantWithheld?: FreeGrantWithheld | undefined;
}

/** Reasons a sign-up got no free-token grant ({@link Account.freeGrantWithheld}). */
export type FreeGrantWithheld = 'already_granted' | 'disposable_domain' | 'ip_limit';

/** Parses a stored account item; tolerant of extra attributes (the `keys` and `byok` maps are read elsewhere). */
export const accountItemSchema = z.object({
  accountId: z.string(),
  keyCount: z.number().check(z.int()),
  freeTokens: z.number().check(z.int()),
  heldFreeTokens: z._default(z.number().check(z.int()), 0),
  creditNanoUsd: z.number().check(z.int()),
  heldNanoUsd: z._default(z.number().check(z.int()), 0),
  purchasedNanoUsd: z._default(z.number().check(z.int()), 0),
  usedNanoUsd: z._default(z.number().check(z.int()), 0),
  usedFreeTokens: z._default(z.number().check(z.int()), 0),
  shards: z._default(z.number().check(z.int()), 1),
  createdAt: z.string(),
  email: z.optional(z.string()),
  freeGrantWithheld: z.optional(z.enum(['already_granted', 'disposable_domain', 'ip_limit'])),
});

/** Options of {@link createAccount}. */
export interface CreateAccountOptions {
  /** Default: `acct_` + 24 random hex characters. */
  accountId?: string;
  /** Default {@link NEW_ACCOUNT_FREE_TOKENS} (200,000). Non-negative integer. */
  freeTokens?: number;
  /** Default 0. Non-negative integer nano-USD; counts as purchased (a paid account's rate limits). */
  creditNanoUsd?: number;
  /** Sign-in email, stored as given (the `byEmail` index finds it lower-cased: {@link normaliseEmail}). */
  email?: string;
}

/** The form an email is stored and looked up in: trimmed, lower case. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

const nonNegativeSafeInt = (n: number) => Number.isSafeInteger(n) && n >= 0;

/** A new random account id. */
export function newAccountId(): string {
  return `acct_${randomBytes(12).toString('hex')}`;
}

/**
 * Creates an account with keyCount 0.
 * @throws InvalidRequestError for negative or non-integer amounts; AccountExistsError (409) when the id
 *         is taken; StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function createAccount(opts: CreateAccountOptions = {}): Promise<Account> {
  const credit = opts.creditNanoUsd ?? 0;
  const account: Account = {
    accountId: opts.accountId ?? newAccountId(),
    keyCount: 0,
    freeTokens: opts.freeTokens ?? NEW_ACCOUNT_FREE_TOKENS,
    heldFreeTokens: 0,
    creditNanoUsd: credit,
    heldNanoUsd: 0,
    purchasedNanoUsd: credit,
    usedNanoUsd: 0,
    usedFreeTokens: 0,
    shards: 1,
    createdAt: new Date().toISOString(),
    ...(opts.email === undefined ? {} : { email: normaliseEmail(opts.email) }),
  };
  if (!nonNegativeSafeInt(account.freeTokens) || !nonNegativeSafeInt(account.creditNanoUsd)) {
    throw new InvalidRequestError('freeTokens and creditNanoUsd must be non-negative integers.');
  }
  try {
    await putAccountItem({ Item: newAccountItem(account), ConditionExpression: ACCOUNT_IS_NEW });
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw new AccountExistsError(account.accountId);
    throw err;
  }
  return account;
}

/**
 * The stored item of a new account: its fields plus the empty per-key, BYOK and inline-holds maps
 * (DATA-MODEL §2: created `{}` with the account, so a key's entry or a hold can be SET inside them),
 * zero holds and nothing in flight.
 */
export function newAccountItem(account: Account): Record<string, unknown> {
  return { ...account, heldNanoUsd: 0, heldFreeTokens: 0, inflight: 0, keys: {}, byok: {}, holds: {} };
}

/**
 * The account, or `undefined` when there is none. `consistent` asks for a strongly consistent read
 * (twice the read cost; DynamoDB Developer Guide, "Read consistency").
 * @throws StoreUnavailableError (503) when DynamoDB is unavailable.
 */
export async function getAccount(accountId: string, opts: { consistent?: boolean } = {}): Promise<Account | undefined> {
  const item = await readAccountItem(accountId, opts);
  return item ? accountItemSchema.parse(item) : undefined;
}

/**
 * Adds `nanoUsd` (positive integer nano-USD) to the account's credit (shard 0, the bank) and to its
 * lifetime purchases with one atomic ADD, and returns the account after the change. The next hold
 * that needs it sees it (a failed condition returns the new balance).
 * @throws InvalidRequestError when the amount is not a positive safe integer or the balance would pass
 *         Number.MAX_SAFE_INTEGER nano-USD; AccountNotFoundError (404); StoreUnavailableError (503).
 */
export async function addCredit(accountId: string, nanoUsd: number): Promise<Account> {
  if (!Number.isSafeInteger(nanoUsd) || nanoUsd <= 0) {
    throw new InvalidRequestError('Credit to add must be a positive integer number of nano-USD.');
  }
  try {
    const item = await updateAccountItem(accountId, {
      // purchasedNanoUsd counts every top-up: 0 means the free tier (DATA-MODEL §2).
      UpdateExpression: 'ADD creditNanoUsd :amount, purchasedNanoUsd :amount',
      ConditionExpression: ACCOUNT_EXISTS_AND_CREDIT_FITS,
      ExpressionAttributeValues: { ':amount': nanoUsd, ':ceiling': Number.MAX_SAFE_INTEGER - nanoUsd },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return accountItemSchema.parse(item);
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    if (!err.Item) throw new AccountNotFoundError(accountId);
    throw new InvalidRequestError('That much credit would exceed the largest balance an account can hold.');
  }
}

/**
 * Self-serve accounts: the account of a dashboard user is created on the first authenticated call to
 * the account API, with the Cognito `sub` as its id and 200,000 free tokens — granted exactly once:
 *
 * - the account item is put only if absent (`attribute_not_exists`), so retries and a race of first
 *   calls create it once (the losers read the winner's item);
 * - in the same transaction a marker item `freeGrant#<sha256(identity)>` is put only if absent, so a
 *   person gets the free tokens once, even after their Cognito user is deleted and signs up again (a new
 *   `sub`), and however they dress up their address (`+tags`, Gmail's dots: the identity is
 *   accounts/grant-email.ts's normal form): such an account is created with 0 free tokens;
 * - an address on a disposable (throwaway) domain (accounts/disposable-domain.ts) gets no grant and
 *   puts no marker, so its person can still have the grant later from a real address;
 * - when the client's address is known, the grant also takes one of its network's daily slots
 *   (accounts/signup-network.ts), in the same transaction: with none left the account is created
 *   without the grant (and puts no marker). A sign-up withheld for another reason takes no slot.
 * An account created without the grant says why in `freeGrantWithheld` (GET /v1/account shows it);
 * when both the marker and the network say no, the marker's `already_granted` is given.
 *
 * Why not (only) a Cognito post-confirmation trigger: the account must exist however the user was
 * confirmed (admin confirmation, a trigger that failed and was not retried), and a trigger adds a
 * function and a second code path to keep idempotent. Creating on first use needs neither, and works
 * the same with the local emulator.
 */
import { createHash } from 'node:crypto';
import { config } from '../config/env';
import { atOnce, retrying, TryAgain } from '../retry/retry';
import { ACCOUNT_IS_NEW, FREE_GRANT_IS_NEW } from '../store/conditions';
import { accountPutItem, queryAccountItems, readAccountItem } from '../store/account-item';
import { BY_EMAIL_INDEX } from '../store/table-schemas';
import { transactWrite, type TransactItems } from '../store/transact-write';
import { cancellationCodes } from '../store/transaction-retry';
import { accountItemSchema, newAccountItem, normaliseEmail, type Account, type FreeGrantWithheld } from './account-store';
import { isDisposableEmail } from './disposable-domain';
import { freeGrantIdentity } from './grant-email';
import { NEW_ACCOUNT_FREE_TOKENS } from './limits';
import { signupNetwork, signupSlotUpdate } from './signup-network';

/** Positions of the items in the account-creation transaction (cancellation reasons come in this order). */
const CREATE_ITEM = { account: 0, freeGrantMarker: 1, networkSlot: 2 } as const;

/** What is known of a sign-up beyond its user (the account API's request). */
export interface SignupContext {
  /** The client's IP address as the account function knows it (account-api/client-address.ts); undefined = unknown, not counted. */
  clientAddress?: string | undefined;
}

/** The pk of the marker item saying the person behind `email` has had their free tokens (grant-email.ts). */
export function freeGrantMarkerId(email: string): string {
  return `freeGrant#${createHash('sha256').update(freeGrantIdentity(email), 'utf8').digest('hex')}`;
}

/**
 * The account of dashboard user `sub`, created on first call (see the file comment).
 * @param email the user's verified email, needed only when the account does not exist yet (called at
 *        most once per account, e.g. to ask Cognito for it).
 * @param signup the client's address, for the per-network limit (`SIGNUP_GRANTS_PER_IP_PER_DAY`).
 * @returns the account and whether this call created it.
 * @throws StoreUnavailableError (503) when DynamoDB (or the email lookup) is unavailable; ConfigError
 *         when a setting is unusable.
 */
export async function ensureSelfServeAccount(
  sub: string,
  email: () => Promise<string>,
  signup: SignupContext = {},
): Promise<{ account: Account; created: boolean }> {
  const existing = await readAccount(sub);
  if (existing) return { account: existing, created: false };
  const address = normaliseEmail(await email());
  const limit = config().SIGNUP_GRANTS_PER_IP_PER_DAY;
  const network = limit > 0 && signup.clientAddress !== undefined ? signupNetwork(signup.clientAddress) : undefined;
  let withheld: FreeGrantWithheld | undefined = isDisposableEmail(address) ? 'disposable_domain' : undefined;
  // Two tries at most: the second, after the grant was refused, without it (and so without a grant's conflict).
  const created = await retrying(async (): Promise<Account | 'exists'> => {
    const freeTokens = withheld === undefined ? NEW_ACCOUNT_FREE_TOKENS : 0;
    const account: Account = {
      accountId: sub,
      email: address,
      keyCount: 0,
      freeTokens,
      heldFreeTokens: 0,
      creditNanoUsd: 0,
      heldNanoUsd: 0,
      purchasedNanoUsd: 0,
      usedNanoUsd: 0,
      usedFreeTokens: 0,
      shards: 1,
      createdAt: new Date().toISOString(),
      ...(freeTokens > 0 ? {} : { freeGrantWithheld: withheld }),
    };
    const accountPut = accountPutItem({ Item: newAccountItem(account), ConditionExpression: ACCOUNT_IS_NEW });
    const marker = { accountId: freeGrantMarkerId(address), grantedTo: sub, freeTokens, createdAt: account.createdAt };
    const grantItems: TransactItems =
      freeTokens > 0
        ? [
            accountPutItem({ Item: marker, ConditionExpression: FREE_GRANT_IS_NEW }),
            ...(network === undefined ? [] : [signupSlotUpdate(network, limit, Date.parse(account.createdAt))]),
          ]
        : [];
    try {
      await transactWrite([accountPut, ...grantItems]);
      return account;
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes?.[CREATE_ITEM.account] === 'ConditionalCheckFailed') return 'exists'; // created meanwhile by a concurrent first call
      // This email already had its grant, or the network's slots for today are taken: no grant, no slot.
      if (codes?.[CREATE_ITEM.freeGrantMarker] === 'ConditionalCheckFailed') withheld = 'already_granted';
      else if (codes?.[CREATE_ITEM.networkSlot] === 'ConditionalCheckFailed') withheld = 'ip_limit';
      else throw err;
      throw new TryAgain('free grant withheld');
    }
  }, atOnce(2));
  if (created !== 'exists') return { account: created, created: true };
  const winner = await readAccount(sub);
  if (!winner) throw new Error(`account ${sub} vanished after its creation`);
  return { account: winner, created: false };
}

async function readAccount(accountId: string): Promise<Account | undefined> {
  const item = await readAccountItem(accountId, { consistent: true });
  return item ? accountItemSchema.parse(item) : undefined;
}

/**
 * The ids of the accounts whose email is `email` (case-insensitive), via the `byEmailKeys` index
 * (eventually consistent: an account created a moment ago may be missing for a moment).
 * @throws StoreUnavailableError (503).
 */
export async function findAccountIdsByEmail(email: string): Promise<string[]> {
  const out = await queryAccountItems({
    IndexName: BY_EMAIL_INDEX,
    KeyConditionExpression: 'email = :email',
    ExpressionAttributeValues: { ':email': normaliseEmail(email) },
  });
  return (out.Items ?? []).map((i) => String(i.accountId));
}

/**
 * Bring-your-own-key entries on the account item: `byok.<provider> = {ciphertext, encryptedDataKey,
 * last4, allowFallback, createdAt, updatedAt}` (DATA-MODEL §2). The provider key is envelope-encrypted
 * (envelope.ts) before it reaches DynamoDB; only its last 4 characters are kept in clear, for display.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import * as z from '../../validation/zod';
import { InvalidRequestError, NotFoundError } from '../../errors/gateway-errors';
import { byokProviderNames, PROVIDER_NAMES, type ProviderName } from '../../providers/manifest';
import { readAccountItem, updateAccountItem } from '../../store/account-item';
import { AccountNotFoundError } from '../account-errors';
import { isMissingDocumentPath, withAccountMap } from '../keys/key-account-entry';
import { byokContext, seal, type SealedSecret } from './envelope';

/** The account item's BYOK map attribute. */
export const BYOK_MAP = 'byok';

/** One stored provider key. */
export interface ByokEntry extends SealedSecret {
  /** The key's last 4 characters (display only). */
  last4: string;
  /** When the user's key fails (refused, down), may the platform's own key serve instead? */
  allowFallback: boolean;
  /** ISO 8601. */
  createdAt: string;
  updatedAt?: string;
}

/** Tolerant parse of the stored map. */
export const byokMapSchema = z.record(
  z.string(),
  z.object({
    ciphertext: z.string(),
    encryptedDataKey: z.string(),
    last4: z.string(),
    allowFallback: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.optional(z.string()),
  }),
);

/** Shortest and longest key accepted (characters). Real `sk-` keys are 40 to ~200. */
const MIN_KEY_LENGTH = 20;
const MAX_KEY_LENGTH = 512;

/**
 * The provider named in a BYOK route, if users may attach a key for it.
 * @throws NotFoundError (404, code `byok_provider_unknown`) otherwise, listing the ones they may.
 */
export function byokProvider(name: string): ProviderName {
  const allowed = byokProviderNames();
  const found = (PROVIDER_NAMES as readonly string[]).includes(name) ? (name as ProviderName) : undefined;
  if (found === undefined || !allowed.includes(found)) {
    throw new NotFoundError(`You can attach your own key for ${allowed.join(', ')}; not for "${name}".`, { code: 'byok_provider_unknown' });
  }
  return found;
}

/**
 * Checks a provider key's shape: begins with `sk-` (the spec), 20 to 512 printable characters, no spaces.
 * @throws InvalidRequestError (400, param `key`).
 */
export function validateProviderKey(key: string): void {
  if (!key.startsWith('sk-'))
    throw new InvalidRequestError('Only provider keys beginning with "sk-" can be attached.', { param: 'key', code: 'invalid_byok_key' });
  if (key.length < MIN_KEY_LENGTH || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new InvalidRequestError(`The key must be ${MIN_KEY_LENGTH} to ${MAX_KEY_LENGTH} printable characters without spaces.`, {
      param: 'key',
      code: 'invalid_byok_key',
    });
  }
}

/**
 * The account's BYOK entries (strongly consistent read, projected to the map).
 * @throws StoreUnavailableError (503).
 */
export async function readByokEntries(accountId: string, opts: { consistent?: boolean } = {}): Promise<Record<string, ByokEntry>> {
  const item = await readAccountItem(accountId, { projection: '#byok', names: { '#byok': BYOK_MAP }, consistent: opts.consistent ?? true });
  return byokMapSchema.parse(item?.[BYOK_MAP] ?? {});
}

/**
 * Attaches (or replaces) the account's key for `provider`, encrypted.
 * @throws InvalidRequestError (400) for a key not beginning with `sk-`; AccountNotFoundError (404);
 *         ConfigUnavailableError (503) when BYOK is not configured, StoreUnavailableError (503) when the store is unavailable.
 */
export async function putByokKey(accountId: string, provider: ProviderName, key: string, allowFallback: boolean): Promise<ByokEntry> {
  validateProviderKey(key);
  const now = new Date().toISOString();
  const sealed = await seal(key, byokContext(accountId, provider));
  const entry: ByokEntry = { ...sealed, last4: key.slice(-4), allowFallback, createdAt: now, updatedAt: now };
  await setEntry(accountId, provider, entry);
  return entry;
}

/**
 * Changes the fallback switch of an attached key.
 * @throws NotFoundError (404, `byok_key_not_found`) when no key is attached for `provider`; StoreUnavailableError (503).
 */
export async function setByokFallback(accountId: string, provider: ProviderName, allowFallback: boolean): Promise<ByokEntry> {
  try {
    const item = await updateAccountItem(accountId, {
      UpdateExpression: 'SET #byok.#p.allowFallback = :f, #byok.#p.updatedAt = :now',
      ConditionExpression: 'attribute_exists(#byok.#p)',
      ExpressionAttributeNames: { '#byok': BYOK_MAP, '#p': provider },
      ExpressionAttributeValues: { ':f': allowFallback, ':now': new Date().toISOString() },
      ReturnValues: 'ALL_NEW',
    });
    const entry = byokMapSchema.parse(item?.[BYOK_MAP] ?? {})[provider];
    if (!entry) throw noKey(provider);
    return entry;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException || isMissingDocumentPath(err)) throw noKey(provider);
    throw err;
  }
}

/**
 * Removes the key attached for `provider`.
 * @throws NotFoundError (404) when none is attached; StoreUnavailableError (503).
 */
export async function deleteByokKey(accountId: string, provider: ProviderName): Promise<void> {
  try {
    await updateAccountItem(accountId, {
      UpdateExpression: 'REMOVE #byok.#p',
      ConditionExpression: 'attribute_exists(#byok.#p)',
      ExpressionAttributeNames: { '#byok': BYOK_MAP, '#p': provider },
    });
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException || isMissingDocumentPath(err)) throw noKey(provider);
    throw err;
  }
}

function noKey(provider: string): NotFoundError {
  return new NotFoundError(`No ${provider} key is attached to this account.`, { code: 'byok_key_not_found' });
}

/** SET byok.<provider>; creates the map on accounts that predate it. */
async function setEntry(accountId: string, provider: ProviderName, entry: ByokEntry): Promise<void> {
  try {
    await withAccountMap(accountId, BYOK_MAP, () =>
      updateAccountItem(accountId, {
        UpdateExpression: 'SET #byok.#p = :entry',
        ConditionExpression: 'attribute_exists(accountId)',
        ExpressionAttributeNames: { '#byok': BYOK_MAP, '#p': provider },
        ExpressionAttributeValues: { ':entry': entry },
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw new AccountNotFoundError(accountId);
    throw err;
  }
}

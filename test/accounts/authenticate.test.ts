import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { generateApiKey } from '../../functions/shared/accounts/api-key';
import { reloadConfig } from '../../functions/shared/config/env';
import { clearKeyCache } from '../../functions/shared/accounts/authenticate';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { authenticate } from '../../functions/shared/accounts/authenticate';
import { revokeKey } from '../../functions/shared/accounts/keys/api-key-update';
import { AuthenticationError } from '../../functions/shared/errors/gateway-errors';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { countStoreCalls, createTestTables } from '../support/tables';
import { advanceClock, resetClock } from '../support/clock';

let store: { readonly calls: number };
beforeAll(async () => {
  await createTestTables('auth');
  store = countStoreCalls();
});
beforeEach(() => {
  clearKeyCache();
  delete process.env.KEY_CACHE_TTL_MS;
  reloadConfig();
});
afterEach(() => {
  resetClock();
  delete process.env.KEY_CACHE_TTL_MS;
  reloadConfig();
});

async function newKey() {
  const { accountId } = await createAccount();
  return { accountId, ...(await createKey(accountId, 'test')) };
}

describe('authenticate', () => {
  it('returns the account of a valid key, even right after creation', async () => {
    const k = await newKey();
    await expect(authenticate(k.key)).resolves.toEqual({ accountId: k.accountId, keyHash: k.keyHash });
  });

  it('answers an unknown key with 401 invalid_api_key', async () => {
    const err = await authenticate(generateApiKey().key).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('serves a warm container from its cache without reading DynamoDB', async () => {
    const k = await newKey();
    const cold = store.calls;
    await authenticate(k.key);
    expect(store.calls).toBe(cold + 1); // the counter sees reads
    const before = store.calls;
    for (let i = 0; i < 10; i++) await authenticate(k.key);
    expect(store.calls).toBe(before);
  });

  it('rejects a revoked key once the cache TTL has passed in another container', async () => {
    // Long enough for the revoke and the second call to land within it on a loaded machine; then the
    // cache's clock (the billing clock) is moved past it instead of waiting.
    const ttlMs = 1_000;
    process.env.KEY_CACHE_TTL_MS = String(ttlMs);
    reloadConfig();
    const k = await newKey();
    await authenticate(k.key); // cached here, before:
    await revokeKeyElsewhere(k.keyHash);
    await expect(authenticate(k.key)).resolves.toMatchObject({ accountId: k.accountId }); // within TTL: documented
    advanceClock(ttlMs); // a TTL after the entry was cached (or later): it has expired
    await expect(authenticate(k.key)).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('rejects a key revoked in this container at once', async () => {
    const k = await newKey();
    await authenticate(k.key);
    await revokeKey(k.accountId, k.keyHash);
    await expect(authenticate(k.key)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('caches an unknown key only briefly', async () => {
    const key = generateApiKey().key;
    await expect(authenticate(key)).rejects.toBeInstanceOf(AuthenticationError);
    const before = store.calls;
    await expect(authenticate(key)).rejects.toBeInstanceOf(AuthenticationError);
    expect(store.calls).toBe(before);
  });
});

/** Marks the key revoked in DynamoDB without touching this container's cache, as another Lambda's revoke would. */
async function revokeKeyElsewhere(keyHash: string) {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().keys,
      Key: { keyHash },
      UpdateExpression: 'SET #s = :r',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':r': 'revoked' },
    }),
  );
}

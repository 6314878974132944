import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { AccountNotFoundError, KeyLimitExceededError, KeyNotFoundError } from '../../functions/shared/accounts/account-errors';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { createKey, listKeys } from '../../functions/shared/accounts/keys/api-key-store';
import { revokeKey } from '../../functions/shared/accounts/keys/api-key-update';
import { MAX_KEYS_PER_ACCOUNT } from '../../functions/shared/accounts/limits';
import { createTestTables } from '../support/tables';

beforeAll(async () => {
  await createTestTables('keys');
});

const keyCount = async (accountId: string) => (await getAccount(accountId, { consistent: true }))?.keyCount;

/** The account item's per-key map (DATA-MODEL §2). */
async function keyEntries(accountId: string): Promise<Record<string, Record<string, unknown>> | undefined> {
  const out = await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }));
  return out.Item?.keys as Record<string, Record<string, unknown>> | undefined;
}

describe('key store', () => {
  it('lets 20 concurrent creates make exactly 5 keys; the other 15 get KeyLimitExceededError', async () => {
    const { accountId } = await createAccount();
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => createKey(accountId, `k${i}`)));
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(created).toHaveLength(MAX_KEYS_PER_ACCOUNT);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(KeyLimitExceededError);
      expect(r.reason).toMatchObject({ status: 409, type: 'invalid_request_error', code: 'key_limit_exceeded' });
    }
    expect(await keyCount(accountId)).toBe(5);
    // One entry per created key, written in the key's own transaction.
    const entries = await keyEntries(accountId);
    expect(Object.keys(entries ?? {}).sort()).toEqual(created.map((r) => (r as PromiseFulfilledResult<{ keyHash: string }>).value.keyHash.slice(0, 16)).sort());
    for (const e of Object.values(entries ?? {})) expect(e).toMatchObject({ status: 'active', heldNanoUsd: 0, usedNanoUsd: 0 });
    const keys = await listKeys(accountId);
    expect(keys.filter((k) => k.status === 'active')).toHaveLength(5);

    const victim = keys[0]!;
    const revoked = await revokeKey(accountId, victim.keyHashPrefix);
    expect(revoked).toMatchObject({ keyHashPrefix: victim.keyHashPrefix, status: 'deleted' });
    expect(await keyCount(accountId)).toBe(4);
    await expect(createKey(accountId, 'again')).resolves.toMatchObject({ name: 'again' });
    expect(await keyCount(accountId)).toBe(5);
    await expect(createKey(accountId, 'one too many')).rejects.toBeInstanceOf(KeyLimitExceededError);
  });

  it('lists keys without the key or its full hash', async () => {
    const { accountId } = await createAccount();
    const created = await createKey(accountId, ' laptop ');
    expect(created.name).toBe('laptop');
    const [listed] = await listKeys(accountId);
    expect(listed).toEqual({
      keyHashPrefix: created.keyHash.slice(0, 12),
      name: 'laptop',
      hint: created.hint,
      status: 'active',
      createdAt: created.createdAt,
    });
    expect(JSON.stringify(listed)).not.toContain(created.key.slice(7));
  });

  it('revokes by hint or full hash, once, and only within the owning account', async () => {
    const a = await createAccount();
    const b = await createAccount();
    const k1 = await createKey(a.accountId, 'one');
    const k2 = await createKey(a.accountId, 'two');
    await expect(revokeKey(b.accountId, k1.keyHash)).rejects.toBeInstanceOf(KeyNotFoundError);
    await revokeKey(a.accountId, k1.hint);
    await expect(revokeKey(a.accountId, k1.hint)).rejects.toBeInstanceOf(KeyNotFoundError);
    await revokeKey(a.accountId, k2.keyHash);
    expect(await keyCount(a.accountId)).toBe(0);
    expect((await listKeys(a.accountId)).map((k) => k.status)).toEqual(['deleted', 'deleted']);
    expect(await keyEntries(a.accountId)).toEqual({});
  });

  it('keeps keyCount right when the same key is revoked concurrently', async () => {
    const { accountId } = await createAccount();
    const k = await createKey(accountId, 'x');
    await createKey(accountId, 'y');
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => revokeKey(accountId, k.keyHash)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await keyCount(accountId)).toBe(1);
  });

  it('adds the per-key map to an account made before it existed, then keeps key and entry together', async () => {
    const accountId = `acct_legacy${Date.now()}`;
    await documentClient().send(
      new PutCommand({
        TableName: tableNames().accounts,
        Item: { accountId, keyCount: 0, freeTokens: 10, creditNanoUsd: 0, createdAt: new Date().toISOString() },
      }),
    );
    const k = await createKey(accountId, 'old account');
    expect(Object.keys((await keyEntries(accountId)) ?? {})).toEqual([k.keyHash.slice(0, 16)]);
    await revokeKey(accountId, k.keyHash);
    expect(await keyEntries(accountId)).toEqual({});
    expect(await keyCount(accountId)).toBe(0);
  });

  it('refuses keys for an unknown account', async () => {
    await expect(createKey('acct_nobody', 'x')).rejects.toBeInstanceOf(AccountNotFoundError);
  });
});

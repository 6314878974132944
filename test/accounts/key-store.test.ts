import { beforeAll, describe, expect, it } from 'vitest';
import { AccountNotFoundError, KeyLimitExceededError, KeyNotFoundError } from '../../functions/shared/accounts/account-errors';
import { createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { createKey, listKeys, revokeKey } from '../../functions/shared/accounts/key-store';
import { MAX_KEYS_PER_ACCOUNT } from '../../functions/shared/accounts/limits';
import { createTestTables } from '../support/tables';

beforeAll(async () => {
  await createTestTables('keys');
});

const keyCount = async (accountId: string) => (await getAccount(accountId, { consistent: true }))?.keyCount;

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
    const keys = await listKeys(accountId);
    expect(keys.filter((k) => k.status === 'active')).toHaveLength(5);

    const victim = keys[0]!;
    const revoked = await revokeKey(accountId, victim.keyHashPrefix);
    expect(revoked).toMatchObject({ keyHashPrefix: victim.keyHashPrefix, status: 'revoked' });
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
      keyHashPrefix: created.keyHash.slice(0, 12), name: 'laptop', hint: created.hint, status: 'active', createdAt: created.createdAt,
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
    expect((await listKeys(a.accountId)).map((k) => k.status)).toEqual(['revoked', 'revoked']);
  });

  it('keeps keyCount right when the same key is revoked concurrently', async () => {
    const { accountId } = await createAccount();
    const k = await createKey(accountId, 'x');
    await createKey(accountId, 'y');
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => revokeKey(accountId, k.keyHash)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await keyCount(accountId)).toBe(1);
  });

  it('refuses keys for an unknown account', async () => {
    await expect(createKey('acct_nobody', 'x')).rejects.toBeInstanceOf(AccountNotFoundError);
  });
});

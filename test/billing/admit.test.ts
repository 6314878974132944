import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addCredit, createAccount } from '../../functions/shared/accounts/account-store';
import { admit } from '../../functions/shared/billing/admit';
import { clearBalanceCache } from '../../functions/shared/billing/balance-cache';
import { AuthenticationError, InsufficientCreditError } from '../../functions/shared/openai/errors';
import { countStoreCalls, createTestTables } from '../support/tables';

let store: { readonly calls: number };
beforeAll(async () => {
  await createTestTables('admit');
  store = countStoreCalls();
});
beforeEach(() => {
  clearBalanceCache();
  delete process.env.ACCOUNT_CACHE_TTL_MS;
});

describe('admit', () => {
  it('returns 402 when the account has no free tokens and no credit', async () => {
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 0 });
    const err = await admit(accountId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientCreditError);
    expect(err).toMatchObject({ status: 402, type: 'insufficient_quota', code: 'insufficient_quota' });
  });

  it('admits an account with free tokens only, or credit only', async () => {
    await expect(admit((await createAccount({ freeTokens: 1, creditNanoUsd: 0 })).accountId)).resolves.toBeUndefined();
    await expect(admit((await createAccount({ freeTokens: 0, creditNanoUsd: 1 })).accountId)).resolves.toBeUndefined();
  });

  it('answers a warm admit without reading DynamoDB', async () => {
    const { accountId } = await createAccount();
    await admit(accountId);
    const before = store.calls;
    for (let i = 0; i < 5; i++) await admit(accountId);
    expect(store.calls).toBe(before);
  });

  it('answers an account that no longer exists with 401', async () => {
    await expect(admit('acct_gone')).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('sees a top-up once the balance cache TTL has passed', async () => {
    process.env.ACCOUNT_CACHE_TTL_MS = '100';
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 0 });
    await expect(admit(accountId)).rejects.toBeInstanceOf(InsufficientCreditError);
    await addCredit(accountId, 5);
    await new Promise((r) => setTimeout(r, 150));
    await expect(admit(accountId)).resolves.toBeUndefined();
  });
});

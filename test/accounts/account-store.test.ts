import { beforeAll, describe, expect, it } from 'vitest';
import { AccountExistsError, AccountNotFoundError } from '../../functions/shared/accounts/account-errors';
import { addCredit, createAccount, getAccount } from '../../functions/shared/accounts/account-store';
import { NEW_ACCOUNT_FREE_TOKENS } from '../../functions/shared/accounts/limits';
import { InvalidRequestError } from '../../functions/shared/errors/gateway-errors';
import { createTestTables } from '../support/tables';

beforeAll(async () => {
  await createTestTables('accounts');
});

describe('account store', () => {
  it('creates an account with 200,000 free tokens, no credit and no keys', async () => {
    const account = await createAccount();
    expect(account).toMatchObject({ keyCount: 0, freeTokens: NEW_ACCOUNT_FREE_TOKENS, creditNanoUsd: 0 });
    expect(NEW_ACCOUNT_FREE_TOKENS).toBe(200_000);
    expect(account.accountId).toMatch(/^acct_[0-9a-f]{24}$/);
    expect(await getAccount(account.accountId, { consistent: true })).toEqual(account);
  });

  it('never overwrites an existing account', async () => {
    const account = await createAccount({ freeTokens: 5 });
    await expect(createAccount({ accountId: account.accountId })).rejects.toBeInstanceOf(AccountExistsError);
    expect((await getAccount(account.accountId, { consistent: true }))?.freeTokens).toBe(5);
  });

  it('adds credit atomically and only to existing accounts', async () => {
    const { accountId } = await createAccount({ creditNanoUsd: 10 });
    await Promise.all(Array.from({ length: 10 }, () => addCredit(accountId, 1_000)));
    expect((await getAccount(accountId, { consistent: true }))?.creditNanoUsd).toBe(10_010);
    await expect(addCredit('acct_nobody', 1)).rejects.toBeInstanceOf(AccountNotFoundError);
    await expect(addCredit(accountId, 0)).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(addCredit(accountId, Number.MAX_SAFE_INTEGER - 5)).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('returns undefined for an unknown account', async () => {
    expect(await getAccount('acct_unknown')).toBeUndefined();
  });
});

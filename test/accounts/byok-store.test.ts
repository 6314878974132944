import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountNotFoundError } from '../../functions/shared/accounts/account-errors';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { deleteByokKey, putByokKey, readByokEntries } from '../../functions/shared/accounts/byok/byok-store';
import { LocalKeyEncryption, setKeyEncryption } from '../../functions/shared/accounts/byok/key-encryption';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

beforeAll(async () => {
  await createTestTables('accounts');
  setKeyEncryption(new LocalKeyEncryption(join(mkdtempSync(join(tmpdir(), 'byok-store-')), 'kek')));
});
afterAll(() => setKeyEncryption(undefined));

/** An account item as written before the BYOK map existed: no `byok` attribute at all. */
async function legacyAccount(): Promise<string> {
  const { accountId } = await createAccount();
  await documentClient().send(new UpdateCommand({ TableName: tableNames().accounts, Key: { accountId }, UpdateExpression: 'REMOVE byok' }));
  return accountId;
}

describe('BYOK store on accounts without the byok map', () => {
  it('attaches a key (the map is created once), and removes it', async () => {
    const accountId = await legacyAccount();
    expect(await readByokEntries(accountId, { consistent: true })).toEqual({});
    const entry = await putByokKey(accountId, 'openai', 'sk-test-legacy-key-000001234', false);
    expect(entry.last4).toBe('1234');
    expect(Object.keys(await readByokEntries(accountId, { consistent: true }))).toEqual(['openai']);
    await deleteByokKey(accountId, 'openai');
    expect(await readByokEntries(accountId, { consistent: true })).toEqual({});
  });

  it('two concurrent attaches to such an account both land', async () => {
    const accountId = await legacyAccount();
    await Promise.all([
      putByokKey(accountId, 'openai', 'sk-a-legacy-key-0000001111', true),
      putByokKey(accountId, 'anthropic', 'sk-b-legacy-key-0000002222', true),
    ]);
    expect(Object.keys(await readByokEntries(accountId, { consistent: true })).sort()).toEqual(['anthropic', 'openai']);
  });

  it('refuses an account that does not exist', async () => {
    await expect(putByokKey('acct_nobody_here', 'openai', 'sk-x-legacy-key-0000009999', false)).rejects.toBeInstanceOf(AccountNotFoundError);
  });
});

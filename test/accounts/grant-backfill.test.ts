import { createHash, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { backfillGrantMarkers } from '../../functions/shared/accounts/grant-backfill';
import { NEW_ACCOUNT_FREE_TOKENS } from '../../functions/shared/accounts/limits';
import { ensureSelfServeAccount } from '../../functions/shared/accounts/self-serve-account';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { createTestTables } from '../support/tables';

beforeAll(async () => {
  await createTestTables('grantbackfill');
});

/**
 * An account as the code before the email normal form left it: the address lower-cased on the account,
 * and its grant marker keyed on that lower-cased address (`freeGrant#<sha256(address)>`).
 */
async function legacyAccount(address: string): Promise<string> {
  const { accountId } = await createAccount({ email: address });
  const legacyMarker = `freeGrant#${createHash('sha256').update(address.trim().toLowerCase(), 'utf8').digest('hex')}`;
  await documentClient().send(
    new PutCommand({ TableName: tableNames().accounts, Item: { accountId: legacyMarker, grantedTo: accountId, freeTokens: NEW_ACCOUNT_FREE_TOKENS } }),
  );
  return accountId;
}

/** The free tokens a new self-serve account for `email` starts with (a new Cognito `sub`). */
async function grantFor(email: string): Promise<number> {
  const { account } = await ensureSelfServeAccount(`sub-${randomBytes(8).toString('hex')}`, async () => email);
  return account.freeTokens;
}

/** A Gmail local part no other test uses. */
const gmailName = () => `u${randomBytes(5).toString('hex')}`;

/**
 * The accounts made before the email normal form: their grant markers were keyed on the lower-cased
 * address, the new ones on the normal form (accounts/grant-email.ts, docs/email-normalisation.md).
 */
describe('free-grant markers of accounts from before the email normal form', () => {
  it('an older account at a plain address (me@gmail.com) already blocks m.e+x@gmail.com: its legacy marker is the normal form', async () => {
    const name = gmailName();
    await legacyAccount(`${name}@gmail.com`);
    expect(await grantFor(`${name.slice(0, 2)}.${name.slice(2)}+x@gmail.com`)).toBe(0);
  });

  it('an older account at a dotted or tagged address: a new form earns a second grant until the backfill, none after it; a second run writes nothing', async () => {
    const [before, after] = [gmailName(), gmailName()];
    await legacyAccount(`${before.slice(0, 3)}.${before.slice(3)}@gmail.com`);
    await legacyAccount(`${after.slice(0, 3)}.${after.slice(3)}+news@gmail.com`);
    // The gap: the legacy marker is keyed on the dotted address, the new sign-up on the normal form.
    expect(await grantFor(`${before}+2@googlemail.com`)).toBe(NEW_ACCOUNT_FREE_TOKENS);

    const first = await backfillGrantMarkers();
    expect(first.written).toBeGreaterThanOrEqual(1);
    expect(await grantFor(`${after}@gmail.com`)).toBe(0);
    expect(await grantFor(`${after.slice(0, 1)}.${after.slice(1)}+x@gmail.com`)).toBe(0);
    expect(await backfillGrantMarkers()).toMatchObject({ accounts: expect.any(Number), written: 0 });
  });
});

/**
 * The free-grant markers of accounts created before the email normal form (grant-email.ts,
 * docs/email-normalisation.md). Such an account's marker was keyed on its lower-cased address
 * (`freeGrant#<sha256("m.e+1@gmail.com")>`), which the normal form (`me@gmail.com`) does not find, so
 * its person could earn one more grant under another form of the address. The backfill puts, for every
 * account with a sign-in email, the marker keyed on the normal form, if absent (`npm run admin -- grants
 * backfill`, once after upgrading; README "Runbook"). Idempotent: a second run writes nothing.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { FREE_GRANT_IS_NEW } from '../store/conditions';
import { putAccountItem, scanAccountIndex } from '../store/account-item';
import { BY_EMAIL_INDEX } from '../store/table-schemas';
import { freeGrantMarkerId } from './self-serve-account';

/** What a backfill did: accounts with an email seen, markers written (the rest existed already). */
export interface GrantBackfillResult {
  accounts: number;
  written: number;
}

/**
 * Puts the normal-form grant marker of every account that has a sign-in email (a Scan of the accounts
 * table's sparse `byEmailKeys` index (keys only: the email and the account id are all it needs), page by page; one conditional Put per account whose marker is
 * missing, `grantedTo` the account and `backfilled: true`).
 * @throws StoreUnavailableError (503): run it again, it resumes where markers are still missing.
 */
export async function backfillGrantMarkers(): Promise<GrantBackfillResult> {
  const result: GrantBackfillResult = { accounts: 0, written: 0 };
  let start: Record<string, unknown> | undefined;
  do {
    const page = await scanAccountIndex(BY_EMAIL_INDEX, start);
    for (const item of page.Items ?? []) {
      if (typeof item.email !== 'string' || typeof item.accountId !== 'string') continue;
      result.accounts++;
      const marker = { accountId: freeGrantMarkerId(item.email), grantedTo: item.accountId, backfilled: true, createdAt: new Date().toISOString() };
      try {
        await putAccountItem({ Item: marker, ConditionExpression: FREE_GRANT_IS_NEW });
        result.written++;
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return result;
}

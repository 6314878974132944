import type { SQSRecord } from 'aws-lambda';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { clearViews } from '../../functions/shared/billing/account-state';
import type { BalanceAction } from '../../functions/shared/billing/balance-watch';
import { decodeInlineHold, type HoldRecord } from '../../functions/shared/billing/hold-record';
import { abandonLeasesForTests } from '../../functions/shared/billing/lease';
import { startBill } from '../../functions/shared/billing/request-bill';
import type { SettleOutcome } from '../../functions/shared/billing/settle';
import { consumeSettleMessages } from '../../functions/shared/billing/settle-queue';
import { sweepOrphanedHolds } from '../../functions/shared/billing/sweep';
import { config } from '../../functions/shared/config/env';
import { isLeaseId, newRequestId } from '../../functions/shared/http/request-id';
import { runBalanceAction } from '../../functions/shared/payments/auto-top-up';
import { documentClient } from '../../functions/shared/store/dynamo';
import { PENDING_HOLDS_INDEX } from '../../functions/shared/store/table-schemas';
import { tableNames } from '../../functions/shared/store/tables';
import { SETTLE_TABLE_ACTIONS } from '../../lib/constructs/data-tables';
import { demandOf, entryOf, hold } from '../support/billing';
import { recordGrantUse } from '../support/grant-use';
import { useLeaseTestEnv } from '../support/lease-env';
import { accountItem, ledgerEntries } from '../support/ledger';

/**
 * The settle function's IAM grants (SETTLE_TABLE_ACTIONS, lib/constructs/data-tables.ts) against what
 * its code really does (functions/settle/handler.ts): the settle queue's consumer applying a queued
 * bill, a queued cancel, a bill repeated (already settled), a late cancel of a settled hold, a leased
 * request's bill (its ledger entry alone), with the balance watch that follows a bill (reading the
 * account, which this container placed no hold on, and claiming a crossing) and the balance messages
 * (auto top-up, low-balance and key-limit emails); and the orphan sweep settling an orphaned
 * per-request hold and reconciling an orphaned credit lease from the ledger entries that name it,
 * then clearing the index marker of the items left without holds. Every DynamoDB operation is recorded
 * at the SDK's middleware stack per table or index (test/support/grant-use.ts), must be granted on
 * that table or index, and every granted action must be used. DynamoDB Local enforces no IAM: this test
 * is what finds a missing grant before AWS does.
 */
const grantUse = recordGrantUse();
useLeaseTestEnv('settle-grants');
afterAll(() => grantUse.uninstall());

const USD = 1_000_000_000;

/** What each SETTLE_TABLE_ACTIONS entry is granted on, as the recorder names it (`<table>[/<index>]`; data-tables.ts `grantSettleAccess`). */
const RESOURCE_OF_GRANT: Record<keyof typeof SETTLE_TABLE_ACTIONS, string> = {
  accounts: 'accounts',
  accountsPendingHoldsIndex: `accounts/${PENDING_HOLDS_INDEX}`,
  ledger: 'ledger',
  keysByAccountIndex: 'keys/byAccount',
};

let messages = 0;

/** An SQS record of the settle queue, as the settle function receives it. */
function sqsRecord(body: object): SQSRecord {
  return { messageId: `m${++messages}`, body: JSON.stringify(body) } as SQSRecord;
}
const settleMessage = (h: HoldRecord, outcome: SettleOutcome) => sqsRecord({ v: 1, hold: h, outcome });
const balanceMessage = (balance: BalanceAction) => sqsRecord({ v: 1, balance });

describe('settle function table grants', () => {
  it('cover every DynamoDB action the queue consumer and the orphan sweep perform, and nothing they do not', async () => {
    // Set up (not recorded): an account with an email and a low-balance threshold above its credit
    // (the queued bill's balance watch claims the crossing), its holds, and an account with a lease.
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: USD });
    const { keyHash } = await createKey(accountId, 'settle');
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        UpdateExpression: 'SET email = :e, lowBalanceNanoUsd = :t',
        ExpressionAttributeValues: { ':e': 'settle-grants@example.com', ':t': 2 * USD },
      }),
    );
    const billed = await hold(accountId, keyHash, demandOf(30, 20));
    const cancelled = await hold(accountId, keyHash, demandOf(30, 20));
    const orphan = await hold(accountId, keyHash, demandOf(30, 20));

    const leased = await createAccount({ freeTokens: 0, creditNanoUsd: 5 * USD });
    const leasedKey = await createKey(leased.accountId, 'lease');
    const bill = startBill({
      accountId: leased.accountId,
      keyHash: leasedKey.keyHash,
      requestId: newRequestId(),
      publicModel: 'gpt-4o',
      demand: demandOf(100, 200),
      promptTokensEstimate: 100,
    });
    const leasedRequest = await bill.confirmed;
    expect(leasedRequest.leaseId).toBeDefined();
    abandonLeasesForTests(); // the container stops for good: its lease stays on the item, an orphan
    const [leaseId, leaseValue] = Object.entries((await accountItem(leased.accountId)).holds as Record<string, unknown>)[0]!;
    expect(isLeaseId(leaseId)).toBe(true);
    const lease = decodeInlineHold(leased.accountId, leaseId, leaseValue)!;
    clearViews(); // the settle function is another container: it has no view of the accounts

    grantUse.recording = true;
    // The queue consumer: a bill (and its balance watch), a cancel, the bill again, a late cancel of
    // the billed hold, a leased request's bill, and the balance messages.
    const consumed = await consumeSettleMessages(
      [
        settleMessage(billed, { kind: 'bill', entry: entryOf(30, 20) }),
        settleMessage(cancelled, { kind: 'cancel' }),
        settleMessage(billed, { kind: 'bill', entry: entryOf(30, 20) }),
        settleMessage(billed, { kind: 'cancel' }),
        settleMessage(leasedRequest, { kind: 'bill', entry: entryOf(100, 150) }),
        balanceMessage({ kind: 'low_balance', accountId, creditNanoUsd: USD, thresholdNanoUsd: 2 * USD }),
        balanceMessage({ kind: 'key_limit', accountId, keyHash, limitNanoUsd: USD, leftNanoUsd: 0, window: '2026-12' }),
        balanceMessage({
          kind: 'auto_top_up',
          accountId,
          seq: 1,
          amountCents: 1_000,
          customerId: 'cus_x',
          paymentMethodId: 'pm_x',
          month: 'autoTopUpCents_202612',
        }),
      ],
      runBalanceAction,
    );
    expect(consumed).toEqual({ batchItemFailures: [] });
    expect((await accountItem(accountId)).lowBalanceAlertAt).toEqual(expect.any(Number));

    // The orphan sweep, past both orphans' expiry and the grace: the hold is billed its estimate, the
    // lease its requests' entries; the next run clears the index marker of the items left without holds.
    const late = Math.max(orphan.holdExpiresAt, lease.holdExpiresAt) + config().HOLD_SWEEP_GRACE_MS + 1;
    expect(await sweepOrphanedHolds(late)).toEqual({ settled: 2, failed: 0 });
    expect(await sweepOrphanedHolds(late + 60_000)).toEqual({ settled: 0, failed: 0 });
    grantUse.recording = false;

    expect((await accountItem(leased.accountId)).holds).toEqual({});
    expect((await ledgerEntries(leased.accountId)).map((e) => e.requestId)).toEqual([leasedRequest.requestId]);
    const granted = (Object.entries(SETTLE_TABLE_ACTIONS) as Array<[keyof typeof SETTLE_TABLE_ACTIONS, readonly string[]]>).flatMap(([grant, actions]) =>
      actions.map((a) => `${RESOURCE_OF_GRANT[grant]} ${a}`),
    );
    expect([...grantUse.used].sort()).toEqual(granted.sort());
  });
});

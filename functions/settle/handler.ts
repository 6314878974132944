import type { ScheduledEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { consumeSettleMessages } from '../shared/billing/settle-queue';
import { runBalanceAction } from '../shared/payments/auto-top-up';
import { config } from '../shared/config/env';
import { sweepOrphanedHolds } from '../shared/billing/sweep';
import { publishMetrics } from '../shared/observability/metrics';

/**
 * The settle function: settles what the request path could not.
 * - SQS event (the settle queue, batch with partial failures): applies each queued settle, and runs
 *   the follow-ups of balance crossings (auto top-up charges, account emails: payments/auto-top-up.ts).
 * - EventBridge schedule (every HOLD_SWEEP_INTERVAL_MINUTES): settles orphaned holds (inline on the
 *   account items) past their expiry + grace, when the
 *   settle queue is empty (billing/sweep.ts).
 * Everything is idempotent on the request id (the ledger entry is new, the inline hold is still on the account).
 */
// INIT: every setting parsed now (config/env.ts), so a malformed variable fails the cold start naming it.
config();

export const handler = async (event: SQSEvent | ScheduledEvent): Promise<SQSBatchResponse | void> => {
  try {
    if ('Records' in event && Array.isArray(event.Records)) return await consumeSettleMessages(event.Records, runBalanceAction);
    await sweepOrphanedHolds();
  } finally {
    publishMetrics(); // HoldsPending, HoldsOverdue, SettlesRetried (alarmed: lib/constructs/monitoring.ts)
  }
};

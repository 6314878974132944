/**
 * The durable settle path: no answer without a durable billing record. The hold is itself the record
 * that a request started; its settle is tried in-process for up to {@link IN_PROCESS_SETTLE_MS}, then
 * handed to the settle queue (Amazon SQS), whose consumer — the settle function
 * (functions/settle/handler.ts, {@link consumeSettleMessages}) — retries it until it lands (idempotent
 * on the request id). Only if SQS refuses too is the settle left to the orphan sweep, which bills the
 * hold's prompt estimate once it has expired (sweep.ts): the request is never lost, only billed less
 * exactly. Bounds (README, "Durable settle"): in-process ≤ 2.5 s; queued settles retried for 24 h
 * before the dead-letter queue; orphans within expiry + grace + 5 min (HOLD_SWEEP_INTERVAL_MINUTES).
 *
 * `SETTLE_QUEUE_URL` names the queue (set by the stack; locally by `npm start`, with `SQS_ENDPOINT`
 * pointing at the emulator). One client per container. The consumer applies each message with the same
 * idempotent transaction as in-process settles; failures are reported per message (SQS partial batch
 * responses, `ReportBatchItemFailures`), so one bad record never re-delivers the others; a message
 * that keeps failing goes to the dead-letter queue after the queue's maxReceiveCount.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import * as z from '../validation/zod';
import { StoreUnavailableError } from '../errors/gateway-errors';
import { SETTLE_QUEUE_URL_ENV } from '../config/stack-contract';
import { config } from '../config/env';
import { logger } from '../observability/logger';
import { recordSettlesRetried } from '../observability/metrics';
import { retrying, type RetryPolicy } from '../retry/retry';
import { balanceActionSchema, watchBalance, type BalanceAction, type BalanceDispatch } from './balance-watch';
import { holdRecordSchema, markHoldQueued, type HoldRecord } from './hold-record';
import { CACHE_ENTRY_SHAPE } from './ledger';
import { settleRecord } from './lease-settle';
import type { SettleOutcome, SettleResult, UsageEntry } from './settle';

/** How long a settle is retried in the request's own function before it is queued (ms). */
export const IN_PROCESS_SETTLE_MS = 2_500;

/** Delay of a queued cancel of a hold whose write may still land (s): the store client's retries (3 × 3 s) first. */
export const UNKNOWN_HOLD_CANCEL_DELAY_S = 15;

/** Thrown by a try that would start after the in-process budget: the settle goes to the queue. */
const BUDGET_SPENT = new Error('in-process settle budget spent');

/**
 * The in-process settle's policy: a store outage, a timed-out settle or a retryable AWS error is tried
 * again after 100 ms, 200 ms, 400 ms, … (the last wait cut to what is left of the budget) until
 * `deadline` (epoch ms); anything else goes to the queue at once.
 */
function inProcessSettlePolicy(deadline: number): RetryPolicy {
  return {
    maxAttempts: Number.POSITIVE_INFINITY,
    delayMs: (err, retry) =>
      err !== BUDGET_SPENT && (err instanceof StoreUnavailableError || err instanceof SettleTimeout || isRetryable(err))
        ? Math.min(50 * 2 ** (retry + 1), Math.max(0, deadline - Date.now()))
        : undefined,
  };
}

/**
 * Settles durably. Never throws: it runs after the client has its answer. Returns the result when
 * the settle landed in-process, else undefined (queued, or left to the sweep — or, when `onUnqueued`
 * is given, to the caller: a leased request's entry then travels with its lease's return). A bill that
 * landed is followed by the balance watch (balance-watch.ts: in memory unless a threshold was crossed).
 */
export async function settleDurably(
  hold: HoldRecord,
  outcome: SettleOutcome,
  budgetMs = IN_PROCESS_SETTLE_MS,
  onUnqueued?: () => void,
): Promise<SettleResult | undefined> {
  const deadline = Date.now() + budgetMs;
  let lastError: unknown;
  try {
    return await retrying(async () => {
      if (Date.now() >= deadline) throw BUDGET_SPENT;
      try {
        const r = await withTimeout(settleRecord(hold, outcome), deadline - Date.now());
        // A crossing's follow-up goes to the settle function (no read: this container's view decides).
        if (outcome.kind === 'bill' && !r.alreadySettled)
          await watchBalance(hold.accountId, { keyHash: hold.keyHash, heldNanoUsd: hold.holdNanoUsd }, queueBalanceAction);
        return r;
      } catch (err) {
        lastError = err;
        throw err;
      }
    }, inProcessSettlePolicy(deadline));
  } catch {
    // Not retryable, or the budget is spent: the queue takes it, with the settle's last failure.
  }
  if (!(await queue(hold, outcome, 0, lastError))) onUnqueued?.();
  return undefined;
}

/** Hands a settle to the queue (a cancel of an unknown hold is delayed). Never throws; false when SQS refused it. */
export async function queue(hold: HoldRecord, outcome: SettleOutcome, delaySeconds: number, cause?: unknown): Promise<boolean> {
  try {
    await sendSettleMessage(hold, outcome, delaySeconds);
    // The sweep leaves a hold marked queued to the queue (hold-record.ts `markHoldQueued`); best effort, never throws.
    // A leased request has no hold of its own on the account (its lease waits while the queue is not empty).
    if (hold.leaseId === undefined) await markHoldQueued(hold);
    logger.warn('settle queued', { requestId: hold.requestId, accountId: hold.accountId, kind: outcome.kind, error: describe(cause) });
    return true;
  } catch (err) {
    // The hold stays on the account: the sweep settles it from its prompt estimate once it expires
    // (a leased request's entry goes with its lease's return instead).
    logger.error(
      hold.leaseId === undefined
        ? 'settle could not be queued; the orphan sweep will settle the hold'
        : "settle could not be queued; the lease's return will write it",
      { requestId: hold.requestId, accountId: hold.accountId, outcome, error: describe(err) },
    );
    return false;
  }
}

/** Cancels a hold whose write may or may not have landed, durably. Never throws. */
export function cancelUnknownHold(hold: HoldRecord): void {
  void queue(hold, { kind: 'cancel' }, UNKNOWN_HOLD_CANCEL_DELAY_S);
}

class SettleTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SettleTimeout('settle timed out')), Math.max(1, ms));
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function isRetryable(err: unknown): boolean {
  const name = (err as { name?: unknown })?.name;
  return name === 'TransactionCanceledException' || name === 'TransactionConflictException' || name === 'TransactionInProgressException';
}

function describe(err: unknown): string | undefined {
  return err === undefined ? undefined : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

// The queue.

const usageEntrySchema = z.object({
  publicModel: z.string(),
  servedModel: z.string(),
  provider: z.string(),
  promptTokens: z.number().check(z.int(), z.nonnegative()),
  completionTokens: z.number().check(z.int(), z.nonnegative()),
  inputPrice: z.number().check(z.int(), z.nonnegative()),
  outputPrice: z.number().check(z.int(), z.nonnegative()),
  usageEstimated: z.boolean(),
  fallbackPath: z.array(z.string()),
  status: z.enum(['complete', 'partial', 'aborted', 'orphaned']),
  byok: z.optional(z.boolean()),
  upstreamModel: z.optional(z.string()),
  firstTokenAt: z.optional(z.number().check(z.int())),
  endedAt: z.optional(z.number().check(z.int())),
  finishReason: z.optional(z.string()),
  user: z.optional(z.string()),
  sessionId: z.optional(z.string()),
  ...CACHE_ENTRY_SHAPE,
});

/**
 * Every field of a {@link UsageEntry} is in the message schema: `z.object` strips a key it does not
 * know, so a field added to the entry and not here would be lost on every queued settle. This fails to
 * compile with the missing keys' names.
 */
type UnqueuedEntryFields = Exclude<keyof UsageEntry, keyof z.infer<typeof usageEntrySchema>>;
const everyEntryFieldQueued: [UnqueuedEntryFields] extends [never] ? true : UnqueuedEntryFields = true;
void everyEntryFieldQueued;

/** The body of a settle message (JSON): the hold and what to do with it. */
const settleMessageSchema = z.object({
  v: z.literal(1),
  hold: holdRecordSchema,
  outcome: z.discriminatedUnion('kind', [z.object({ kind: z.literal('bill'), entry: usageEntrySchema }), z.object({ kind: z.literal('cancel') })]),
});

/** A settle message. */
type SettleMessage = z.infer<typeof settleMessageSchema>;

/**
 * The SQS client package. Only a settle that could not land needs it, so the Lambda bundles leave it
 * out of `index.mjs` (~25 KB of the chat bundle, parsed at every cold start) and load it from its own
 * file beside the handler on first use (lib/constructs/gateway-function.ts defines the variable).
 */
const SQS_MODULE = process.env.MODELMUX_SQS_MODULE ?? '@aws-sdk/client-sqs';
type SqsModule = typeof import('@aws-sdk/client-sqs');
let sqsModule: Promise<SqsModule> | undefined;

/** The SQS package, imported once (a failed import is tried again on the next call). */
function loadSqs(): Promise<SqsModule> {
  sqsModule ??= (import(SQS_MODULE) as Promise<SqsModule>).catch((err: unknown) => {
    sqsModule = undefined;
    throw err;
  });
  return sqsModule;
}

let client: SQSClient | undefined;

/**
 * The container's SQS client: short timeouts, a few attempts (it runs inside the settle reserve).
 * `SQS_REQUEST_TIMEOUT_MS` (default in `config/env.ts`) is raised by `npm start`: the emulator shares the
 * gateway's event loop.
 */
async function sqsClient(): Promise<SQSClient> {
  const { SQS_REQUEST_TIMEOUT_MS: timeout, SQS_ENDPOINT } = config();
  const { SQSClient } = await loadSqs();
  client ??= new SQSClient({
    ...(SQS_ENDPOINT ? { endpoint: SQS_ENDPOINT, region: process.env.AWS_REGION ?? 'us-east-1' } : {}),
    maxAttempts: 3,
    requestHandler: { connectionTimeout: Math.min(timeout, 2_000), requestTimeout: timeout, throwOnRequestTimeout: true },
  });
  return client;
}

/** Forgets the client (tests that restart the emulator). */
export function resetSqsClient(): void {
  client?.destroy();
  client = undefined;
}

/** The queue URL, or undefined when no queue is configured. */
function settleQueueUrl(): string | undefined {
  return config().SETTLE_QUEUE_URL;
}

/**
 * Sends one settle message. `delaySeconds` (0–900) delays its first delivery: a cancel of a hold
 * whose write may still land waits out the store client's own retries first.
 * @throws Error when no queue is configured; the SDK's error when SQS refuses.
 */
async function sendSettleMessage(hold: HoldRecord, outcome: SettleOutcome, delaySeconds = 0): Promise<void> {
  const url = settleQueueUrl();
  if (url === undefined) throw new Error(`${SETTLE_QUEUE_URL_ENV} is not set: no durable settle queue.`);
  const body: SettleMessage = { v: 1, hold, outcome };
  const { SendMessageCommand } = await loadSqs();
  await (await sqsClient()).send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(body), DelaySeconds: delaySeconds }));
}

/** The body of a balance message (JSON): a crossing's follow-up for the settle function (balance-watch.ts). */
const balanceMessageSchema = z.object({ v: z.literal(1), balance: balanceActionSchema });

/**
 * Queues a crossing's follow-up (the request functions' `dispatch` of balance-watch.ts).
 * @throws Error when no queue is configured; the SDK's error when SQS refuses.
 */
export async function queueBalanceAction(action: BalanceAction): Promise<void> {
  const url = settleQueueUrl();
  if (url === undefined)
    throw new Error(`${SETTLE_QUEUE_URL_ENV} is not set: the ${action.kind} of ${action.accountId} cannot be handed to the settle function.`);
  const { SendMessageCommand } = await loadSqs();
  await (await sqsClient()).send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify({ v: 1, balance: action }) }));
}

/** Messages waiting, in flight or delayed on the settle queue (SQS's approximate counts). */
export async function pendingSettleMessages(): Promise<number> {
  return queueDepth(settleQueueUrl());
}

/**
 * Messages on the settle dead-letter queue (`SETTLE_DEAD_LETTER_QUEUE_URL`; 0 when unset). The sweep
 * reads it every run, which also keeps the queue's CloudWatch metrics flowing (an idle queue's stop).
 * Never throws: a failed read is logged and counted as 0.
 */
export async function deadLetterMessages(): Promise<number> {
  return queueDepth(config().SETTLE_DEAD_LETTER_QUEUE_URL).catch((err: unknown) => {
    logger.warn('settle dead-letter queue not readable', { error: err as Error });
    return 0;
  });
}

async function queueDepth(url: string | undefined): Promise<number> {
  if (url === undefined) return 0;
  const { GetQueueAttributesCommand } = await loadSqs();
  const out = await (
    await sqsClient()
  ).send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
}

// The consumer (the settle function).

/**
 * Applies every record; returns the ids of those to retry. A settle that lands is followed by the
 * balance watch (balance-watch.ts, reading the account when this container has no view of it; its
 * follow-ups are queued as messages of their own); a balance message (a crossing's follow-up) is run
 * by `runBalance`, which throws to be retried (payments/auto-top-up.ts: idempotent).
 */
export async function consumeSettleMessages(records: readonly SQSRecord[], runBalance: BalanceDispatch): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of records) {
    let parsed;
    try {
      const body: unknown = JSON.parse(record.body);
      const balance = balanceMessageSchema.safeParse(body);
      if (balance.success) {
        await runBalance(balance.data.balance).catch((err: unknown) => {
          logger.warn('balance action failed; SQS will deliver it again', {
            messageId: record.messageId,
            kind: balance.data.balance.kind,
            error: err as Error,
          });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        });
        continue;
      }
      parsed = settleMessageSchema.parse(body);
    } catch (err) {
      // Unreadable forever: let it reach the dead-letter queue for a human.
      logger.error('settle message is not readable', { messageId: record.messageId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
      continue;
    }
    try {
      const r = await settleRecord(parsed.hold, parsed.outcome);
      if (!r.alreadySettled) recordSettlesRetried();
      if (!r.alreadySettled && parsed.outcome.kind === 'bill')
        await watchBalance(parsed.hold.accountId, { keyHash: parsed.hold.keyHash, heldNanoUsd: parsed.hold.holdNanoUsd, read: true }, queueBalanceAction);
      logger.info('queued settle applied', {
        requestId: parsed.hold.requestId,
        kind: parsed.outcome.kind,
        alreadySettled: r.alreadySettled,
        costNanoUsd: r.costNanoUsd,
      });
    } catch (err) {
      logger.warn('queued settle failed; SQS will deliver it again', { requestId: parsed.hold.requestId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}

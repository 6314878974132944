/**
 * The durable settle path's queue (Amazon SQS): a settle the request's function could not land is
 * sent here and consumed by the settle function (functions/settle/handler.ts), which retries it until
 * it lands (idempotent on the request id). `SETTLE_QUEUE_URL` names the queue (set by the stack;
 * locally by `npm start`, with `SQS_ENDPOINT` pointing at the emulator). One client per container.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import * as z from '../validation/zod';
import { holdRecordSchema, type HoldRecord } from './hold-record';
import type { SettleOutcome } from './settle';
import { balanceActionSchema, type BalanceAction } from './balance-watch';

import { SETTLE_QUEUE_URL_ENV } from '../config/stack-contract';
import { config } from '../config/env';
import { logger } from '../observability/logger';

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
});

/** The body of a settle message (JSON): the hold and what to do with it. */
export const settleMessageSchema = z.object({
  v: z.literal(1),
  hold: holdRecordSchema,
  outcome: z.discriminatedUnion('kind', [z.object({ kind: z.literal('bill'), entry: usageEntrySchema }), z.object({ kind: z.literal('cancel') })]),
});

/** A settle message. */
export type SettleMessage = z.infer<typeof settleMessageSchema>;

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
 * `SQS_REQUEST_TIMEOUT_MS` (default 1,000) is raised by `npm start`: the emulator shares the gateway's
 * event loop.
 */
export async function sqsClient(): Promise<SQSClient> {
  const { SQS_REQUEST_TIMEOUT_MS, SQS_ENDPOINT } = config();
  const timeout = SQS_REQUEST_TIMEOUT_MS || 1_000;
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
export function settleQueueUrl(): string | undefined {
  return config().SETTLE_QUEUE_URL;
}

/**
 * Sends one settle message. `delaySeconds` (0–900) delays its first delivery: a cancel of a hold
 * whose write may still land waits out the store client's own retries first.
 * @throws Error when no queue is configured; the SDK's error when SQS refuses.
 */
export async function sendSettleMessage(hold: HoldRecord, outcome: SettleOutcome, delaySeconds = 0): Promise<void> {
  const url = settleQueueUrl();
  if (url === undefined) throw new Error(`${SETTLE_QUEUE_URL_ENV} is not set: no durable settle queue.`);
  const body: SettleMessage = { v: 1, hold, outcome };
  const { SendMessageCommand } = await loadSqs();
  await (await sqsClient()).send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(body), DelaySeconds: delaySeconds }));
}

/** The body of a balance message (JSON): a crossing's follow-up for the settle function (balance-watch.ts). */
export const balanceMessageSchema = z.object({ v: z.literal(1), balance: balanceActionSchema });

/**
 * Queues a crossing's follow-up (the request functions' `dispatch` of balance-watch.ts).
 * @throws Error when no queue is configured; the SDK's error when SQS refuses.
 */
export async function queueBalanceAction(action: BalanceAction): Promise<void> {
  const url = settleQueueUrl();
  if (url === undefined) throw new Error(`${SETTLE_QUEUE_URL_ENV} is not set: the ${action.kind} of ${action.accountId} cannot be handed to the settle function.`);
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
  const out = await (await sqsClient()).send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }),
  );
  const a = out.Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
}

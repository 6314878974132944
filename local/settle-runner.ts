/**
 * The durable settle path on loopback, as `npm start` and the tests run it, with real components: an
 * SQS emulator from npm (`fauxqs`, spoken to by the real `@aws-sdk/client-sqs`) in its own process
 * (settle-queue-process.ts: what is queued outlives a crash of the gateway) holding the settle
 * queue and its dead-letter queue; a poller standing in for Lambda's SQS event source mapping, which
 * invokes the REAL settle handler (functions/settle/handler.ts) with SQS events and deletes what it
 * did not report as failed (partial batch responses); and the orphan sweep on a timer, as the
 * EventBridge schedule invokes it in AWS.
 */
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { startQueueProcess } from './settle-queue-process';
import { HOLD_SWEEP_INTERVAL_MINUTES } from '../functions/shared/config/stack-contract';

/** Options of {@link startSettleRunner}; times in ms unless named in seconds. */
export interface SettleRunnerOptions {
  /** Visibility timeout of the settle queue (s): how soon a failed settle is tried again. Default 5 (AWS: 180). */
  visibilityTimeoutS?: number;
  /** Receives before a message goes to the dead-letter queue. Default 100 (AWS: 480, 24 h). */
  maxReceiveCount?: number;
  /** How often the orphan sweep runs (ms). Default HOLD_SWEEP_INTERVAL_MINUTES (5 min, the EventBridge rate); 0 = never. */
  sweepEveryMs?: number;
  /** Where the queue process's endpoint and pid are kept, so a restart after a crash reuses it (`npm start`). */
  queueStateFile?: string;
}

/** A running settle path. */
export interface SettleRunner {
  queueUrl: string;
  deadLetterQueueUrl: string;
  sqsEndpoint: string;
  /** Runs the sweep now (as the schedule would). */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the emulator, creates the queues, sets `SQS_ENDPOINT`, `SETTLE_QUEUE_URL` and `SETTLE_DEAD_LETTER_QUEUE_URL` for the
 * functions, and starts the poller and the sweep timer.
 */
export async function startSettleRunner(opts: SettleRunnerOptions = {}): Promise<SettleRunner> {
  const queueProcess = await startQueueProcess(opts.queueStateFile);
  const server = { address: queueProcess.endpoint };
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const sqs = new SQSClient({ endpoint: server.address, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: 'modelmux-settle-dlq', Attributes: { MessageRetentionPeriod: '1209600' } }));
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: 'modelmux-settle',
      Attributes: {
        VisibilityTimeout: String(opts.visibilityTimeoutS ?? 5),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: opts.maxReceiveCount ?? 100 }),
      },
    }),
  );
  const queueUrl = queue.QueueUrl as string;
  process.env.SQS_ENDPOINT = server.address;
  // The emulator shares the machine's cores with the gateway: give it more time than AWS's SQS needs.
  process.env.SQS_REQUEST_TIMEOUT_MS ??= '10000';
  process.env.SETTLE_QUEUE_URL = queueUrl;
  process.env.SETTLE_DEAD_LETTER_QUEUE_URL = dlq.QueueUrl as string;
  (await import('../functions/shared/config/env')).reloadConfig(); // read the queue settings just set
  const { handler } = await import('../functions/settle/handler');

  let running = true;
  const poller = (async () => {
    while (running) {
      try {
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0 || !running) continue;
        const event: SQSEvent = { Records: messages.map((m) => toRecord(m, queueUrl, region)) };
        const result = await handler(event);
        const failed = new Set((result ?? { batchItemFailures: [] }).batchItemFailures.map((f) => f.itemIdentifier));
        for (const m of messages) {
          if (!failed.has(m.MessageId ?? '')) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
        }
      } catch {
        if (running) await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  const sweep = async (): Promise<void> => {
    await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events' } as never).catch(() => undefined);
  };
  const every = opts.sweepEveryMs ?? HOLD_SWEEP_INTERVAL_MINUTES * 60_000;
  const timer = every > 0 ? setInterval(() => void sweep(), every) : undefined;
  timer?.unref();
  return {
    queueUrl,
    deadLetterQueueUrl: dlq.QueueUrl as string,
    sqsEndpoint: server.address,
    sweep,
    close: async () => {
      running = false;
      if (timer) clearInterval(timer);
      await poller;
      sqs.destroy();
      await queueProcess.stop();
    },
  };
}

function toRecord(
  m: { MessageId?: string; ReceiptHandle?: string; Body?: string; Attributes?: Record<string, string>; MD5OfBody?: string },
  queueUrl: string,
  region: string,
): SQSRecord {
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:${region}:000000000000:${queueUrl.split('/').pop() ?? 'modelmux-settle'}`,
    awsRegion: region,
  };
}

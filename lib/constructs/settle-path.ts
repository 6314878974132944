import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { HOLD_SWEEP_INTERVAL_MINUTES, SETTLE_DEAD_LETTER_QUEUE_URL_ENV, SETTLE_QUEUE_URL_ENV } from '../../functions/shared/config/stack-contract';
import type { DataTables } from './data-tables';
import { GatewayFunction } from './gateway-function';

/** Props of {@link SettlePath}. */
export interface SettlePathProps {
  readonly tables: DataTables;
  /** Days the settle function's logs are kept (the stack's default). */
  readonly logRetentionDays?: number;
  /** X-Ray tracing, as the gateway functions. */
  readonly tracing?: boolean;
  /** Reserved concurrency of the settle function (at least 3); the queue's pollers get one less. */
  readonly reservedConcurrency: number;
  /** Extra plain env (the stack's `functionSettings`). */
  readonly environment?: Readonly<Record<string, string>>;
}

/** The settle function's timeout (s): a batch of 10 settles, each a few transactional writes. */
const SETTLE_TIMEOUT_SECONDS = 30;
/** Visibility timeout (s): six times the function timeout, as AWS advises for SQS event sources. */
const VISIBILITY_TIMEOUT_SECONDS = 6 * SETTLE_TIMEOUT_SECONDS;
/** Receives before the dead-letter queue: 480 × 180 s = 24 h of retries (a long DynamoDB outage). */
const MAX_RECEIVE_COUNT = 480;

/**
 * The durable settle path (billing/settle-queue.ts): the settle queue (SSE, TLS only) with its
 * dead-letter queue, the settle function that consumes it (SQS event source, batches of 10 with
 * partial batch failures) and, every HOLD_SWEEP_INTERVAL_MINUTES (5), sweeps orphaned holds (EventBridge
 * schedule; a Query of the accounts table's sparse pendingHolds index, billing/hold-record.ts). Bounds: a queued settle is retried for 24 h
 * before the dead-letter queue (kept 14 days); an orphaned hold is settled within its expiry +
 * HOLD_SWEEP_GRACE_MS (2 min) + 5 min. The monitoring construct
 * reads `queue`, `deadLetterQueue`, `settleFunction` and `sweepRule` for its alarms.
 */
export class SettlePath extends Construct {
  /** The settle queue the gateway functions hand unlanded settles to. */
  readonly queue: Queue;
  /** Settles that failed 480 times (24 h): a human looks at them. */
  readonly deadLetterQueue: Queue;
  /** The settle function (queue consumer and orphan sweep). */
  readonly settleFunction: GatewayFunction;
  /** The EventBridge schedule that runs the orphan sweep (its failed invocations are alarmed). */
  readonly sweepRule: Rule;

  constructor(scope: Construct, id: string, props: SettlePathProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(VISIBILITY_TIMEOUT_SECONDS),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    this.settleFunction = new GatewayFunction(this, 'Settle', {
      entry: 'functions/settle/handler.ts',
      description: 'modelmux: settles queued settles and orphaned holds',
      timeoutSeconds: SETTLE_TIMEOUT_SECONDS,
      memorySize: 512,
      logRetentionDays: props.logRetentionDays,
      tracing: props.tracing,
      reservedConcurrentExecutions: props.reservedConcurrency,
      environment: {
        ...props.tables.environment,
        [SETTLE_QUEUE_URL_ENV]: this.queue.queueUrl,
        [SETTLE_DEAD_LETTER_QUEUE_URL_ENV]: this.deadLetterQueue.queueUrl,
        ...props.environment,
      },
    });
    const fn = this.settleFunction.function;
    props.tables.grantSettleAccess(fn);
    // The sweep reads both queues' depth: unmarked holds wait a while for a non-empty queue, and a
    // read every 5 minutes keeps the dead-letter queue's metrics flowing (its alarm treats none as bad).
    this.queue.grant(fn, 'sqs:GetQueueAttributes');
    this.deadLetterQueue.grant(fn, 'sqs:GetQueueAttributes');
    // A queued bill's balance watch hands its follow-up (a low-balance or key-limit mail, an auto
    // top-up) back to the queue (billing/settle-queue.ts `queueBalanceAction`).
    this.grantSend(fn);
    // The queue's pollers stay below the reservation, so the sweep always has room and SQS never
    // meets throttles (which would count as receives towards the dead-letter queue).
    fn.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxBatchingWindow: Duration.seconds(1),
        maxConcurrency: Math.max(2, props.reservedConcurrency - 1),
      }),
    );
    this.sweepRule = new Rule(this, 'Sweep', {
      description: `modelmux: settle orphaned holds every ${HOLD_SWEEP_INTERVAL_MINUTES} minutes`,
      schedule: Schedule.rate(Duration.minutes(HOLD_SWEEP_INTERVAL_MINUTES)),
      targets: [new LambdaFunction(fn as IFunction)],
    });
  }

  /** Lets a gateway function hand settles to the queue (SendMessage only). */
  grantSend(grantee: IGrantable): void {
    this.queue.grant(grantee, 'sqs:SendMessage');
  }

  /**
   * Lets a function read the queue's depth (GetQueueAttributes only): a lease a stopped container left
   * is reconciled by the account's next request only while the queue is empty (billing/lease-reclaim.ts).
   */
  grantDepthRead(grantee: IGrantable): void {
    this.queue.grant(grantee, 'sqs:GetQueueAttributes');
  }
}

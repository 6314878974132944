import { Duration, Stack, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IMetric,
  LogQueryWidget,
  SingleValueWidget,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MetricName } from '../../functions/shared/config/stack-contract';
import { accountConcurrency, costUsd, own, PERIOD, percentiles, serverErrorRate, tableThrottles } from './monitoring-metrics';

/** Lambda's default concurrency quota per account and region (Lambda docs, "Lambda quotas"). */
export const DEFAULT_ACCOUNT_CONCURRENCY_LIMIT = 1_000;

/** "Near the limit": this share of a concurrency limit (reserved or account). */
export const CONCURRENCY_ALARM_RATIO = 0.8;

/** The 5xx-rate alarm: percent of answers, over 5-minute periods with at least this many requests. */
export const SERVER_ERROR_RATE_PERCENT = 5;
export const SERVER_ERROR_RATE_MIN_REQUESTS = 20;

/**
 * The over-hold loss alarm: usage reported beyond the requests' holds (not charged, the platform's
 * loss; `UpstreamOverHoldNanoUsd`) summed over 5 minutes, nano-USD ($0.01).
 */
export const OVER_HOLD_LOSS_ALARM_NANO_USD = 10_000_000;

/** Props of {@link Monitoring}. */
export interface MonitoringProps {
  /** The value of the metrics' `service` dimension (POWERTOOLS_SERVICE_NAME of the functions). */
  readonly service: string;
  /** Subscribed to the alarm topic by email (the address must confirm). Default: no subscription. */
  readonly alarmEmail?: string;
  /** The account's Lambda concurrency quota in this region. Default {@link DEFAULT_ACCOUNT_CONCURRENCY_LIMIT}. */
  readonly accountConcurrencyLimit?: number;
  /** Log groups the dashboard's cost-by-model query reads (the gateway functions' request lines). */
  readonly requestLogGroups?: readonly ILogGroup[];
}

/**
 * Metrics, alarms and a dashboard for one modelmux stack. Alarms go to one SNS topic (the
 * `AlarmTopicArn` output; `-c alarmEmail=…` subscribes an address), with OK notifications too. What
 * each alarm means and what to do: README, "Runbook". Service alarms are made here; each function,
 * table and queue adds its own through {@link addFunction}, {@link addTable}, {@link addQueue}, so
 * other constructs (the settle function, the account function) join with one call.
 */
export class Monitoring extends Construct {
  /** The topic every alarm notifies. */
  readonly topic: Topic;
  /** Every alarm, by short name. */
  readonly alarms = new Map<string, Alarm>();
  readonly dashboard: Dashboard;
  private readonly service: string;
  private readonly prefix: string;
  private readonly functionWidgets: GraphWidget[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.service = props.service;
    this.prefix = Stack.of(this).stackName;
    this.topic = new Topic(this, 'AlarmTopic', { displayName: `${this.prefix} alarms`, enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SNS2',
      reason: 'Alarm notifications carry alarm names and numbers, no customer data; CloudWatch cannot publish to a topic encrypted with the AWS-managed aws/sns key, and a customer-managed key would add a fixed monthly cost to a stack that is otherwise free when idle.',
    });
    if (props.alarmEmail !== undefined) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    const s = this.service;
    this.alarm('ServerErrorRate', serverErrorRate(s, SERVER_ERROR_RATE_MIN_REQUESTS), SERVER_ERROR_RATE_PERCENT, {
      description: `More than ${SERVER_ERROR_RATE_PERCENT}% of answers were 5xx in 2 of 3 five-minute periods (with at least ${SERVER_ERROR_RATE_MIN_REQUESTS} requests). Upstreams down or our own bug: see README, Runbook.`,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    this.alarm('BreakersOpen', own(s, MetricName.BreakerOpened, 'Sum'), 1, {
      description: 'An upstream target kept failing for 15 minutes (a circuit breaker opened in each 5-minute period): traffic is on fallbacks. See README, Runbook.',
      evaluationPeriods: 3,
    });
    this.alarm('SettlesOverdue', own(s, MetricName.HoldsOverdue, 'Maximum'), 1, {
      description: 'Holds are pending past their settle bound: answered requests not yet billed. See README, Runbook (replay or settle pending holds).',
    });
    this.alarm('SettleFailures', own(s, MetricName.SettleFailures, 'Sum'), 1, {
      description: 'A settle did not land on the request path: an answered request is not in the ledger yet. See README, Runbook (replay or settle pending holds).',
    });
    this.alarm('UpstreamOverHold', own(s, MetricName.UpstreamOverHoldNanoUsd, 'Sum'), OVER_HOLD_LOSS_ALARM_NANO_USD, {
      description: `Upstreams reported usage worth more than $${OVER_HOLD_LOSS_ALARM_NANO_USD / 1e9} beyond the holds in 5 minutes (not charged: the platform's loss). An upstream ignores max_tokens or over-reports: see README, Runbook, and the \`usage over the hold\` log lines.`,
    });
    this.alarm('AccountConcurrency', accountConcurrency(), Math.floor(CONCURRENCY_ALARM_RATIO * (props.accountConcurrencyLimit ?? DEFAULT_ACCOUNT_CONCURRENCY_LIMIT)), {
      description: `Lambda concurrency in this account and region is above ${CONCURRENCY_ALARM_RATIO * 100}% of its quota: new invocations will be throttled (429/502 to clients). See README, Runbook.`,
      period: Duration.minutes(1),
      evaluationPeriods: 3,
    });

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `${this.prefix}-overview`, defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(...this.serviceWidgets(props.requestLogGroups ?? []));
  }

  /**
   * Alarms and graphs for one function: errors (a crash or timeout: our handlers answer every
   * request), throttles, and concurrency near its reserved limit when it has one.
   */
  addFunction(name: string, fn: IFunction, reservedConcurrency?: number): void {
    this.alarm(`${name}Errors`, fn.metricErrors({ period: PERIOD, statistic: 'Sum' }), 1, {
      description: `The ${name} function failed (crashed or timed out) at least once in 5 minutes. See README, Runbook.`,
    });
    this.alarm(`${name}Throttles`, fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }), 1, {
      description: `The ${name} function was throttled (concurrency limit reached): clients got errors. See README, Runbook.`,
    });
    if (reservedConcurrency !== undefined && reservedConcurrency > 0) {
      this.alarm(`${name}ConcurrencyNearLimit`, fn.metric('ConcurrentExecutions', { period: Duration.minutes(1), statistic: 'Maximum' }), Math.max(1, Math.floor(CONCURRENCY_ALARM_RATIO * reservedConcurrency)), {
        description: `The ${name} function uses more than ${CONCURRENCY_ALARM_RATIO * 100}% of its reserved concurrency (${reservedConcurrency}). See README, Runbook.`,
        period: Duration.minutes(1),
        evaluationPeriods: 3,
      });
    }
    this.functionWidgets.push(
      new GraphWidget({
        title: `${name} function`,
        width: 12,
        left: [fn.metricInvocations({ period: Duration.minutes(1) }), fn.metricErrors({ period: Duration.minutes(1) }), fn.metricThrottles({ period: Duration.minutes(1) })],
        right: [fn.metric('ConcurrentExecutions', { statistic: 'Maximum', period: Duration.minutes(1) }), fn.metricDuration({ statistic: 'p99', period: Duration.minutes(1) })],
      }),
    );
    if (this.functionWidgets.length % 2 === 0) this.dashboard.addWidgets(...this.functionWidgets.slice(-2));
  }

  /** An alarm on the table's read and write throttle events (any in 5 minutes). */
  addTable(name: string, table: ITable): void {
    const throttles = tableThrottles(table);
    this.alarm(`${name}TableThrottles`, throttles, 1, {
      description: `DynamoDB throttled requests on the ${name} table (a hot partition or account limit): requests may have failed with 503. See README, Runbook.`,
    });
  }

  /**
   * Alarms for a queue (the settle queue of issue 10): its oldest message older than `maxAgeSeconds`,
   * and, for a dead-letter queue, any message in it.
   */
  addQueue(name: string, queue: IQueue, opts: { maxAgeSeconds?: number; deadLetter?: boolean } = {}): void {
    if (opts.deadLetter === true) {
      this.alarm(`${name}DeadLetters`, queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }), 1, {
        description: `Messages reached the ${name} dead-letter queue: work that failed every retry. See README, Runbook.`,
      });
      return;
    }
    this.alarm(`${name}Backlog`, queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }), opts.maxAgeSeconds ?? 300, {
      description: `The oldest message in ${name} waited longer than ${opts.maxAgeSeconds ?? 300} s. See README, Runbook.`,
    });
  }

  /** Flushes a pending half row of function graphs onto the dashboard (call once all functions are added). */
  finish(): void {
    if (this.functionWidgets.length % 2 === 1) this.dashboard.addWidgets(...this.functionWidgets.slice(-1));
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: [...this.alarms.values()] as IAlarm[] }));
  }

  private alarm(
    name: string,
    metric: IMetric,
    threshold: number,
    opts: { description: string; evaluationPeriods?: number; datapointsToAlarm?: number; period?: Duration; comparison?: ComparisonOperator },
  ): Alarm {
    const alarm = new Alarm(this, name, {
      alarmName: `${this.prefix}-${name}`,
      alarmDescription: opts.description,
      metric,
      threshold,
      comparisonOperator: opts.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: opts.evaluationPeriods ?? 1,
      ...(opts.datapointsToAlarm ? { datapointsToAlarm: opts.datapointsToAlarm } : {}),
      // No data = nothing happened (no traffic, no holds, no throttles): not an alarm.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    alarm.addOkAction(new SnsAction(this.topic));
    this.alarms.set(name, alarm);
    return alarm;
  }

  /** Traffic, cost, fallbacks, latency and billing health at a glance, then cost by model from the logs. */
  private serviceWidgets(logGroups: readonly ILogGroup[]): Array<TextWidget | GraphWidget | SingleValueWidget | LogQueryWidget> {
    const s = this.service;
    const oneMinute = Duration.minutes(1);
    const widgets: Array<TextWidget | GraphWidget | SingleValueWidget | LogQueryWidget> = [
      new TextWidget({
        width: 24,
        height: 2,
        markdown: `# ${this.prefix}\nTraffic, money, fallbacks and latency of modelmux (namespace \`modelmux\`, service \`${s}\`). Cost is what accounts were charged. README, "Runbook: read the dashboard".`,
      }),
      new GraphWidget({
        title: 'Traffic: requests and errors per minute',
        width: 12,
        left: [own(s, MetricName.Requests, 'Sum', 'requests', oneMinute), own(s, MetricName.ClientErrors, 'Sum', '4xx', oneMinute), own(s, MetricName.ServerErrors, 'Sum', '5xx', oneMinute)],
      }),
      new GraphWidget({ title: 'Cost charged (USD per 5 minutes)', width: 8, left: [costUsd(s)] }),
      new SingleValueWidget({ title: 'Cost charged in the time range (USD)', width: 4, metrics: [costUsd(s)], setPeriodToTimeRange: true, fullPrecision: true }),
      new GraphWidget({
        title: 'Fallbacks, breaker openings, estimated usage',
        width: 12,
        left: [own(s, MetricName.Fallbacks, 'Sum', 'fallbacks'), own(s, MetricName.BreakerOpened, 'Sum', 'breakers opened'), own(s, MetricName.UsageEstimated, 'Sum', 'usage estimated')],
        right: [own(s, MetricName.UpstreamOverHoldNanoUsd, 'Sum', 'usage over the hold (nano-USD, not charged)')],
      }),
      new GraphWidget({
        title: 'Tokens billed per 5 minutes',
        width: 12,
        left: [own(s, MetricName.PromptTokens, 'Sum', 'prompt'), own(s, MetricName.CompletionTokens, 'Sum', 'completion')],
      }),
      new GraphWidget({ title: 'Time to first token (ms, streams, fallbacks included)', width: 12, left: percentiles(s, MetricName.TimeToFirstToken, ['p50', 'p90', 'p99']) }),
      new GraphWidget({ title: "modelmux's own overhead per request (ms)", width: 12, left: percentiles(s, MetricName.Overhead, ['p50', 'p99']) }),
      new GraphWidget({
        title: 'Billing records: settle failures, holds pending / overdue, settles retried',
        width: 24,
        left: [own(s, MetricName.SettleFailures, 'Sum', 'settle failures'), own(s, MetricName.SettlesRetried, 'Sum', 'settles retried')],
        right: [own(s, MetricName.HoldsPending, 'Maximum', 'holds pending'), own(s, MetricName.HoldsOverdue, 'Maximum', 'holds overdue')],
      }),
    ];
    if (logGroups.length > 0) {
      widgets.push(
        new LogQueryWidget({
          title: 'Cost and requests by model (settled requests, from the request log lines)',
          width: 24,
          logGroupNames: logGroups.map((g) => g.logGroupName),
          queryLines: [
            'fields model, servedModel, costNanoUsd',
            'filter message = "request" and ispresent(costNanoUsd)',
            'stats count(*) as requests, sum(costNanoUsd) / 1000000000 as usd, sum(promptTokens) as prompt, sum(completionTokens) as completion by model',
            'sort usd desc',
            'limit 20',
          ],
        }),
      );
    }
    return widgets;
  }
}

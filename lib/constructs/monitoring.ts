import { Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  type CfnAlarm,
  Metric,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IMetric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { CfnMonitoringSubscription } from 'aws-cdk-lib/aws-cloudfront';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Alias, IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MetricName } from '../../functions/shared/config/stack-contract';
import {
  CANARY_PERIOD,
  capacityProviderMetric,
  own,
  PERIOD,
  serverErrorRate,
  tableThrottles,
  transactionConflicts,
  unreservedConcurrency,
  versionLambdaErrors,
  versionServerErrorRate,
} from './monitoring-metrics';
import { serviceWidgets } from './monitoring-widgets';
import { inUsEast1 } from './region-rule';

/**
 * The unreserved concurrency Lambda always keeps in an account and region (Lambda docs, "Lambda
 * quotas": reservations may not take the last 100). A stack with reservations R deploys only on a
 * quota of at least 100 + R, the default the concurrency alarm assumes when none is given
 * ({@link MonitoringProps.accountConcurrencyLimit}).
 */
export const LAMBDA_MIN_UNRESERVED_CONCURRENCY = 100;

/** "Near the limit": this share of a concurrency limit (reserved or account). */
export const CONCURRENCY_ALARM_RATIO = 0.8;

/** The 5xx-rate alarm: percent of answers, over 5-minute periods with at least this many requests. */
export const SERVER_ERROR_RATE_PERCENT = 5;
export const SERVER_ERROR_RATE_MIN_REQUESTS = 20;

/**
 * A canary's 5xx alarm: more than this percent of the new version's answers in a minute were 5xx, in a
 * minute where it answered at least {@link CANARY_MIN_REQUESTS} requests (README, "Rollouts").
 */
export const CANARY_5XX_RATE_PERCENT = 10;
export const CANARY_MIN_REQUESTS = 5;

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
  /**
   * The account's Lambda concurrency quota in this region. Default: the smallest quota the stack
   * deploys on ({@link LAMBDA_MIN_UNRESERVED_CONCURRENCY} + the reservations), so on an unknown quota the
   * alarm fires early rather than never (a 1,000 default never fired on a smaller quota).
   */
  readonly accountConcurrencyLimit?: number;
  /** Log groups the dashboard's cost-by-model query reads (the gateway functions' request lines). */
  readonly requestLogGroups?: readonly ILogGroup[];
  /** Reserved concurrency of the stack's functions, summed: the account-concurrency alarm watches what is left. */
  readonly reservedConcurrency?: number;
}

/** How {@link Monitoring.alarm} makes an alarm: one evaluation period of the metric's, missing data not breaching, unless given. */
export interface AlarmOptions {
  readonly description: string;
  readonly evaluationPeriods?: number;
  readonly datapointsToAlarm?: number;
  readonly period?: Duration;
  readonly comparison?: ComparisonOperator;
  readonly missingData?: TreatMissingData;
  /** Show it on the dashboard's alarm widget (default true). */
  readonly dashboard?: boolean;
}

/** A capacity provider's instance CPU, percent, above which for 15 minutes the capacity alarm fires (AWS's LMI guidance: CPU above 80%, docs/managed-instances.md §2, Monitoring). */
export const CAPACITY_CPU_ALARM_PERCENT = 80;

/** Direct calls to a Function URL (around CloudFront) in 5 minutes that raise the alarm. */
export const DIRECT_ACCESS_ALARM_THRESHOLD = 5;

/** DynamoDB transaction conflicts on one table per 5 minutes that, in 2 of 3 periods, raise the alarm. */
export const TRANSACTION_CONFLICT_THRESHOLD = 100;

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
  /** Alarms on the dashboard's alarm widget (not the conditional CloudFront ones). */
  private readonly dashboardAlarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.service = props.service;
    this.prefix = Stack.of(this).stackName;
    this.topic = new Topic(this, 'AlarmTopic', { displayName: `${this.prefix} alarms`, enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry alarm names and numbers, no customer data; CloudWatch cannot publish to a topic encrypted with the AWS-managed aws/sns key, and a customer-managed key would add a fixed monthly cost to a stack that is otherwise free when idle.',
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
      description:
        'An upstream target kept failing for 15 minutes (a circuit breaker opened in each 5-minute period): traffic is on fallbacks. See README, Runbook.',
      evaluationPeriods: 3,
    });
    this.alarm('SettlesOverdue', own(s, MetricName.HoldsOverdue, 'Maximum'), 1, {
      description: 'Holds are pending past their settle bound: answered requests not yet billed. See README, Runbook (replay or settle pending holds).',
    });
    this.alarm('SettleFailures', own(s, MetricName.SettleFailures, 'Sum'), 1, {
      description:
        'A settle did not land on the request path: an answered request is not in the ledger yet. See README, Runbook (replay or settle pending holds).',
    });
    this.alarm('UpstreamOverHold', own(s, MetricName.UpstreamOverHoldNanoUsd, 'Sum'), OVER_HOLD_LOSS_ALARM_NANO_USD, {
      description: `Upstreams reported usage worth more than $${OVER_HOLD_LOSS_ALARM_NANO_USD / 1e9} beyond the holds in 5 minutes (not charged: the platform's loss). An upstream ignores max_tokens or over-reports: see README, Runbook, and the \`usage over the hold\` log lines.`,
    });
    // Reserved concurrency is carved out of the quota: what the unreserved functions (and any other
    // function of the account) share is the quota less the reservations.
    const quota = props.accountConcurrencyLimit ?? LAMBDA_MIN_UNRESERVED_CONCURRENCY + (props.reservedConcurrency ?? 0);
    const unreserved = Math.max(1, quota - (props.reservedConcurrency ?? 0));
    this.alarm('AccountConcurrency', unreservedConcurrency(), Math.max(1, Math.floor(CONCURRENCY_ALARM_RATIO * unreserved)), {
      description: `Unreserved Lambda concurrency in this account and region is above ${CONCURRENCY_ALARM_RATIO * 100}% of what the quota (${quota}) leaves after the stack's reservations (${props.reservedConcurrency ?? 0}): new invocations of the unreserved functions will be throttled. See README, Runbook.`,
      period: Duration.minutes(1),
      evaluationPeriods: 3,
    });
    this.alarm('DirectAccess', own(s, MetricName.DirectAccessRefused, 'Sum'), DIRECT_ACCESS_ALARM_THRESHOLD, {
      description: `At least ${DIRECT_ACCESS_ALARM_THRESHOLD} requests in 5 minutes called a Function URL directly (around CloudFront and its WAF) and were refused: the URL is known outside. See README, Runbook (rotate the origin secret; recreate the URL).`,
    });

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `${this.prefix}-overview`, defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(...serviceWidgets(this.prefix, this.service, props.requestLogGroups ?? []));
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
      this.alarm(
        `${name}ConcurrencyNearLimit`,
        fn.metric('ConcurrentExecutions', { period: Duration.minutes(1), statistic: 'Maximum' }),
        Math.max(1, Math.floor(CONCURRENCY_ALARM_RATIO * reservedConcurrency)),
        {
          description: `The ${name} function uses more than ${CONCURRENCY_ALARM_RATIO * 100}% of its reserved concurrency (${reservedConcurrency}). See README, Runbook.`,
          period: Duration.minutes(1),
          evaluationPeriods: 3,
        },
      );
    }
    this.functionWidgets.push(
      new GraphWidget({
        title: `${name} function`,
        width: 12,
        left: [
          fn.metricInvocations({ period: Duration.minutes(1) }),
          fn.metricErrors({ period: Duration.minutes(1) }),
          fn.metricThrottles({ period: Duration.minutes(1) }),
        ],
        right: [
          fn.metric('ConcurrentExecutions', { statistic: 'Maximum', period: Duration.minutes(1) }),
          fn.metricDuration({ statistic: 'p99', period: Duration.minutes(1) }),
        ],
      }),
    );
    if (this.functionWidgets.length % 2 === 0) this.dashboard.addWidgets(...this.functionWidgets.slice(-2));
  }

  /**
   * The rollback alarms of one function's canary, for its deployment group only: the NEW version's own
   * 5xx rate (the per-version EMF copies of `Requests`/`ServerErrors`) and its crashes and timeouts
   * (Lambda's `Errors` by `ExecutedVersion` behind the alias), each per minute, ALARM on 1 of 2
   * datapoints, so a version answering 5xx from its first minute alarms within about 2–3 minutes
   * (a minute of data, its EMF ingestion, the evaluation): inside a 5-minute canary step, while
   * CodeDeploy still watches (README, "Rollouts"). `version` is the version this deploy publishes.
   * @returns the two alarms, for the function's own deployment group.
   */
  addCanary(name: string, alias: Alias): Alarm[] {
    const fn = alias.version.lambda;
    const version = alias.version.version;
    const canary = { period: CANARY_PERIOD, evaluationPeriods: 2, datapointsToAlarm: 1 };
    return [
      this.alarm(`${name}Canary5xx`, versionServerErrorRate(this.service, fn.functionName, version, CANARY_MIN_REQUESTS), CANARY_5XX_RATE_PERCENT, {
        ...canary,
        description: `More than ${CANARY_5XX_RATE_PERCENT}% of the ${name} function's newest version's answers in a minute were 5xx (with at least ${CANARY_MIN_REQUESTS} of its requests): a rollout of that version rolls back. See README, Runbook (Rollouts).`,
        comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
      }),
      this.alarm(`${name}CanaryErrors`, versionLambdaErrors(fn.functionName, alias.aliasName, version), 1, {
        ...canary,
        description: `The ${name} function's newest version crashed or timed out in a minute: a rollout of that version rolls back. See README, Runbook (Rollouts).`,
      }),
    ];
  }

  /**
   * Alarms on the table's read and write throttle events, on each of its global secondary indexes'
   * (an index that cannot keep up throttles writes to the table), and on its transaction conflicts
   * (how a hot account fails: concurrent holds and settles on one item).
   */
  addTable(name: string, table: ITable, indexNames: readonly string[] = []): void {
    this.alarm(`${name}TableThrottles`, tableThrottles(table), 1, {
      description: `DynamoDB throttled requests on the ${name} table (a hot partition or account limit): requests may have failed with 503. See README, Runbook.`,
    });
    for (const index of indexNames) {
      const id = index.charAt(0).toUpperCase() + index.slice(1);
      this.alarm(`${name}${id}IndexThrottles`, tableThrottles(table, index), 1, {
        description: `DynamoDB throttled the ${index} index of the ${name} table; an index that cannot keep up throttles writes to the table itself. See README, Runbook.`,
      });
    }
    this.alarm(`${name}TransactionConflicts`, transactionConflicts(table), TRANSACTION_CONFLICT_THRESHOLD, {
      description: `More than ${TRANSACTION_CONFLICT_THRESHOLD} transaction conflicts on the ${name} table in 2 of 3 five-minute periods: one account's holds and settles contend (a hot account; requests retry, then answer 503). See README, Runbook.`,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
  }

  /**
   * CloudFront's 5xx rate (any period above {@link SERVER_ERROR_RATE_PERCENT}%, 2 of 3) and origin
   * latency (p90 above `originLatencyMs`, 3 periods). CloudFront publishes its metrics in us-east-1
   * only, so these alarms exist only when the stack is deployed there: a CloudFormation condition when
   * the region is known only at deploy time, nothing at all when the stack is pinned to another region
   * (CDK refuses, at synth, an alarm on another region's metric: `AlarmRegionMismatch`); elsewhere
   * README, "Runbook" says how to add them in us-east-1. OriginLatency is one of the distribution's
   * additional metrics (turned on by the stack).
   */
  addDistribution(distributionId: string, originLatencyMs: number): void {
    const region = Stack.of(this).region;
    const pinnedElsewhere = !Token.isUnresolved(region) && region !== 'us-east-1';
    const here = Token.isUnresolved(region) ? inUsEast1(this) : undefined;
    // OriginLatency is one of the distribution's additional metrics (billed as 8 custom metrics).
    new CfnMonitoringSubscription(this, 'CloudFrontAdditionalMetrics', {
      distributionId,
      monitoringSubscription: { realtimeMetricsSubscriptionConfig: { realtimeMetricsSubscriptionStatus: 'Enabled' } },
    });
    const cf = (metricName: string, statistic: string) =>
      new Metric({
        namespace: 'AWS/CloudFront',
        metricName,
        dimensionsMap: { DistributionId: distributionId, Region: 'Global' },
        statistic,
        period: PERIOD,
        region: 'us-east-1',
      });
    if (pinnedElsewhere) return;
    const onlyInUsEast1 = (alarm: Alarm) => {
      if (here !== undefined) (alarm.node.defaultChild as CfnAlarm).cfnOptions.condition = here;
    };
    onlyInUsEast1(
      this.alarm('CloudFront5xxRate', cf('5xxErrorRate', 'Average'), SERVER_ERROR_RATE_PERCENT, {
        description: `More than ${SERVER_ERROR_RATE_PERCENT}% of CloudFront's answers were 5xx in 2 of 3 five-minute periods (origin errors, timeouts, or CloudFront's own 502/504). See README, Runbook.`,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
        dashboard: false,
      }),
    );
    onlyInUsEast1(
      this.alarm('CloudFrontOriginLatency', cf('OriginLatency', 'p90'), originLatencyMs, {
        description: `CloudFront waited more than ${originLatencyMs} ms (p90) for the functions' first byte for 15 minutes: slow upstreams or cold starts. See README, Runbook.`,
        evaluationPeriods: 3,
        comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
        dashboard: false,
      }),
    );
  }

  /**
   * Alarms for a queue (the settle queue): its oldest message older than `maxAgeSeconds`,
   * and, for a dead-letter queue, any message in it.
   */
  addQueue(name: string, queue: IQueue, opts: { maxAgeSeconds?: number; deadLetter?: boolean } = {}): void {
    if (opts.deadLetter === true) {
      // The age of its oldest message, not the visible count: a message being looked at is invisible,
      // and an idle queue's metrics stop. The sweep reads the dead-letter queue every 5 minutes, which
      // keeps it active, so no data means the sweep or SQS's metrics stopped: that alarms too.
      this.alarm(`${name}DeadLetters`, queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }), 1, {
        description: `Messages reached the ${name} dead-letter queue (work that failed every retry), or its metrics stopped (no sweep ran). See README, Runbook.`,
        missingData: TreatMissingData.BREACHING,
      });
      return;
    }
    this.alarm(`${name}Backlog`, queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }), opts.maxAgeSeconds ?? 300, {
      description: `The oldest message in ${name} waited longer than ${opts.maxAgeSeconds ?? 300} s. See README, Runbook.`,
    });
  }

  /**
   * Alarms for a Lambda Managed Instances capacity provider (docs/managed-instances.md §2, Monitoring):
   * its instances' CPU above {@link CAPACITY_CPU_ALARM_PERCENT}% for 15 minutes (Lambda scales on CPU, so
   * sustained high CPU means it cannot add instances: the `MaxVCpuCount` ceiling or EC2 capacity), and the
   * vCPUs allocated to environments above {@link CONCURRENCY_ALARM_RATIO} of what the ceiling can hold when
   * every environment vCPU takes `instanceVCpusPerEnvironmentVCpu` instance vCPUs. The functions' own
   * `Throttles` alarms ({@link addFunction}) see the requests refused meanwhile.
   * @param maxVCpus the provider's `MaxVCpuCount`, instance vCPUs.
   */
  addCapacityProvider(name: string, capacityProviderName: string, maxVCpus: number, instanceVCpusPerEnvironmentVCpu: number): void {
    this.alarm(`${name}Cpu`, capacityProviderMetric(capacityProviderName, 'CPUUtilization', 'AVG', 'instance CPU (%)'), CAPACITY_CPU_ALARM_PERCENT, {
      description: `The ${name} capacity provider's instances averaged more than ${CAPACITY_CPU_ALARM_PERCENT}% CPU for 15 minutes: Lambda is not adding instances (MaxVCpuCount ${maxVCpus} reached, or EC2 capacity); requests will be throttled. See README, Runbook.`,
      evaluationPeriods: 3,
      comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
    const usable = Math.max(1, Math.floor((CONCURRENCY_ALARM_RATIO * maxVCpus) / instanceVCpusPerEnvironmentVCpu));
    this.alarm(`${name}VCpus`, capacityProviderMetric(capacityProviderName, 'vCPUAllocated', 'SUM', 'vCPUs allocated'), usable, {
      description: `The ${name} capacity provider's execution environments hold ${usable} vCPUs or more for 10 minutes: ${CONCURRENCY_ALARM_RATIO * 100}% of what MaxVCpuCount (${maxVCpus}) holds on the smallest instances. Scaling and rollouts will stop at the ceiling: raise -c managedInstancesMaxVCpus. See README, Runbook.`,
      evaluationPeriods: 2,
    });
  }

  /** Flushes a pending half row of function graphs onto the dashboard (call once all functions are added). */
  finish(): void {
    if (this.functionWidgets.length % 2 === 1) this.dashboard.addWidgets(...this.functionWidgets.slice(-1));
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: this.dashboardAlarms as IAlarm[] }));
  }

  /**
   * One alarm `<stack>-<name>` on `metric` at `threshold` (≥ by default), notifying the topic on ALARM
   * and OK; for the alarms other modules add (monitoring-integrations.ts).
   */
  alarm(name: string, metric: IMetric, threshold: number, opts: AlarmOptions): Alarm {
    const alarm = new Alarm(this, name, {
      alarmName: `${this.prefix}-${name}`,
      alarmDescription: opts.description,
      metric,
      threshold,
      comparisonOperator: opts.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: opts.evaluationPeriods ?? 1,
      ...(opts.datapointsToAlarm ? { datapointsToAlarm: opts.datapointsToAlarm } : {}),
      // No data = nothing happened (no traffic, no holds, no throttles): not an alarm, unless said.
      treatMissingData: opts.missingData ?? TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    alarm.addOkAction(new SnsAction(this.topic));
    this.alarms.set(name, alarm);
    if (opts.dashboard !== false) this.dashboardAlarms.push(alarm);
    return alarm;
  }
}

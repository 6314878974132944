import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { METRICS_NAMESPACE, MetricName, type MetricNameValue, VersionDimension } from '../../functions/shared/config/stack-contract';

/**
 * CloudWatch metric definitions the alarms and the dashboard share: modelmux's own (EMF, namespace
 * {@link METRICS_NAMESPACE}, dimension `service` = the stack's service name; functions/shared/observability/metrics.ts)
 * and the AWS ones they sit beside (AWS/Lambda, AWS/DynamoDB).
 */

/** The default period of alarms and graphs. */
export const PERIOD = Duration.minutes(5);

/** One of modelmux's metrics for `service`, e.g. `own(service, 'Requests', 'Sum')`. */
export function own(service: string, name: MetricNameValue, statistic: string, label?: string, period: Duration = PERIOD): Metric {
  return new Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service }, statistic, period, ...(label ? { label } : {}) });
}

/** `CostNanoUsd` summed per period, in USD (nano-USD / 1e9). */
export function costUsd(service: string, period: Duration = PERIOD): MathExpression {
  return new MathExpression({
    expression: 'cost / 1000000000',
    usingMetrics: { cost: own(service, MetricName.CostNanoUsd, 'Sum', undefined, period) },
    label: 'charged (USD)',
    period,
  });
}

/**
 * Percentage of answers that were 5xx, over periods with at least `minRequests` requests (a single
 * failed request at night is not an incident), else 0.
 */
export function serverErrorRate(service: string, minRequests: number): MathExpression {
  return new MathExpression({
    expression: `IF(requests >= ${minRequests}, 100 * errors / requests, 0)`,
    usingMetrics: { requests: own(service, MetricName.Requests, 'Sum'), errors: own(service, MetricName.ServerErrors, 'Sum') },
    label: '5xx rate (%)',
    period: PERIOD,
  });
}

/**
 * Read plus write throttle events of a table (base table; on-demand tables still throttle per
 * partition), or of one of its global secondary indexes when `indexName` is given.
 */
export function tableThrottles(table: ITable, indexName?: string): MathExpression {
  const dimensionsMap: Record<string, string> =
    indexName === undefined ? { TableName: table.tableName } : { TableName: table.tableName, GlobalSecondaryIndexName: indexName };
  const metric = (metricName: string): Metric => new Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap, statistic: 'Sum', period: PERIOD });
  return new MathExpression({
    expression: 'FILL(r, 0) + FILL(w, 0)',
    usingMetrics: { r: metric('ReadThrottleEvents'), w: metric('WriteThrottleEvents') },
    label: 'throttle events',
    period: PERIOD,
  });
}

/** The account's concurrent Lambda executions in the region of functions without reserved concurrency. */
export function unreservedConcurrency(): Metric {
  return new Metric({ namespace: 'AWS/Lambda', metricName: 'UnreservedConcurrentExecutions', statistic: 'Maximum', period: Duration.minutes(1) });
}

/** Transactions DynamoDB rejected on the table because another request held one of its items (Sum per period). */
export function transactionConflicts(table: ITable): Metric {
  return new Metric({
    namespace: 'AWS/DynamoDB',
    metricName: 'TransactionConflict',
    dimensionsMap: { TableName: table.tableName },
    statistic: 'Sum',
    period: PERIOD,
  });
}

/** Latency percentiles of one of our millisecond metrics, one line each. */
export function percentiles(service: string, name: MetricNameValue, stats: readonly string[]): IMetric[] {
  return stats.map((statistic) => own(service, name, statistic, `${name} ${statistic}`, Duration.minutes(1)));
}

/** The period of a canary's rollback alarms: short enough to fire inside a 5-minute canary step. */
export const CANARY_PERIOD = Duration.minutes(1);

/**
 * Percentage of one function version's answers that were 5xx, per minute with at least `minRequests`
 * of its requests, else 0: the EMF copies of `Requests`/`ServerErrors` by `function` and `version`
 * (functions/shared/observability/metrics.ts `recordRequest`). `version` is the published version's
 * number (a token at synth: the version this deploy creates).
 */
export function versionServerErrorRate(service: string, functionName: string, version: string, minRequests: number): MathExpression {
  const dimensionsMap = { service, [VersionDimension.function]: functionName, [VersionDimension.version]: version };
  const m = (metricName: string) => new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap, statistic: 'Sum', period: CANARY_PERIOD });
  return new MathExpression({
    expression: `IF(requests >= ${minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
    usingMetrics: { requests: m(MetricName.Requests), errors: m(MetricName.ServerErrors) },
    label: 'version 5xx rate (%)',
    period: CANARY_PERIOD,
  });
}

/**
 * Lambda's `Errors` (crashes, timeouts) of one version reached through an alias: the `ExecutedVersion`
 * dimension, which Lambda publishes to compare the two versions behind a weighted alias (Lambda docs,
 * "Types of metrics for Lambda functions", dimensions). Sum per minute.
 */
export function versionLambdaErrors(functionName: string, aliasName: string, version: string): Metric {
  return new Metric({
    namespace: 'AWS/Lambda',
    metricName: 'Errors',
    dimensionsMap: { FunctionName: functionName, Resource: `${functionName}:${aliasName}`, ExecutedVersion: version },
    statistic: 'Sum',
    period: CANARY_PERIOD,
  });
}

/**
 * A capacity-provider metric of Lambda Managed Instances (AWS/Lambda, dimensions `CapacityProviderName`
 * and `InstanceType`, published every 5 minutes: docs/managed-instances.md §2, Monitoring), aggregated
 * over the provider's instance types by a CloudWatch Metrics Insights query (an alarm may watch one
 * query), so the alarm does not depend on which instance types Lambda picks.
 * @param aggregate `SUM` for counts (vCPUs), `AVG` or `MAX` for percentages.
 */
export function capacityProviderMetric(capacityProviderName: string, metricName: string, aggregate: 'SUM' | 'AVG' | 'MAX', label: string): MathExpression {
  return new MathExpression({
    expression: `SELECT ${aggregate}(${metricName}) FROM SCHEMA("AWS/Lambda", CapacityProviderName, InstanceType) WHERE CapacityProviderName = '${capacityProviderName}'`,
    usingMetrics: {},
    label,
    period: PERIOD,
  });
}

/**
 * EventBridge's `FailedInvocations` of a rule on the default bus (AWS/Events, dimension `RuleName`):
 * invocations of its targets that failed permanently, after EventBridge's retries. EventBridge sends
 * it only when it is not zero (EventBridge docs, "Monitoring Amazon EventBridge",
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-monitoring.html). Sum per period.
 */
export function ruleFailedInvocations(ruleName: string): Metric {
  return new Metric({ namespace: 'AWS/Events', metricName: 'FailedInvocations', dimensionsMap: { RuleName: ruleName }, statistic: 'Sum', period: PERIOD });
}

/** The period of the SES reputation alarms: SES recomputes the rates over a representative volume of mail, not per minute. */
export const SES_REPUTATION_PERIOD = Duration.hours(1);

/**
 * An account-wide Amazon SES reputation rate in the stack's region (AWS/SES, no dimension):
 * `Reputation.BounceRate` or `Reputation.ComplaintRate`, a fraction from 0 to 1 (× 100 for percent),
 * published only once the account has had a bounce or a complaint (SES docs, "Creating reputation
 * monitoring alarms using CloudWatch",
 * https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-cloudwatch-alarm.html). Maximum per hour.
 */
export function sesReputation(metricName: 'Reputation.BounceRate' | 'Reputation.ComplaintRate'): Metric {
  return new Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: SES_REPUTATION_PERIOD });
}

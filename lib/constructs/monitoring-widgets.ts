import { Duration } from 'aws-cdk-lib';
import { GraphWidget, LogQueryWidget, SingleValueWidget, TextWidget } from 'aws-cdk-lib/aws-cloudwatch';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { MetricName } from '../../functions/shared/config/stack-contract';
import { costUsd, own, percentiles } from './monitoring-metrics';

/**
 * The dashboard's service widgets (monitoring.ts): traffic, cost, fallbacks, latency and billing
 * health at a glance, then cost by model from the request log lines of `logGroups`.
 * @param prefix the stack name (the dashboard's title); @param s the metrics' `service` dimension.
 */
export function serviceWidgets(
  prefix: string,
  s: string,
  logGroups: readonly ILogGroup[],
): Array<TextWidget | GraphWidget | SingleValueWidget | LogQueryWidget> {
  const oneMinute = Duration.minutes(1);
  const widgets: Array<TextWidget | GraphWidget | SingleValueWidget | LogQueryWidget> = [
    new TextWidget({
      width: 24,
      height: 2,
      markdown: `# ${prefix}\nTraffic, money, fallbacks and latency of modelmux (namespace \`modelmux\`, service \`${s}\`). Cost is what accounts were charged. README, "Runbook: read the dashboard".`,
    }),
    new GraphWidget({
      title: 'Traffic: requests and errors per minute',
      width: 12,
      left: [
        own(s, MetricName.Requests, 'Sum', 'requests', oneMinute),
        own(s, MetricName.ClientErrors, 'Sum', '4xx', oneMinute),
        own(s, MetricName.ServerErrors, 'Sum', '5xx', oneMinute),
      ],
    }),
    new GraphWidget({ title: 'Cost charged (USD per 5 minutes)', width: 8, left: [costUsd(s)] }),
    new SingleValueWidget({ title: 'Cost charged in the time range (USD)', width: 4, metrics: [costUsd(s)], setPeriodToTimeRange: true, fullPrecision: true }),
    new GraphWidget({
      title: 'Fallbacks, breaker openings, estimated usage',
      width: 12,
      left: [
        own(s, MetricName.Fallbacks, 'Sum', 'fallbacks'),
        own(s, MetricName.BreakerOpened, 'Sum', 'breakers opened'),
        own(s, MetricName.UsageEstimated, 'Sum', 'usage estimated'),
      ],
      right: [own(s, MetricName.UpstreamOverHoldNanoUsd, 'Sum', 'usage over the hold (nano-USD, not charged)')],
    }),
    new GraphWidget({
      title: 'Tokens billed per 5 minutes',
      width: 12,
      left: [own(s, MetricName.PromptTokens, 'Sum', 'prompt'), own(s, MetricName.CompletionTokens, 'Sum', 'completion')],
    }),
    new GraphWidget({
      title: 'Time to first token (ms, streams, fallbacks included)',
      width: 12,
      left: percentiles(s, MetricName.TimeToFirstToken, ['p50', 'p90', 'p99']),
    }),
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

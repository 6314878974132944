import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { METRICS_NAMESPACE, MetricName } from '../../functions/shared/config/stack-contract';
import { type CfnResource, logicalIdByPath, resourcesOfType } from './template-helpers';
import { synthTemplate as synth } from './support/synth';

/**
 * Alarms, the alarm topic and the dashboard of the default stack (synthesised once for the whole stack
 * tier, without bundling: this is about the template; test/lib/support/synth.ts), plus the variants that change them.
 */

// Each variant synthesises the whole stack (seconds each on a loaded machine).
vi.setConfig({ testTimeout: 120_000 });

let template: Template;
let alarms: Record<string, Record<string, unknown>>;

beforeAll(() => {
  template = synth({ alarmEmail: 'ops@example.com' });
  alarms = Object.fromEntries(
    Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((a) => [String(a.Properties?.AlarmName), a.Properties ?? {}]),
  );
}, 120_000);

/** The metric(s) an alarm reads: its own, or those of its math expression. */
function alarmMetrics(alarm: Record<string, unknown>): Array<{ Namespace: string; MetricName: string; Dimensions?: Array<{ Name: string; Value: unknown }> }> {
  if (alarm.MetricName !== undefined)
    return [{ Namespace: String(alarm.Namespace), MetricName: String(alarm.MetricName), Dimensions: alarm.Dimensions as never }];
  return ((alarm.Metrics as Array<{ MetricStat?: { Metric: never } }>) ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
}

describe('alarm topic', () => {
  it('is TLS-only and subscribes the alarmEmail address (none without it: stack.test.ts)', () => {
    const topicId = logicalIdByPath(template, 'AWS::SNS::Topic', '/Monitoring/');
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } });
    const policy = Object.values(resourcesOfType(template, 'AWS::SNS::TopicPolicy'))[0];
    expect(JSON.stringify(policy?.Properties?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });
});

describe('alarms', () => {
  it('exist for every item of the runbook, named after the stack, each notifying the topic on ALARM and OK', () => {
    expect(Object.keys(alarms).sort()).toEqual(
      [
        'AccountCanary5xx',
        'AccountCanaryErrors',
        'AccountConcurrency',
        'AccountConcurrencyNearLimit',
        'AccountErrors',
        'AccountThrottles',
        'AccountsByEmailKeysIndexThrottles',
        'AccountsPendingHoldsIndexThrottles',
        'AccountsTableThrottles',
        'AccountsTransactionConflicts',
        'BreakersOpen',
        'ChatCanary5xx',
        'ChatCanaryErrors',
        'ChatErrors',
        'ChatThrottles',
        'CloudFront5xxRate',
        'CloudFrontOriginLatency',
        'DirectAccess',
        'EmbeddingsCanary5xx',
        'EmbeddingsCanaryErrors',
        'EmbeddingsErrors',
        'EmbeddingsThrottles',
        'KeysByAccountIndexThrottles',
        'KeysTableThrottles',
        'KeysTransactionConflicts',
        'LedgerTableThrottles',
        'LedgerTransactionConflicts',
        'ResponsesTableThrottles',
        'ResponsesTransactionConflicts',
        'ServerErrorRate',
        'SettleDeadLetters',
        'SettleErrors',
        'SettleFailures',
        'SettleQueueBacklog',
        'SettleConcurrencyNearLimit',
        'SettleThrottles',
        'SettlesOverdue',
        'StripeWebhookFailures',
        'StripeWebhookSignatures',
        'SweepFailedInvocations',
        'UpstreamOverHold',
      ]
        .map((n) => `Modelmux-${n}`)
        .sort(),
    );
    const topicId = logicalIdByPath(template, 'AWS::SNS::Topic', '/Monitoring/');
    for (const [name, alarm] of Object.entries(alarms)) {
      expect(alarm.AlarmActions, name).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions, name).toEqual([{ Ref: topicId }]);
      // The dead-letter alarm alone treats no data as bad (the sweep keeps its queue's metrics flowing).
      expect(alarm.TreatMissingData, name).toBe(name === 'Modelmux-SettleDeadLetters' ? 'breaching' : 'notBreaching');
      expect(String(alarm.AlarmDescription), name).toMatch(/Runbook/);
    }
  });

  it("read modelmux's own metrics in its namespace with the stack's service dimension", () => {
    const own = (name: string) => alarmMetrics(alarms[`Modelmux-${name}`] ?? {});
    expect(own('SettlesOverdue')).toEqual([
      { Namespace: METRICS_NAMESPACE, MetricName: MetricName.HoldsOverdue, Dimensions: [{ Name: 'service', Value: 'Modelmux' }] },
    ]);
    expect(own('SettleFailures')[0]).toMatchObject({ Namespace: 'modelmux', MetricName: 'SettleFailures' });
    expect(own('BreakersOpen')[0]).toMatchObject({ Namespace: 'modelmux', MetricName: 'BreakerOpened' });
    expect(own('UpstreamOverHold')[0]).toMatchObject({ Namespace: 'modelmux', MetricName: 'UpstreamOverHoldNanoUsd' });
    expect(alarms['Modelmux-UpstreamOverHold']).toMatchObject({ Threshold: 10_000_000, Statistic: 'Sum' });
    expect(
      own('ServerErrorRate')
        .map((m) => m.MetricName)
        .sort(),
    ).toEqual(['Requests', 'ServerErrors']);
  });

  it('alarm on a 5xx rate above 5% over periods with at least 20 requests, in 2 of 3 periods', () => {
    const alarm = alarms['Modelmux-ServerErrorRate'] ?? {};
    expect(alarm).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    const expression = (alarm.Metrics as Array<{ Expression?: string }>).find((m) => m.Expression)?.Expression;
    expect(expression).toBe('IF(requests >= 20, 100 * errors / requests, 0)');
  });

  it("roll back each function's canary on its NEW version's own 5xx rate and errors, per minute, in that function's deployment group only", () => {
    const raw = template.toJSON().Resources as Record<string, { Type: string; Properties?: Record<string, unknown>; DependsOn?: string[] }>;
    const groups = Object.entries(raw).filter(([, r]) => r.Type === 'AWS::CodeDeploy::DeploymentGroup');
    const aliasOf = (fn: string) => Object.entries(raw).find(([id, r]) => r.Type === 'AWS::Lambda::Alias' && id.startsWith(fn))!;
    for (const fn of ['Chat', 'Embeddings', 'Account']) {
      const rate = alarms[`Modelmux-${fn}Canary5xx`] ?? {};
      expect(rate).toMatchObject({ Threshold: 10, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 2, DatapointsToAlarm: 1 });
      const metrics =
        (rate.Metrics as Array<{
          Expression?: string;
          MetricStat?: { Metric: { MetricName: string; Dimensions: Array<{ Name: string; Value: unknown }> }; Period: number };
        }>) ?? [];
      expect(metrics.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 5, 100 * FILL(errors, 0) / requests, 0)');
      const [aliasId, alias] = aliasOf(fn);
      const version = (alias.Properties?.FunctionVersion as { 'Fn::GetAtt': string[] })['Fn::GetAtt'];
      for (const m of metrics.filter((x) => x.MetricStat)) {
        expect(m.MetricStat!.Period).toBe(60);
        const dims = m.MetricStat!.Metric.Dimensions;
        expect(dims.map((d) => d.Name).sort()).toEqual(['function', 'service', 'version']);
        // The version this deploy publishes (the alias's new target), not the function at large.
        expect(dims.find((d) => d.Name === 'version')!.Value).toEqual({ 'Fn::GetAtt': version });
      }
      const errors = alarms[`Modelmux-${fn}CanaryErrors`] ?? {};
      expect(errors).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Period: 60, EvaluationPeriods: 2, DatapointsToAlarm: 1 });
      expect((errors.Dimensions as Array<{ Name: string }>).map((d) => d.Name).sort()).toEqual(['ExecutedVersion', 'FunctionName', 'Resource']);
      // The function's own group holds exactly its two canary alarms; the alias waits for them.
      const canaryIds = Object.entries(raw)
        .filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm' && String(r.Properties?.AlarmName).startsWith(`Modelmux-${fn}Canary`))
        .map(([id]) => id);
      expect(canaryIds).toHaveLength(2);
      const own = groups.filter(([, g]) => JSON.stringify(g.Properties).includes(canaryIds[0]!));
      expect(own).toHaveLength(1);
      const names = (own[0]![1].Properties?.AlarmConfiguration as { Alarms: Array<{ Name: unknown }> }).Alarms.map((a) => JSON.stringify(a.Name));
      expect(names.sort()).toEqual(canaryIds.map((id) => JSON.stringify({ Ref: id })).sort());
      expect(raw[aliasId]!.DependsOn).toEqual(expect.arrayContaining(canaryIds));
    }
  });

  it('alarm on Lambda errors and throttles of each function, and on unreserved concurrency at 80% of what the smallest deployable quota (100 + reservations) leaves', () => {
    for (const fn of ['Chat', 'Embeddings']) {
      expect(alarmMetrics(alarms[`Modelmux-${fn}Errors`] ?? {})[0]).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors' });
      expect(alarmMetrics(alarms[`Modelmux-${fn}Throttles`] ?? {})[0]).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Throttles' });
    }
    expect(alarms['Modelmux-AccountConcurrency']).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'UnreservedConcurrentExecutions',
      Threshold: Math.floor(0.8 * 100),
      Statistic: 'Maximum',
    });
    expect(alarms['Modelmux-AccountConcurrency']?.Dimensions).toBeUndefined();
  });

  it('alarm on read and write throttle events of each table', () => {
    for (const table of ['Keys', 'Accounts', 'Ledger', 'Responses']) {
      const metrics = alarmMetrics(alarms[`Modelmux-${table}TableThrottles`] ?? {});
      expect(metrics.map((m) => m.MetricName).sort()).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      expect(JSON.stringify(metrics[0]?.Dimensions)).toContain(logicalIdByPath(template, 'AWS::DynamoDB::Table', `/Data/${table}/`));
    }
  });

  it("alarm on the sweep rule's failed invocations and on Stripe webhook failures, no data being no failure", () => {
    const ruleId = logicalIdByPath(template, 'AWS::Events::Rule', '/SettlePath/Sweep/');
    expect(alarms['Modelmux-SweepFailedInvocations']).toMatchObject({
      Namespace: 'AWS/Events',
      MetricName: 'FailedInvocations',
      Dimensions: [{ Name: 'RuleName', Value: { Ref: ruleId } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    const service = [{ Name: 'service', Value: 'Modelmux' }];
    expect(alarms['Modelmux-StripeWebhookSignatures']).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: MetricName.StripeWebhookSignatureFailures,
      Dimensions: service,
      Statistic: 'Sum',
      Threshold: 5,
    });
    expect(alarms['Modelmux-StripeWebhookFailures']).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: MetricName.StripeWebhookFailures,
      Dimensions: service,
      Statistic: 'Sum',
      Threshold: 1,
    });
    // No SES reputation alarms without emailFrom: the stack sends no mail of its own.
    expect(Object.keys(alarms).filter((n) => n.includes('Mail'))).toEqual([]);
  });

  it("alarm with emailFrom on the SES account's bounce rate at 5% and complaint rate at 0.1%, keeping their state without data", () => {
    const variant = synth({ emailFrom: 'billing@example.com' });
    const named = Object.fromEntries(
      Object.values(resourcesOfType(variant, 'AWS::CloudWatch::Alarm')).map((a) => [String(a.Properties?.AlarmName), a.Properties ?? {}]),
    );
    const topicId = logicalIdByPath(variant, 'AWS::SNS::Topic', '/Monitoring/');
    for (const [name, metricName, threshold] of [
      ['MailBounceRate', 'Reputation.BounceRate', 0.05],
      ['MailComplaintRate', 'Reputation.ComplaintRate', 0.001],
    ] as const) {
      expect(named[`Modelmux-${name}`], name).toMatchObject({
        Namespace: 'AWS/SES',
        MetricName: metricName,
        Statistic: 'Maximum',
        Period: 3600,
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'ignore',
        AlarmActions: [{ Ref: topicId }],
        OKActions: [{ Ref: topicId }],
      });
      expect(named[`Modelmux-${name}`]?.Dimensions, name).toBeUndefined();
    }
  });

  it('alarm on concurrency near a reserved limit, and the account limit from context', () => {
    const variant = synth({ chatReservedConcurrency: '50', accountConcurrencyLimit: '3000' });
    const named = Object.fromEntries(
      Object.values(resourcesOfType(variant, 'AWS::CloudWatch::Alarm')).map((a) => [String(a.Properties?.AlarmName), a.Properties ?? {}]),
    );
    expect(named['Modelmux-ChatConcurrencyNearLimit']).toMatchObject({ MetricName: 'ConcurrentExecutions', Threshold: 40 });
    expect(named['Modelmux-EmbeddingsConcurrencyNearLimit']).toBeUndefined();
    expect(named['Modelmux-AccountConcurrency']).toMatchObject({ Threshold: Math.floor(0.8 * (3000 - 50 - 5 - 10)) });
  });
});

describe('dashboard', () => {
  it('shows traffic, cost, fallbacks, latency and billing records from the modelmux namespace, and cost by model from the logs', () => {
    const dashboard = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'))[0] as CfnResource;
    expect(dashboard.Properties?.DashboardName).toBe('Modelmux-overview');
    // The body is a Fn::Join of JSON text and references: join it with placeholders and read it as JSON.
    const parts = (dashboard.Properties?.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const body = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : 'REF')).join('')) as {
      widgets: Array<{ type: string; properties: { title?: string; metrics?: unknown[][]; query?: string } }>;
    };
    const titles = body.widgets.map((w) => w.properties.title ?? '');
    for (const title of [
      'Traffic',
      'Cost charged',
      'Fallbacks',
      'Time to first token',
      'overhead',
      'Billing records',
      'Cost and requests by model',
      'Chat function',
      'Embeddings function',
      'Alarms',
    ]) {
      expect(
        titles.some((t) => t.includes(title)),
        title,
      ).toBe(true);
    }
    const plotted = body.widgets.flatMap((w) => w.properties.metrics ?? []).filter((m) => m[0] === METRICS_NAMESPACE);
    for (const metric of ['Requests', 'ServerErrors', 'CostNanoUsd', 'Fallbacks', 'BreakerOpened', 'TimeToFirstToken', 'Overhead', 'HoldsOverdue']) {
      expect(
        plotted.some((m) => m[1] === metric && m[2] === 'service' && m[3] === 'Modelmux'),
        metric,
      ).toBe(true);
    }
    const expressions = body.widgets
      .flatMap((w) => w.properties.metrics ?? [])
      .map((m) => (m[0] as { expression?: string }).expression)
      .filter(Boolean);
    expect(expressions).toContain('cost / 1000000000');
    expect(body.widgets.find((w) => w.type === 'log')?.properties.query).toMatch(/filter message = "request" and ispresent\(costNanoUsd\)[\s\S]*by model/);
  });

  it('is left out, with the alarms, when monitoring=false', () => {
    const variant = synth({ monitoring: 'false' });
    variant.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    variant.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { Validations } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../lib/stack-context';
import { testApp } from './template-helpers';

/**
 * cdk-nag's AwsSolutions pack on the synthesised stack, as `cdk synth` runs it (bin/app.ts): every
 * finding is either fixed or acknowledged in code with its reason, so synth must pass with zero
 * unacknowledged errors, for the default stack and for the option sets that add resources. Synthesised
 * without bundling (the checks read the template, not the code).
 */

/** One entry of CDK's validation report (validation-report.json, `pluginReports[].violations`). */
interface Violation {
  ruleName: string;
  violatingConstructs: Array<{ constructPath: string }>;
}

/** Synthesises with the AwsSolutions checks; returns the violations that failed it (none: []). */
function nagViolations(context: Record<string, unknown>, addToStack?: (stack: ModelmuxStack) => void): Violation[] {
  const app = testApp(context, { bundle: false });
  const stack = new ModelmuxStack(app, 'Modelmux', stackPropsFromContext(app.node));
  addToStack?.(stack);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    app.synth();
    return [];
  } catch (err) {
    // CDK's policy validation: "Validation failed. A copy of this report can be found in: <file>".
    const report = /found in: (\S+)/.exec(String(err))?.[1];
    if (report === undefined || !existsSync(report)) throw err;
    const parsed = JSON.parse(readFileSync(report, 'utf8')) as { pluginReports: Array<{ violations: Violation[] }> };
    return parsed.pluginReports.flatMap((r) => r.violations);
  }
}

const summary = (violations: Violation[]): string[] => violations.map((v) => `${v.ruleName} ${v.violatingConstructs.map((c) => c.constructPath).join(',')}`);

describe('cdk-nag AwsSolutions', () => {
  it('finds no unacknowledged error in the default stack', () => {
    expect(summary(nagViolations({}))).toEqual([]);
  }, 120_000);

  it('finds none with backups copied to another region, cost guards, a hosted sign-in domain, restored tables, function settings and mail from SES', () => {
    const context = {
      backupCopyRegion: 'eu-west-1',
      budgetMonthlyUsd: '300',
      alarmEmail: 'ops@example.com',
      costAnomalyDetection: 'true',
      cognitoDomainPrefix: 'modelmux-demo',
      oauthCallbackUrls: 'https://api.example.com/',
      restoredTables: '{"accounts":"accounts-restored"}',
      functionSettings: '{"RATE_LIMIT_RPM":"1200"}',
      emailFrom: 'billing@example.com',
      emailFromName: 'modelmux',
    };
    expect(summary(nagViolations(context))).toEqual([]);
  }, 120_000);

  it('finds none with every edge and operations option on (custom domain, WAF, tracing, reserved concurrency, alarm email)', () => {
    const context = {
      domainName: 'api.example.com',
      hostedZoneId: 'Z0123456789ABC',
      hostedZoneName: 'example.com',
      waf: 'true',
      tracing: 'true',
      chatReservedConcurrency: '20',
      alarmEmail: 'ops@example.com',
    };
    expect(summary(nagViolations(context))).toEqual([]);
  }, 120_000);

  it('finds none with compute=managed-instances (its VPC, NAT, endpoint, security group, operator role and capacity provider)', () => {
    expect(summary(nagViolations({ compute: 'managed-instances' }))).toEqual([]);
  }, 120_000);

  it('finds none without CloudFront and with imported secrets', () => {
    expect(summary(nagViolations({ cloudfront: 'false', upstreamSecretName: 'team/llm-keys', stripeSecretName: 'team/stripe' }))).toEqual([]);
  });

  it('does fail synth on an unacknowledged finding (the check is really running)', () => {
    const violations = nagViolations({}, (stack) => new Bucket(stack, 'Careless'));
    expect(violations.map((v) => v.ruleName)).toEqual(
      expect.arrayContaining([expect.stringMatching(/AwsSolutions-S10/), expect.stringMatching(/AwsSolutions-S1\b/)]),
    );
    for (const v of violations) expect(v.violatingConstructs.map((c) => c.constructPath)).toEqual(['Modelmux/Careless/Resource']);
  });
});

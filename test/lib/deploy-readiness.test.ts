import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { DEFAULT_ACCOUNT_RESERVED_CONCURRENCY, DEFAULT_SETTLE_RESERVED_CONCURRENCY } from '../../lib/stack-props';
import { BACKUP_RETENTION_DAYS } from '../../lib/constructs/backups';
import { LAMBDA_MIN_UNRESERVED_CONCURRENCY } from '../../lib/constructs/monitoring';
import { synthTemplate } from './support/synth';
import { actionsOf, allIamStatements, type CfnResource, logicalIdByPath, resourcesOfStatement, resourcesOfType, testApp } from './template-helpers';
import { stackPropsFromContext } from '../../lib/stack-context';
import { FUNCTION_URL_UNSUPPORTED_REGIONS } from '../../lib/constructs/region-rule';

/**
 * Production deploy readiness, on the synthesised template (one synthesis per context,
 * shared: test/lib/support/synth.ts): concurrency guards, the `live` alias with CodeDeploy canaries
 * that roll back on alarms, AWS Backup with a cross-region copy, alarms that cannot go quiet, cost
 * guards, the Cognito client's flows, the sweep's index, function settings from context, IAM.
 */

const SLOW = 120_000;

function fnByPath(context: Record<string, unknown>, part: string): CfnResource {
  const t = synthTemplate(context);
  return resourcesOfType(t, 'AWS::Lambda::Function')[logicalIdByPath(t, 'AWS::Lambda::Function', part)]!;
}

function alarmsByName(context: Record<string, unknown> = {}): Record<string, Record<string, unknown> & { condition?: string }> {
  const resources = resourcesOfType(synthTemplate(context), 'AWS::CloudWatch::Alarm') as Record<string, CfnResource & { Condition?: string }>;
  return Object.fromEntries(
    Object.values(resources).map((a) => [String(a.Properties?.AlarmName).replace(/^Modelmux-/, ''), { ...a.Properties, condition: a.Condition }]),
  );
}

describe('1. concurrency guards', () => {
  it(
    'reserves room for the settle and account functions by default, none for chat and embeddings',
    () => {
      expect(fnByPath({}, '/SettlePath/').Properties?.ReservedConcurrentExecutions).toBe(DEFAULT_SETTLE_RESERVED_CONCURRENCY);
      expect(fnByPath({}, '/Account/').Properties?.ReservedConcurrentExecutions).toBe(DEFAULT_ACCOUNT_RESERVED_CONCURRENCY);
      expect(fnByPath({}, '/Chat/').Properties?.ReservedConcurrentExecutions).toBeUndefined();
      expect(fnByPath({}, '/Embeddings/').Properties?.ReservedConcurrentExecutions).toBeUndefined();
    },
    SLOW,
  );

  it(
    'takes every reservation from context, and caps the settle queue pollers below the settle reservation',
    () => {
      const context = { settleReservedConcurrency: '8', accountReservedConcurrency: '4', chatReservedConcurrency: '50' };
      expect(fnByPath(context, '/SettlePath/').Properties?.ReservedConcurrentExecutions).toBe(8);
      expect(fnByPath(context, '/Account/').Properties?.ReservedConcurrentExecutions).toBe(4);
      expect(fnByPath(context, '/Chat/').Properties?.ReservedConcurrentExecutions).toBe(50);
      const mappings = Object.values(resourcesOfType(synthTemplate(context), 'AWS::Lambda::EventSourceMapping'));
      expect(mappings.map((m) => m.Properties?.ScalingConfig)).toEqual([{ MaximumConcurrency: 7 }]);
      const defaults = Object.values(resourcesOfType(synthTemplate({}), 'AWS::Lambda::EventSourceMapping'));
      expect(defaults.map((m) => m.Properties?.ScalingConfig)).toEqual([{ MaximumConcurrency: DEFAULT_SETTLE_RESERVED_CONCURRENCY - 1 }]);
      expect(() => stackPropsFromContext(testApp({ settleReservedConcurrency: '2' }).node)).toThrow(/context settleReservedConcurrency must be at least 3/);
    },
    SLOW,
  );

  it(
    'alarms on the unreserved concurrency against what the quota leaves after the reservations',
    () => {
      const alarm = alarmsByName({ accountConcurrencyLimit: '400', chatReservedConcurrency: '100' }).AccountConcurrency!;
      expect(alarm.MetricName).toBe('UnreservedConcurrentExecutions');
      expect(alarm.Threshold).toBe(Math.floor(0.8 * (400 - 100 - DEFAULT_SETTLE_RESERVED_CONCURRENCY - DEFAULT_ACCOUNT_RESERVED_CONCURRENCY)));
      expect(alarmsByName().AccountConcurrency!.Threshold).toBe(Math.floor(0.8 * LAMBDA_MIN_UNRESERVED_CONCURRENCY));
    },
    SLOW,
  );
});

describe('2. direct access', () => {
  it(
    'alarms on refused direct calls to a Function URL',
    () => {
      const alarm = alarmsByName().DirectAccess!;
      expect(alarm).toMatchObject({ Namespace: 'modelmux', MetricName: 'DirectAccessRefused', Statistic: 'Sum', TreatMissingData: 'notBreaching' });
    },
    SLOW,
  );
});

describe('3. the sweep finds holds through an index', () => {
  it(
    'gives the accounts table a keys-only sparse pendingHolds index and a keys-only byEmailKeys, and the settle role Query on it, no Scan',
    () => {
      const t = synthTemplate({});
      const accounts = resourcesOfType(t, 'AWS::DynamoDB::Table')[logicalIdByPath(t, 'AWS::DynamoDB::Table', '/Data/Accounts')]!;
      const gsis = (
        accounts.Properties?.GlobalSecondaryIndexes as Array<{ IndexName: string; Projection: { ProjectionType: string }; KeySchema: unknown }>
      ).map((g) => [g.IndexName, g.Projection.ProjectionType]);
      expect(gsis.sort()).toEqual([
        ['byEmailKeys', 'KEYS_ONLY'],
        ['pendingHolds', 'KEYS_ONLY'],
      ]);
      const settle = allIamStatements(t).filter(({ statement }) => String(statement.Sid ?? '').startsWith('Settle'));
      expect(settle.flatMap(({ statement }) => actionsOf(statement))).not.toContain('dynamodb:Scan');
      const index = settle.find(({ statement }) => statement.Sid === 'SettleAccountsPendingHolds')!.statement;
      expect(actionsOf(index)).toEqual(['dynamodb:Query']);
      expect(JSON.stringify(resourcesOfStatement(index))).toContain('/index/pendingHolds');
    },
    SLOW,
  );
});

describe('4. alarms that cannot go quiet', () => {
  it(
    'watches the dead-letter queue by the age of its oldest message, missing data breaching',
    () => {
      expect(alarmsByName().SettleDeadLetters).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', TreatMissingData: 'breaching', Threshold: 1 });
    },
    SLOW,
  );

  it(
    'alarms on every index throttle and on transaction conflicts per table',
    () => {
      const alarms = alarmsByName();
      for (const name of ['KeysByAccountIndexThrottles', 'AccountsByEmailKeysIndexThrottles', 'AccountsPendingHoldsIndexThrottles']) {
        const metrics = (alarms[name]!.Metrics as Array<{ MetricStat?: { Metric: { Dimensions: Array<{ Name: string }> } } }>).flatMap((m) =>
          m.MetricStat ? [m.MetricStat.Metric] : [],
        );
        expect(metrics.every((m) => m.Dimensions.some((d) => d.Name === 'GlobalSecondaryIndexName'))).toBe(true);
      }
      expect(alarms.AccountsTransactionConflicts).toMatchObject({
        MetricName: 'TransactionConflict',
        Namespace: 'AWS/DynamoDB',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
      });
    },
    SLOW,
  );

  it(
    "alarms on CloudFront's 5xx rate and origin latency, only where CloudFront's metrics are (us-east-1)",
    () => {
      const alarms = alarmsByName();
      expect(alarms.CloudFront5xxRate).toMatchObject({ Namespace: 'AWS/CloudFront', MetricName: '5xxErrorRate' });
      expect(alarms.CloudFrontOriginLatency).toMatchObject({ Namespace: 'AWS/CloudFront', MetricName: 'OriginLatency', ExtendedStatistic: 'p90' });
      const condition = alarms.CloudFront5xxRate!.condition!;
      expect(JSON.stringify(synthTemplate({}).toJSON().Conditions[condition])).toContain('us-east-1');
      expect(alarmsByName({ cloudfront: 'false' }).CloudFront5xxRate).toBeUndefined();
      // A stack pinned to a region (the CLI knows it): in us-east-1 the alarms need no condition;
      // anywhere else they are left out, and the stack still synthesizes.
      const pinned = (region: string) => {
        const app = testApp({}, { bundle: false });
        const stack = new ModelmuxStack(app, 'Modelmux', { ...stackPropsFromContext(app.node), env: { region } });
        return resourcesOfType(Template.fromStack(stack), 'AWS::CloudWatch::Alarm') as Record<string, CfnResource & { Condition?: string }>;
      };
      const east = Object.values(pinned('us-east-1')).filter((a) => String(a.Properties?.AlarmName).includes('CloudFront'));
      expect(east).toHaveLength(2);
      expect(east.every((a) => a.Condition === undefined)).toBe(true);
      const west = Object.values(pinned('eu-west-1'));
      expect(west.length).toBeGreaterThan(5);
      expect(west.filter((a) => String(a.Properties?.AlarmName).includes('CloudFront'))).toEqual([]);
    },
    SLOW,
  );

  it(
    'refuses a region without Lambda function URLs: at synth when pinned, by a CloudFormation rule before any resource when not',
    () => {
      const rule = synthTemplate({}).toJSON().Rules?.FunctionUrlRegion as { Assertions: Array<{ Assert: unknown; AssertDescription: string }> };
      // Fn::Not [Fn::Contains [the list, AWS::Region]]: CloudFormation evaluates it before creating anything.
      expect(rule.Assertions[0]!.Assert).toEqual({ 'Fn::Not': [{ 'Fn::Contains': [[...FUNCTION_URL_UNSUPPORTED_REGIONS], { Ref: 'AWS::Region' }] }] });
      expect(rule.Assertions[0]!.AssertDescription).toContain('function URLs');
      expect(FUNCTION_URL_UNSUPPORTED_REGIONS).toHaveLength(11);
      for (const region of ['eu-central-2', 'me-central-1']) {
        const app = testApp({}, { bundle: false });
        expect(() => new ModelmuxStack(app, 'Modelmux', { ...stackPropsFromContext(app.node), env: { region } })).toThrow(
          new RegExp(`function URLs.*this stack is in ${region}`),
        );
      }
      const app = testApp({}, { bundle: false });
      expect(() => new ModelmuxStack(app, 'Modelmux', { ...stackPropsFromContext(app.node), env: { region: 'eu-central-1' } })).not.toThrow();
    },
    SLOW,
  );

  it(
    'adds a monthly budget and Cost Anomaly Detection from context, mailing budgetEmail (or alarmEmail)',
    () => {
      expect(Object.keys(resourcesOfType(synthTemplate({}), 'AWS::Budgets::Budget'))).toEqual([]);
      const t = synthTemplate({ budgetMonthlyUsd: '300', alarmEmail: 'ops@example.com', costAnomalyDetection: 'true' });
      t.hasResourceProperties('AWS::Budgets::Budget', {
        Budget: { BudgetType: 'COST', TimeUnit: 'MONTHLY', BudgetLimit: { Amount: 300, Unit: 'USD' } },
        NotificationsWithSubscribers: [
          { Notification: { NotificationType: 'ACTUAL', Threshold: 80 }, Subscribers: [{ SubscriptionType: 'EMAIL', Address: 'ops@example.com' }] },
          { Notification: { NotificationType: 'FORECASTED', Threshold: 100 }, Subscribers: [{ SubscriptionType: 'EMAIL', Address: 'ops@example.com' }] },
        ],
      });
      t.hasResourceProperties('AWS::CE::AnomalySubscription', { Frequency: 'DAILY', Subscribers: [{ Type: 'EMAIL', Address: 'ops@example.com' }] });
      expect(() => stackPropsFromContext(testApp({ budgetMonthlyUsd: '300' }).node)).toThrow(/need budgetEmail/);
    },
    SLOW,
  );
});

describe('5. versions, the live alias and canaries', () => {
  it(
    'points every Function URL at the live alias, and shifts each alias by CodeDeploy, rolling back on the error alarms',
    () => {
      const t = synthTemplate({});
      const urls = Object.values(resourcesOfType(t, 'AWS::Lambda::Url'));
      expect(urls).toHaveLength(3);
      for (const url of urls) expect(url.Properties?.Qualifier).toBeDefined();
      const aliases = Object.values(resourcesOfType(t, 'AWS::Lambda::Alias'));
      expect(aliases.map((a) => a.Properties?.Name)).toEqual(['live', 'live', 'live']);
      const groups = Object.values(resourcesOfType(t, 'AWS::CodeDeploy::DeploymentGroup'));
      expect(groups).toHaveLength(3);
      for (const g of groups) {
        expect(g.Properties?.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
        expect(g.Properties?.AutoRollbackConfiguration).toMatchObject({
          Enabled: true,
          Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']),
        });
      }
      // Each group rolls back on its own function's canary alarms only (canary alarms: monitoring.test.ts).
      const groupAlarms = groups.map((g) =>
        (g.Properties?.AlarmConfiguration as { Alarms: Array<{ Name: unknown }> }).Alarms.map((a) => JSON.stringify(a.Name)).sort(),
      );
      for (const alarms of groupAlarms) expect(alarms).toHaveLength(2);
      expect(new Set(groupAlarms.flat()).size).toBe(6);
      // Every alias carries CodeDeploy's update policy, so CloudFormation hands the shift to CodeDeploy.
      const raw = t.toJSON().Resources as Record<string, { Type: string; UpdatePolicy?: unknown }>;
      for (const a of Object.values(raw).filter((r) => r.Type === 'AWS::Lambda::Alias'))
        expect(JSON.stringify(a.UpdatePolicy)).toContain('CodeDeployLambdaAliasUpdate');
    },
    SLOW,
  );

  it(
    'takes another deployment configuration from context, and refuses an unknown one',
    () => {
      const groups = Object.values(
        resourcesOfType(synthTemplate({ deploymentConfig: 'LambdaLinear10PercentEvery1Minute' }), 'AWS::CodeDeploy::DeploymentGroup'),
      );
      expect(groups.map((g) => g.Properties?.DeploymentConfigName)).toEqual(Array(3).fill('CodeDeployDefault.LambdaLinear10PercentEvery1Minute'));
      expect(() => stackPropsFromContext(testApp({ deploymentConfig: 'YOLO' }).node)).toThrow(/context deploymentConfig must be one of/);
    },
    SLOW,
  );
});

describe('6. backups', () => {
  it(
    'backs up keys, accounts and ledger daily into a retained vault, with a copy to the context region',
    () => {
      const t = synthTemplate({ backupCopyRegion: 'eu-west-1' });
      const plan = Object.values(resourcesOfType(t, 'AWS::Backup::BackupPlan'))[0]!;
      const rule = (plan.Properties?.BackupPlan as { BackupPlanRule: Array<Record<string, unknown>> }).BackupPlanRule[0]!;
      expect(rule).toMatchObject({ ScheduleExpression: 'cron(0 3 * * ? *)', Lifecycle: { DeleteAfterDays: BACKUP_RETENTION_DAYS } });
      const copy = (rule.CopyActions as Array<{ DestinationBackupVaultArn: unknown; Lifecycle: unknown }>)[0]!;
      expect(JSON.stringify(copy.DestinationBackupVaultArn)).toContain(':backup:eu-west-1:');
      expect(JSON.stringify(copy.DestinationBackupVaultArn)).toContain('backup-vault:modelmux-backup-copy');
      const selection = Object.values(resourcesOfType(t, 'AWS::Backup::BackupSelection'))[0]!;
      const resources = JSON.stringify((selection.Properties?.BackupSelection as { Resources: unknown }).Resources);
      for (const name of ['DataKeys', 'DataAccounts', 'DataLedger']) expect(resources).toContain(name);
      expect(resources).not.toContain('DataResponses');
      const vault = Object.values(t.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>).find(
        (r) => r.Type === 'AWS::Backup::BackupVault',
      );
      expect(vault?.DeletionPolicy).toBe('Retain');
      expect(Object.keys(resourcesOfType(synthTemplate({ backup: 'false' }), 'AWS::Backup::BackupPlan'))).toEqual([]);
    },
    SLOW,
  );

  it(
    'makes a restore role only AWS Backup may assume, with its managed restore policy alone, and outputs it (none without backups)',
    () => {
      const t = synthTemplate({});
      const roleId = logicalIdByPath(t, 'AWS::IAM::Role', '/Backups/RestoreRole/');
      const role = resourcesOfType(t, 'AWS::IAM::Role')[roleId]!;
      expect(role.Properties?.AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'backup.amazonaws.com' } }],
      });
      expect(JSON.stringify(role.Properties?.ManagedPolicyArns)).toMatch(
        /^\[\{"Fn::Join":\["",\["arn:",\{"Ref":"AWS::Partition"\},":iam::aws:policy\/service-role\/AWSBackupServiceRolePolicyForRestores"\]\]\}\]$/,
      );
      expect(role.Properties?.Policies).toBeUndefined();
      const attached = Object.values(resourcesOfType(t, 'AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties?.Roles ?? []).includes(roleId));
      expect(attached).toEqual([]);
      expect(t.toJSON().Outputs.BackupRestoreRoleArn).toMatchObject({ Value: { 'Fn::GetAtt': [roleId, 'Arn'] } });
      expect(synthTemplate({ backup: 'false' }).toJSON().Outputs.BackupRestoreRoleArn).toBeUndefined();
    },
    SLOW,
  );

  it(
    "re-points the functions at restored tables from context (npm run restore writes it), dropping the stack's own",
    () => {
      const restored = { keys: 'old-keys-r1', accounts: 'old-accounts-r1', ledger: 'old-ledger-r1' };
      const t = synthTemplate({ restoredTables: JSON.stringify(restored) });
      const tables = Object.values(resourcesOfType(t, 'AWS::DynamoDB::Table'));
      expect(tables).toHaveLength(1); // responses only
      const env = (fnByPath({ restoredTables: JSON.stringify(restored) }, '/SettlePath/').Properties?.Environment as { Variables: Record<string, unknown> })
        .Variables;
      expect(env).toMatchObject({ KEYS_TABLE: 'old-keys-r1', ACCOUNTS_TABLE: 'old-accounts-r1', LEDGER_TABLE: 'old-ledger-r1' });
      expect(JSON.stringify(allIamStatements(t).map((s) => s.statement.Resource))).toContain('table/old-accounts-r1/index/pendingHolds');
      expect(() => stackPropsFromContext(testApp({ restoredTables: '{"responses":"x"}' }).node)).toThrow(/only keys, accounts and ledger/);
    },
    SLOW,
  );
});

describe('7. the Cognito app client', () => {
  it(
    'has no OAuth flows or callback URLs, only password and SRP sign-in, without a hosted domain',
    () => {
      const client = Object.values(resourcesOfType(synthTemplate({}), 'AWS::Cognito::UserPoolClient'))[0]!.Properties!;
      expect(client.AllowedOAuthFlows).toBeUndefined();
      expect(client.CallbackURLs).toBeUndefined();
      expect(client.AllowedOAuthFlowsUserPoolClient).not.toBe(true);
      expect(client.ExplicitAuthFlows).toEqual(expect.arrayContaining(['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_USER_SRP_AUTH']));
    },
    SLOW,
  );

  it(
    'gets the code flow to its own callback URLs with a hosted domain',
    () => {
      const t = synthTemplate({ cognitoDomainPrefix: 'modelmux-demo', oauthCallbackUrls: 'https://api.example.com/' });
      const client = Object.values(resourcesOfType(t, 'AWS::Cognito::UserPoolClient'))[0]!.Properties!;
      expect(client).toMatchObject({ AllowedOAuthFlows: ['code'], CallbackURLs: ['https://api.example.com/'] });
      t.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'modelmux-demo' });
      expect(() => stackPropsFromContext(testApp({ cognitoDomainPrefix: 'x' }).node)).toThrow(/go together/);
    },
    SLOW,
  );
});

describe('8. function settings from context', () => {
  it(
    'passes functionSettings to every function, validated by config/env.ts',
    () => {
      const context = { functionSettings: '{"RATE_LIMIT_RPM":"1200","HOLD_SWEEP_GRACE_MS":"60000"}' };
      for (const part of ['/Chat/', '/Embeddings/', '/Account/', '/SettlePath/']) {
        const env = (fnByPath(context, part).Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
        expect(env).toMatchObject({ RATE_LIMIT_RPM: '1200', HOLD_SWEEP_GRACE_MS: '60000' });
      }
      const err = (settings: string) => () => stackPropsFromContext(testApp({ functionSettings: settings }).node);
      expect(err('{"RATE_LIMIT_RPM":"lots"}')).toThrow(/context functionSettings is invalid: RATE_LIMIT_RPM must be a non-negative integer, got 'lots'/);
      expect(err('{"ACCOUNTS_TABLE":"x"}')).toThrow(/names ACCOUNTS_TABLE, which is set by the stack/);
      expect(err('{"RATE_LIMIT_RPMM":"5"}')).toThrow(/names RATE_LIMIT_RPMM, which is not a setting of config\/env.ts/);
    },
    SLOW,
  );
});

describe('9. IAM', () => {
  it(
    "scopes each function's log permissions to its own log group (no AWSLambdaBasicExecutionRole on our functions)",
    () => {
      const t = synthTemplate({});
      const roles = resourcesOfType(t, 'AWS::IAM::Role');
      for (const part of ['/Chat/', '/Embeddings/', '/Account/', '/SettlePath/']) {
        const fn = fnByPath({}, part);
        const roleId = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
        expect(JSON.stringify(roles[roleId]?.Properties?.ManagedPolicyArns ?? [])).not.toContain('AWSLambdaBasicExecutionRole');
        const logs = allIamStatements(t).filter(
          ({ owner, statement }) => owner.startsWith(roleId.replace(/Role.*$/, '')) && actionsOf(statement).some((a) => a.startsWith('logs:')),
        );
        expect(logs).toHaveLength(1);
        expect(actionsOf(logs[0]!.statement).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
        expect(JSON.stringify(logs[0]!.statement.Resource)).toMatch(/Logs[0-9A-F]+"?,"Arn"/);
      }
    },
    SLOW,
  );

  it(
    'gives the settle role ledger PutItem, GetItem and Query (an orphaned lease reconciled from its entries) only (no UpdateItem, no DeleteItem)',
    () => {
      const ledger = allIamStatements(synthTemplate({})).find(({ statement }) => statement.Sid === 'SettleLedgerTable')!.statement;
      expect(actionsOf(ledger).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query']);
    },
    SLOW,
  );

  it(
    'gives the BYOK key a policy naming the roles that use it; the account root administers but cannot decrypt',
    () => {
      const t = synthTemplate({});
      const key = Object.values(resourcesOfType(t, 'AWS::KMS::Key'))[0]!;
      const statements = (key.Properties?.KeyPolicy as { Statement: Array<{ Sid: string; Action: string | string[]; Principal: unknown }> }).Statement;
      const bySid = Object.fromEntries(statements.map((s) => [s.Sid, s]));
      expect(actionsOf(bySid.KeyAdministration as never)).not.toContain('kms:Decrypt');
      expect(actionsOf(bySid.KeyAdministration as never)).not.toContain('kms:*');
      const role = (part: string) => (fnByPath({}, part).Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(JSON.stringify(bySid.ByokDecrypt?.Principal)).toContain(role('/Chat/'));
      expect(JSON.stringify(bySid.ByokDecrypt?.Principal)).toContain(role('/Embeddings/'));
      expect(JSON.stringify(bySid.ByokGenerateDataKey?.Principal)).toContain(role('/Account/'));
      expect(JSON.stringify(bySid.ByokDecrypt?.Principal)).not.toContain(role('/Account/'));
    },
    SLOW,
  );
});

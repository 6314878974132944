import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_ENV, TABLE_SCHEMAS, type TableSchema } from '../../functions/shared/store/table-schemas';
import { ACCOUNT_PATH_PATTERNS } from '../../functions/shared/account-api/paths';
import { VIEWER_ADDRESS_HEADER } from '../../functions/shared/config/stack-contract';
import {
  API_PATH_PATTERN,
  EMBEDDINGS_PATH_PATTERN,
  GEMINI_API_PATH_PATTERNS,
  GEMINI_EMBED_PATH_PATTERNS,
  IMAGES_PATH_PATTERN,
} from '../../lib/constructs/api-distribution';
import { BYOK_CONTEXT_PURPOSE } from '../../lib/constructs/byok-key';
import { ACCOUNT_TABLE_ACTIONS, GATEWAY_TABLE_ACTIONS, RESPONSES_TABLE_ACTIONS } from '../../lib/constructs/data-tables';
import { DASHBOARD_CLIENT_SETTINGS, USER_POOL_SETTINGS } from '../../lib/constructs/identity-settings';
import { CHAT_DEFAULT_MEMORY_MB } from '../../lib/constructs/chat-endpoint';
import { LIVE_ALIAS } from '../../lib/constructs/gateway-function';
import { EMBEDDINGS_DEFAULT_MEMORY_MB } from '../../lib/constructs/embeddings-endpoint';
import {
  actionsOf,
  assetDirOf,
  allIamStatements,
  type CfnResource,
  type IamStatement,
  logicalIdByPath,
  resourcesOfStatement,
  resourcesOfType,
} from './template-helpers';
import { synthStack } from './support/synth';

/**
 * The default stack (cdk.json context: CloudFront on, secret created), synthesised ONCE with real local
 * esbuild bundling of both handlers; every assertion below reads that one template and assembly.
 */

// CloudFront managed policy ids (CloudFront docs, "Use managed cache policies" / "…origin request policies").
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

let template: Template;
let assemblyDir: string;
let ids: {
  chatFn: string;
  embeddingsFn: string;
  accountFn: string;
  chatUrl: string;
  embeddingsUrl: string;
  accountUrl: string;
  userPool: string;
  userPoolClient: string;
  byokKey: string;
  secret: string;
  originSecret: string;
  stripeSecret: string;
  tables: Record<TableSchema['logicalName'], string>;
};

beforeAll(() => {
  ({ template, assemblyDir } = synthStack());
  ids = {
    chatFn: logicalIdByPath(template, 'AWS::Lambda::Function', '/Chat/'),
    embeddingsFn: logicalIdByPath(template, 'AWS::Lambda::Function', '/Embeddings/'),
    accountFn: logicalIdByPath(template, 'AWS::Lambda::Function', '/Account/'),
    chatUrl: logicalIdByPath(template, 'AWS::Lambda::Url', '/Chat/'),
    embeddingsUrl: logicalIdByPath(template, 'AWS::Lambda::Url', '/Embeddings/'),
    accountUrl: logicalIdByPath(template, 'AWS::Lambda::Url', '/Account/'),
    userPool: logicalIdByPath(template, 'AWS::Cognito::UserPool', '/Identity/'),
    userPoolClient: logicalIdByPath(template, 'AWS::Cognito::UserPoolClient', '/Identity/'),
    byokKey: logicalIdByPath(template, 'AWS::KMS::Key', '/Byok/'),
    secret: logicalIdByPath(template, 'AWS::SecretsManager::Secret', '/UpstreamKeys/'),
    originSecret: logicalIdByPath(template, 'AWS::SecretsManager::Secret', '/OriginSecret/'),
    stripeSecret: logicalIdByPath(template, 'AWS::SecretsManager::Secret', '/Stripe/'),
    tables: {
      keys: logicalIdByPath(template, 'AWS::DynamoDB::Table', '/Data/Keys/'),
      accounts: logicalIdByPath(template, 'AWS::DynamoDB::Table', '/Data/Accounts/'),
      ledger: logicalIdByPath(template, 'AWS::DynamoDB::Table', '/Data/Ledger/'),
      responses: logicalIdByPath(template, 'AWS::DynamoDB::Table', '/Data/Responses/'),
    },
  };
}, 120_000);

function fnProps(logicalId: string): Record<string, unknown> {
  const resource = resourcesOfType(template, 'AWS::Lambda::Function')[logicalId];
  if (resource === undefined) throw new Error(`no function ${logicalId}`);
  return resource.Properties ?? {};
}

function envOf(logicalId: string): Record<string, unknown> {
  return (fnProps(logicalId).Environment as { Variables: Record<string, unknown> }).Variables;
}

/** Statements of the identity policies attached to the role of a function. */
function roleStatementsOf(fnLogicalId: string): IamStatement[] {
  const roleId = (fnProps(fnLogicalId).Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  const statements: IamStatement[] = [];
  for (const policy of Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))) {
    const roles = (policy.Properties?.Roles as Array<{ Ref: string }> | undefined) ?? [];
    if (roles.some((role) => role.Ref === roleId)) {
      statements.push(...(policy.Properties?.PolicyDocument as { Statement: IamStatement[] }).Statement);
    }
  }
  return statements;
}

const getAttArn = (logicalId: string): unknown => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** What a function may do in its log group (LogGroup.grantWrite; the group exists, so no CreateLogGroup). */
const LOG_WRITE_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

/** The logical id of the log group a function logs to (its LoggingConfig). */
function logGroupOf(fnLogicalId: string): string {
  const logGroup = (fnProps(fnLogicalId).LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref;
  if (logGroup === undefined || resourcesOfType(template, 'AWS::Logs::LogGroup')[logGroup] === undefined) throw new Error(`no log group of ${fnLogicalId}`);
  return logGroup;
}

/** The logical id of the one `live` alias of a function. */
function liveAliasOf(fnLogicalId: string): string {
  const aliases = Object.entries(resourcesOfType(template, 'AWS::Lambda::Alias')).filter(
    ([, alias]) => JSON.stringify(alias.Properties?.FunctionName) === JSON.stringify({ Ref: fnLogicalId }),
  );
  expect(aliases.map(([, alias]) => alias.Properties?.Name)).toEqual([LIVE_ALIAS]);
  return aliases[0]![0];
}

describe('Function URLs', () => {
  it('serves chat through a public streaming URL, embeddings and the account API through public buffered URLs', () => {
    template.resourceCountIs('AWS::Lambda::Url', 3);
    template.hasResourceProperties('AWS::Lambda::Url', { TargetFunctionArn: getAttArn(ids.accountFn), AuthType: 'NONE', InvokeMode: 'BUFFERED' });
    template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: getAttArn(ids.chatFn),
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
    });
    template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: getAttArn(ids.embeddingsFn),
      AuthType: 'NONE',
      InvokeMode: 'BUFFERED',
    });
  });

  it('allows CORS POST/GET from any origin with the headers the OpenAI SDKs send, listed (no wildcard)', () => {
    for (const url of [ids.chatUrl, ids.embeddingsUrl]) {
      const cors = resourcesOfType(template, 'AWS::Lambda::Url')[url]?.Properties?.Cors;
      expect(cors).toMatchObject({ AllowOrigins: ['*'], AllowMethods: ['POST', 'GET'] });
      const allowHeaders = (cors as { AllowHeaders?: string[] } | undefined)?.AllowHeaders;
      expect(allowHeaders).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'x-stainless-retry-count', 'x-stainless-timeout', 'x-stainless-helper-method']),
      );
      expect(allowHeaders).not.toContain('*');
    }
  });

  it("grants principal * both InvokeFunctionUrl (auth NONE) and InvokeFunction (only via the URL) on each function's live alias, which its URL serves", () => {
    const permissions = Object.values(resourcesOfType(template, 'AWS::Lambda::Permission')).map((p) => p.Properties ?? {});
    const urls = resourcesOfType(template, 'AWS::Lambda::Url');
    for (const [fn, url] of [
      [ids.chatFn, ids.chatUrl],
      [ids.embeddingsFn, ids.embeddingsUrl],
      [ids.accountFn, ids.accountUrl],
    ] as const) {
      // The URL serves the `live` alias (CodeDeploy shifts it), so the public permissions are the alias's.
      const alias = liveAliasOf(fn);
      expect(urls[url]?.Properties).toMatchObject({ TargetFunctionArn: getAttArn(fn), Qualifier: LIVE_ALIAS });
      const onAlias = permissions.filter((p) => JSON.stringify(p.FunctionName) === JSON.stringify({ Ref: alias }));
      // Exactly these two, in either order.
      expect(onAlias).toHaveLength(2);
      expect(onAlias).toEqual(
        expect.arrayContaining([
          { Action: 'lambda:InvokeFunctionUrl', FunctionName: { Ref: alias }, Principal: '*', FunctionUrlAuthType: 'NONE' },
          { Action: 'lambda:InvokeFunction', FunctionName: { Ref: alias }, Principal: '*', InvokedViaFunctionUrl: true },
        ]),
      );
      // Nothing public on the function itself (its $LATEST or any version outside the alias).
      const onFunction = permissions.filter((p) => [JSON.stringify(getAttArn(fn)), JSON.stringify({ Ref: fn })].includes(JSON.stringify(p.FunctionName)));
      expect(onFunction).toEqual([]);
    }
    // Every `*` permission in the stack is scoped to Function URL invocations.
    for (const permission of permissions.filter((p) => p.Principal === '*')) {
      expect(permission.FunctionUrlAuthType === 'NONE' || permission.InvokedViaFunctionUrl === true).toBe(true);
    }
  });
});

describe('DynamoDB tables', () => {
  const tableIds = (): string[] => Object.values(ids.tables);

  it('creates exactly the four tables of TABLE_SCHEMAS, on demand, encrypted with the AWS-managed key, PITR on all but responses', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', TABLE_SCHEMAS.length);
    expect(TABLE_SCHEMAS).toHaveLength(4);
    for (const [name, id] of Object.entries(ids.tables)) {
      expect(resourcesOfType(template, 'AWS::DynamoDB::Table')[id]?.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        // Stored responses end at their TTL or DELETE: no restore points keep them 35 days longer.
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: name !== 'responses' },
        SSESpecification: { SSEEnabled: true },
      });
    }
  });

  it("expires stored responses with DynamoDB TTL on expiresAt, the accounts table's sign-up counters on deleteAfterEpochSeconds, and nothing else", () => {
    const expected: Record<string, unknown> = {
      responses: { AttributeName: 'expiresAt', Enabled: true },
      accounts: { AttributeName: 'deleteAfterEpochSeconds', Enabled: true },
    };
    for (const [name, id] of Object.entries(ids.tables)) {
      const ttl = resourcesOfType(template, 'AWS::DynamoDB::Table')[id]?.Properties?.TimeToLiveSpecification;
      expect(ttl, name).toEqual(expected[name]);
    }
  });

  it('builds each key schema and GSI from table-schemas.ts, with no hard-coded table name', () => {
    for (const schema of TABLE_SCHEMAS) {
      const props = resourcesOfType(template, 'AWS::DynamoDB::Table')[ids.tables[schema.logicalName]]?.Properties ?? {};
      const keySchema = [
        { AttributeName: schema.partitionKey.name, KeyType: 'HASH' },
        ...(schema.sortKey ? [{ AttributeName: schema.sortKey.name, KeyType: 'RANGE' }] : []),
      ];
      expect(props.KeySchema).toEqual(keySchema);
      expect(props.TableName).toBeUndefined();
      const attributes = [schema.partitionKey, schema.sortKey, ...(schema.globalSecondaryIndexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey])]
        .filter((a) => a !== undefined)
        .map((a) => ({ AttributeName: a.name, AttributeType: a.type }));
      expect(props.AttributeDefinitions).toEqual(expect.arrayContaining(attributes));
      const gsis = (props.GlobalSecondaryIndexes as Array<{ IndexName: string; KeySchema: unknown }> | undefined) ?? [];
      expect(gsis.map((g) => g.IndexName)).toEqual((schema.globalSecondaryIndexes ?? []).map((g) => g.indexName));
      for (const index of schema.globalSecondaryIndexes ?? []) {
        expect(gsis.find((g) => g.IndexName === index.indexName)?.KeySchema).toEqual([
          { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
          ...(index.sortKey ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' }] : []),
        ]);
      }
    }
    expect(template.toJSON()).toMatchObject({ Resources: { [ids.tables.keys]: { Properties: { GlobalSecondaryIndexes: [{ IndexName: 'byAccount' }] } } } });
  });

  it('retains all four tables (accounts and ledger hold money) and protects them from deletion', () => {
    for (const id of tableIds()) {
      const table = resourcesOfType(template, 'AWS::DynamoDB::Table')[id] as CfnResource;
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
      expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
    }
  });
});

describe('the durable settle path', () => {
  it('has an encrypted settle queue with a dead-letter queue after 480 receives (24 h), a settle function on it with partial batch failures, and a sweep every 5 minutes', () => {
    const queue = logicalIdByPath(template, 'AWS::SQS::Queue', '/SettlePath/Queue/');
    const dlq = logicalIdByPath(template, 'AWS::SQS::Queue', '/SettlePath/DeadLetters/');
    expect(resourcesOfType(template, 'AWS::SQS::Queue')[queue]?.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 180,
      RedrivePolicy: { deadLetterTargetArn: getAttArn(dlq), maxReceiveCount: 480 },
    });
    expect(resourcesOfType(template, 'AWS::SQS::Queue')[dlq]?.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    const settleFn = logicalIdByPath(template, 'AWS::Lambda::Function', '/SettlePath/Settle/');
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: settleFn },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    expect(envOf(ids.chatFn).SETTLE_QUEUE_URL).toEqual({ Ref: queue });
    expect(envOf(ids.embeddingsFn).SETTLE_QUEUE_URL).toEqual({ Ref: queue });
    // The settle function: settle (ledger Put + account Update) and cancel (account Update; ledger Get
    // of a hold settled before) holds, find them through the accounts table's pendingHolds index (Query)
    // and BatchGetItem of the marked items (no Scan), an orphan's key hash through the keys table's
    // byAccount index, an orphaned lease's spend by a Query of the ledger, read the account after a
    // queued bill (the balance watch) and for an account email (GetItem), read the queue depths, and
    // queue the balance watch's follow-up (SendMessage on the settle queue alone).
    const actions = roleStatementsOf(settleFn).flatMap((st) => actionsOf(st));
    expect(actions).toEqual(
      expect.arrayContaining([
        'dynamodb:UpdateItem',
        'dynamodb:PutItem',
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
      ]),
    );
    expect(actions).not.toContain('dynamodb:Scan');
    // Every resource an action is granted on, over all of the role's statements (empty when none grants
    // it, so each line below fails when the grant is missing as well as when it is too wide).
    const grantedOn = (action: string) =>
      [
        ...new Set(
          roleStatementsOf(settleFn)
            .filter((st) => actionsOf(st).includes(action))
            .flatMap((st) => resourcesOfStatement(st).map((r) => JSON.stringify(r))),
        ),
      ].map((r) => JSON.parse(r) as unknown);
    expect(grantedOn('dynamodb:DeleteItem')).toEqual([]);
    expect(grantedOn('sqs:SendMessage')).toEqual([getAttArn(queue)]);
    expect(grantedOn('dynamodb:UpdateItem')).toEqual([getAttArn(ids.tables.accounts)]);
    expect(grantedOn('dynamodb:BatchGetItem')).toEqual([getAttArn(ids.tables.accounts)]);
    expect(grantedOn('dynamodb:PutItem')).toEqual([getAttArn(ids.tables.ledger)]);
    expect(grantedOn('dynamodb:GetItem')).toEqual([getAttArn(ids.tables.accounts), getAttArn(ids.tables.ledger)]);
    expect(grantedOn('dynamodb:Query')).toContainEqual(getAttArn(ids.tables.ledger));
    expect(grantedOn('dynamodb:Query')).not.toContainEqual(getAttArn(ids.tables.accounts));
    expect(grantedOn('dynamodb:Query')).not.toContainEqual(getAttArn(ids.tables.keys));
  });
});

describe('IAM least privilege', () => {
  it('has no wildcard action in any IAM statement or Lambda permission', () => {
    const statements = allIamStatements(template);
    expect(statements.length).toBeGreaterThan(0);
    for (const { owner, statement } of statements) {
      // CDK's own BucketDeployment handler (the dashboard upload) is granted CDK's action families; it is
      // scoped to the site and asset buckets in test/lib/site.test.ts.
      if (owner.startsWith('CustomCDKBucketDeployment')) continue;
      for (const action of actionsOf(statement)) expect(action, `${owner} ${statement.Sid ?? ''}`).not.toContain('*');
    }
    for (const permission of Object.values(resourcesOfType(template, 'AWS::Lambda::Permission'))) {
      expect(String(permission.Properties?.Action)).not.toContain('*');
    }
  });

  it('scopes every DynamoDB statement to a specific table (or GSI) ARN', () => {
    const tableArns = Object.values(ids.tables).map((id) => JSON.stringify(getAttArn(id)));
    const dynamoStatements = allIamStatements(template).filter(({ statement }) => actionsOf(statement).some((a) => a.startsWith('dynamodb:')));
    expect(dynamoStatements.length).toBeGreaterThan(0);
    for (const { statement } of dynamoStatements) {
      for (const resource of resourcesOfStatement(statement)) {
        const text = JSON.stringify(resource);
        const isTable = tableArns.includes(text);
        const isIndex = Object.values(ids.tables).some((id) => text.includes(id) && text.includes('/index/'));
        expect(isTable || isIndex, text).toBe(true);
      }
    }
  });

  it('grants each function exactly the request-path table actions, GetSecretValue on the upstream and origin secrets, SendMessage and GetQueueAttributes on the settle queue and log writes to its own log group', () => {
    const settleQueue = logicalIdByPath(template, 'AWS::SQS::Queue', '/SettlePath/Queue/');
    const expected = new Map<string, string[]>([
      ...Object.entries(GATEWAY_TABLE_ACTIONS).map(([name, actions]): [string, string[]] => [
        JSON.stringify(getAttArn(ids.tables[name as keyof typeof ids.tables])),
        [...actions].sort(),
      ]),
      [JSON.stringify({ Ref: ids.secret }), ['secretsmanager:GetSecretValue']],
      [JSON.stringify(getAttArn(ids.byokKey)), ['kms:Decrypt']],
      [JSON.stringify({ Ref: ids.originSecret }), ['secretsmanager:GetSecretValue']],
      // The queue's depth: a stranded lease is reclaimed at the next request only while it is empty.
      [JSON.stringify(getAttArn(settleQueue)), ['sqs:GetQueueAttributes', 'sqs:SendMessage']],
    ]);
    // Stored responses: the chat function alone serves /v1/responses.
    const chatExpected = new Map([...expected, [JSON.stringify(getAttArn(ids.tables.responses)), [...RESPONSES_TABLE_ACTIONS].sort()]]);
    for (const [fn, common] of [
      [ids.chatFn, chatExpected],
      [ids.embeddingsFn, expected],
    ] as const) {
      // Logs: write to its own log group only (its own role, no AWSLambdaBasicExecutionRole).
      const want = new Map([...common, [JSON.stringify(getAttArn(logGroupOf(fn))), [...LOG_WRITE_ACTIONS]]]);
      const granted = new Map<string, string[]>();
      for (const statement of roleStatementsOf(fn)) {
        expect(statement.Effect).toBe('Allow');
        for (const resource of resourcesOfStatement(statement)) {
          const key = JSON.stringify(resource);
          granted.set(key, [...(granted.get(key) ?? []), ...actionsOf(statement)].sort());
        }
      }
      expect(granted).toEqual(want);
    }
    expect(RESPONSES_TABLE_ACTIONS).toEqual(['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem']);
    expect(GATEWAY_TABLE_ACTIONS).toEqual({
      keys: ['dynamodb:GetItem', 'dynamodb:ConditionCheckItem'],
      accounts: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      ledger: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:Query'],
    });
  });

  it('attaches no managed policy to our function roles (logs: their own log group only); only AWS service roles carry their service policy', () => {
    const managed = Object.values(resourcesOfType(template, 'AWS::IAM::Role')).map((role) => JSON.stringify(role.Properties?.ManagedPolicyArns ?? []));
    for (const fn of [ids.chatFn, ids.embeddingsFn, ids.accountFn]) {
      const roleId = (fnProps(fn).Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(resourcesOfType(template, 'AWS::IAM::Role')[roleId]?.Properties?.ManagedPolicyArns).toBeUndefined();
    }
    for (const arns of managed.filter((m) => m !== '[]')) {
      // CDK's dashboard-upload handler (basic execution), CodeDeploy's and AWS Backup's service roles (backup and restore).
      expect(arns).toMatch(
        /service-role\/(AWSLambdaBasicExecutionRole|AWSCodeDeployRoleForLambdaLimited|AWSBackupServiceRolePolicyForBackup|AWSBackupServiceRolePolicyForRestores)"\]\]\}\]$/,
      );
    }
  });
});

describe('functions', () => {
  it('run Node.js 22 or newer on arm64 with their right-sized default memory, 300 s for chat and 60 s for the buffered function (embeddings, images)', () => {
    for (const [fn, timeout, memory] of [
      [ids.chatFn, 300, CHAT_DEFAULT_MEMORY_MB],
      [ids.embeddingsFn, 60, EMBEDDINGS_DEFAULT_MEMORY_MB],
    ] as const) {
      const props = fnProps(fn);
      const runtime = String(props.Runtime);
      expect(runtime).toMatch(/^nodejs\d+\.x$/);
      expect(Number(/^nodejs(\d+)/.exec(runtime)?.[1])).toBeGreaterThanOrEqual(22);
      expect(props).toMatchObject({ Architectures: ['arm64'], MemorySize: memory, Timeout: timeout, Handler: 'index.handler' });
      expect(props.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  it('get table names, the secret ARN and Powertools settings in env, and never an API key', () => {
    for (const fn of [ids.chatFn, ids.embeddingsFn]) {
      const env = envOf(fn);
      expect(env).toMatchObject({
        [TABLE_ENV.keys]: { Ref: ids.tables.keys },
        [TABLE_ENV.accounts]: { Ref: ids.tables.accounts },
        [TABLE_ENV.ledger]: { Ref: ids.tables.ledger },
        UPSTREAM_SECRET_ARN: { Ref: ids.secret },
        ORIGIN_SECRET_ARN: { Ref: ids.originSecret },
        // The stack's name: logs and metrics of two stacks never mix.
        POWERTOOLS_SERVICE_NAME: 'Modelmux',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      });
      // Source maps ship beside the bundle but are not loaded at cold start (gateway-function.ts).
      expect(env.NODE_OPTIONS).toBeUndefined();
      expect(Object.keys(env).filter((name) => /_API_KEY$/.test(name))).toEqual([]);
      // Tracing is off by default: no X-Ray, and nothing tells the code to load the tracer.
      expect(env.POWERTOOLS_TRACE_ENABLED).toBeUndefined();
      expect(fnProps(fn).TracingConfig).toBeUndefined();
    }
    // Behind CloudFront (60 s origin read timeout) a buffered chat answer must be out within 55 s.
    expect(envOf(ids.chatFn).BUFFERED_CHAT_BUDGET_MS).toBe('55000');
  });

  it('log to their own log groups kept for one month, and retained after stack deletion (they hold the settle lines)', () => {
    for (const fn of [ids.chatFn, ids.embeddingsFn]) {
      const logGroupId = (fnProps(fn).LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      const logGroup = resourcesOfType(template, 'AWS::Logs::LogGroup')[logGroupId] as CfnResource;
      expect(logGroup.Properties?.RetentionInDays).toBe(30);
      expect(logGroup.DeletionPolicy).toBe('Retain');
    }
  });

  it('ship no tracer file without tracing (nothing of the X-Ray SDK in or beside the bundle)', () => {
    for (const fn of [ids.chatFn, ids.embeddingsFn]) {
      const assetDir = assetDirOf(template, assemblyDir, fn);
      expect(existsSync(join(assetDir, 'tracer.mjs'))).toBe(false);
      const meta = JSON.parse(readFileSync(join(assetDir, 'index.meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
      expect(Object.keys(meta.inputs).filter((f) => /aws-xray-sdk|powertools\/tracer/.test(f))).toEqual([]);
    }
  });

  it('carry the shutdown extension on chat and embeddings only: one layer of its own, an executable extensions/modelmux-shutdown registering for SHUTDOWN', () => {
    // The site's BucketDeployment brings CDK's own AWS CLI layers; ours is the stack's ShutdownExtension.
    const layerId = logicalIdByPath(template, 'AWS::Lambda::LayerVersion', 'Modelmux/ShutdownExtension/');
    const layer = resourcesOfType(template, 'AWS::Lambda::LayerVersion')[layerId]!;
    expect(layer.Properties).toMatchObject({ CompatibleArchitectures: ['arm64'], CompatibleRuntimes: ['nodejs24.x'] });
    const fns = resourcesOfType(template, 'AWS::Lambda::Function');
    for (const fn of [ids.chatFn, ids.embeddingsFn]) expect(fns[fn]?.Properties?.Layers).toEqual([{ Ref: layerId }]);
    for (const fn of [ids.accountFn, logicalIdByPath(template, 'AWS::Lambda::Function', '/SettlePath/Settle')])
      expect(fns[fn]?.Properties?.Layers).toBeUndefined();
    const s3Key = String((layer.Properties?.Content as { S3Key: string }).S3Key);
    const file = join(assemblyDir, `asset.${s3Key.replace(/\.zip$/, '')}`, 'extensions', 'modelmux-shutdown');
    expect(statSync(file).mode & 0o111).toBe(0o111);
    expect(readFileSync(file, 'utf8')).toMatch(/^#!\/bin\/bash\n[\s\S]*"events":\["SHUTDOWN"\]/);
  });

  it('ship a real local esbuild bundle: ESM with the createRequire banner, source map and metafile', () => {
    for (const [fn, entry] of [
      [ids.chatFn, 'functions/chat-completions/handler.ts'],
      [ids.embeddingsFn, 'functions/embeddings/handler.ts'],
    ] as const) {
      const assetDir = assetDirOf(template, assemblyDir, fn);
      const code = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire as __modelmuxCreateRequire } from 'node:module';")).toBe(true);
      expect(code).toMatch(/\/\/# sourceMappingURL=index\.mjs\.map\s*$/);
      expect(existsSync(join(assetDir, 'index.mjs.map'))).toBe(true);
      const meta = JSON.parse(readFileSync(join(assetDir, 'index.meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
      expect(Object.keys(meta.inputs)).toContain(entry);
    }
  });

  it('keep the provider adapters out of the account bundle: BYOK asks the manifest, not the registry', () => {
    const meta = JSON.parse(readFileSync(join(assetDirOf(template, assemblyDir, ids.accountFn), 'index.meta.json'), 'utf8')) as {
      inputs: Record<string, unknown>;
    };
    expect(Object.keys(meta.inputs).filter((f) => f.startsWith('functions/shared/providers/'))).toEqual(['functions/shared/providers/manifest.ts']);
  });
});

/**
 * The chat bundle's budget, bytes of `index.mjs` (what every cold start reads and compiles). The
 * goal is 300 KB (docs/dynamodb-client.md); with no AWS SDK client left in it (docs/dynamodb-client.md, "Bundle") it is ~375 KB,
 * of which our own code is ~260 KB: the budget holds what is there, so growth fails here. The December
 * 2026 catalogue (22 more models) and its price rules (catalogue/price-data.ts) took it to ~393.5 KB,
 * the Gemini API surface (gemini-api/, ~6 KB minified, and its route) to ~402 KB, OpenRouter's request
 * fields, cache breakpoints everywhere and JSON wrong-path errors to ~406.3 KB, the Gemini API's model
 * list and embeddings routes (app/gemini-models.ts, app/gemini-embed.ts, gemini-api/embed.ts: both
 * functions dispatch every route) to ~411 KB, reclaiming stranded leases at the next request
 * (billing/lease-reclaim.ts, and the ledger sum and queue depth it reads, ~2.9 KB) to ~414 KB, the
 * callers' end user and session (messages/metadata-user.ts, sticky keys), Gemini 3's signature sentinel
 * and the Gemini surface's document parts to ~417.6 KB.
 */
const CHAT_BUNDLE_BUDGET_BYTES = 420_000;

/**
 * Modules of an AWS SDK client in a bundle's esbuild metafile. Allowed: the DynamoDB exception classes
 * (`instanceof ConditionalCheckFailedException`, ~2 KB), util-dynamodb's marshalling and the SigV4
 * signer with the SDK's retry classification (aws/aws-json.ts).
 */
const SDK_CLIENT_MODULE =
  /@aws-sdk\/(lib-dynamodb|client-[a-z-]+)\/dist-es\/(?!models\/(errors|DynamoDBServiceException)\.js$)|@aws-sdk\/core\/|@smithy\/(node-http-handler|core\/dist-es\/submodules\/(protocols\/(?!util-uri-escape)|schema\/|endpoints\/))/;

describe("the request functions' bundles", () => {
  it('carry no AWS SDK client: DynamoDB and Secrets Manager go over their JSON protocols (store/dynamo-commands.ts, aws/aws-json.ts)', () => {
    for (const fn of [ids.chatFn, ids.embeddingsFn]) {
      // What is in index.mjs (the metafile's `inputs` lists every module parsed, tree-shaken ones too).
      const meta = JSON.parse(readFileSync(join(assetDirOf(template, assemblyDir, fn), 'index.meta.json'), 'utf8')) as {
        outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
      };
      const output = Object.entries(meta.outputs).find(([file]) => file.endsWith('index.mjs'))?.[1];
      const inputs = Object.entries(output?.inputs ?? {})
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([file]) => file);
      expect(inputs).toContain('functions/shared/aws/aws-json.ts');
      expect(inputs.filter((f) => SDK_CLIENT_MODULE.test(f))).toEqual([]);
    }
  });

  it(`keep the chat bundle within ${CHAT_BUNDLE_BUDGET_BYTES / 1000} KB`, () => {
    expect(statSync(join(assetDirOf(template, assemblyDir, ids.chatFn), 'index.mjs')).size).toBeLessThanOrEqual(CHAT_BUNDLE_BUDGET_BYTES);
  });
});

describe('upstream keys secret', () => {
  it('is created as <stack name>/upstream-keys holding {}, and retained', () => {
    const secret = resourcesOfType(template, 'AWS::SecretsManager::Secret')[ids.secret] as CfnResource;
    expect(secret.Properties).toMatchObject({ Name: 'Modelmux/upstream-keys', SecretString: '{}' });
    expect(secret.Properties?.GenerateSecretString).toBeUndefined();
    expect(secret.DeletionPolicy).toBe('Retain');
  });
});

describe('origin secret (one door)', () => {
  it('is generated per stack as {"current": 48 characters}, with no fixed name', () => {
    const secret = resourcesOfType(template, 'AWS::SecretsManager::Secret')[ids.originSecret] as CfnResource;
    expect(secret.Properties?.GenerateSecretString).toMatchObject({
      SecretStringTemplate: '{}',
      GenerateStringKey: 'current',
      PasswordLength: 48,
      ExcludePunctuation: true,
    });
    expect(secret.Properties?.SecretString).toBeUndefined();
    expect(secret.Properties?.Name).toBeUndefined();
  });

  it('is sent by CloudFront to every function origin as x-origin-verify, through a dynamic reference (never the value)', () => {
    const config = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as {
      Origins: Array<{ OriginCustomHeaders?: Array<{ HeaderName: string; HeaderValue: unknown }>; S3OriginConfig?: unknown }>;
    };
    // The dashboard's bucket is the fourth origin, read through origin access control (site.test.ts).
    const functionOrigins = config.Origins.filter((o) => o.S3OriginConfig === undefined);
    expect(functionOrigins).toHaveLength(3); // chat, embeddings, account (one origin for all its paths)
    expect(config.Origins).toHaveLength(4);
    for (const origin of functionOrigins) {
      expect(origin.OriginCustomHeaders).toEqual([
        {
          HeaderName: 'x-origin-verify',
          HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: ids.originSecret }, ':SecretString:current::}}']] },
        },
      ]);
    }
  });
});

describe('CloudFront (one base URL)', () => {
  it("routes /v1/embeddings*, /v1/images/* and the Gemini API's embed methods to the buffered (embeddings) URL, the account paths to the account URL and the Gemini API's other paths and /v1/* to the chat URL, uncached, all headers but Host; the rest to the dashboard", () => {
    template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    const config = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as {
      DefaultCacheBehavior: Record<string, unknown>;
      CacheBehaviors: Array<Record<string, unknown>>;
      Origins: Array<{ Id: string; DomainName: unknown; CustomOriginConfig?: Record<string, unknown> }>;
    };
    const originFor = (originId: unknown): string => JSON.stringify(config.Origins.find((o) => o.Id === originId)?.DomainName);
    // The default behaviour is the dashboard's bucket (test/lib/site.test.ts checks it).
    expect(originFor(config.DefaultCacheBehavior.TargetOriginId)).toContain('SiteBucket');
    const buffered = [EMBEDDINGS_PATH_PATTERN, IMAGES_PATH_PATTERN, ...GEMINI_EMBED_PATH_PATTERNS];
    const chat = [...GEMINI_API_PATH_PATTERNS, API_PATH_PATTERN];
    expect(config.CacheBehaviors).toHaveLength(buffered.length + ACCOUNT_PATH_PATTERNS.length + chat.length);
    // CloudFront takes the first match: `/v1beta/models/{m}:embedContent` meets `*:embedContent` before `/v1beta/*`.
    expect(config.CacheBehaviors.slice(0, buffered.length).map((b) => b.PathPattern)).toEqual(buffered);
    for (const b of config.CacheBehaviors.slice(0, buffered.length)) expect(originFor(b.TargetOriginId)).toContain(ids.embeddingsUrl);
    // The account API's paths (DATA-MODEL §7) go to the account function; the chat paths, /v1/* last, come after.
    const account = config.CacheBehaviors.slice(buffered.length, buffered.length + ACCOUNT_PATH_PATTERNS.length);
    expect(account.map((b) => b.PathPattern)).toEqual([...ACCOUNT_PATH_PATTERNS]);
    for (const b of account) expect(originFor(b.TargetOriginId)).toContain(ids.accountUrl);
    const chatBehaviours = config.CacheBehaviors.slice(-chat.length);
    expect(chatBehaviours.map((b) => b.PathPattern)).toEqual(chat);
    for (const b of chatBehaviours) expect(originFor(b.TargetOriginId)).toContain(ids.chatUrl);
    for (const behaviour of config.CacheBehaviors) {
      expect(behaviour).toMatchObject({
        CachePolicyId: CACHING_DISABLED,
        OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        ViewerProtocolPolicy: 'https-only',
        Compress: false,
        AllowedMethods: expect.arrayContaining(['GET', 'POST', 'OPTIONS']),
      });
    }
    for (const origin of config.Origins.filter((o) => o.CustomOriginConfig))
      expect(origin.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginReadTimeout: 60 });
  });

  it("the account paths, and only they, run a viewer-request function that sets x-viewer-address to the viewer's IP, replacing the client's", () => {
    const functions = resourcesOfType(template, 'AWS::CloudFront::Function');
    expect(Object.keys(functions)).toHaveLength(1);
    const [functionId, fn] = Object.entries(functions)[0] as [string, CfnResource];
    expect(fn.Properties).toMatchObject({ AutoPublish: true, FunctionConfig: { Runtime: 'cloudfront-js-2.0' } });
    const config = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as {
      CacheBehaviors: Array<{ PathPattern: string; FunctionAssociations?: unknown }>;
    };
    for (const b of config.CacheBehaviors) {
      const expected = (ACCOUNT_PATH_PATTERNS as readonly string[]).includes(b.PathPattern)
        ? [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [functionId, 'FunctionARN'] } }]
        : undefined;
      expect(b.FunctionAssociations, b.PathPattern).toEqual(expected);
    }
    // The function's code, run as CloudFront would (its handler on a viewer-request event).
    const handler = new Function(`${String(fn.Properties?.FunctionCode)}\nreturn handler;`)() as (event: unknown) => { headers: Record<string, unknown> };
    const out = handler({
      viewer: { ip: '2001:db8::7' },
      request: { method: 'GET', uri: '/v1/account', headers: { [VIEWER_ADDRESS_HEADER]: { value: '198.51.100.1' } } },
    });
    expect(out.headers[VIEWER_ADDRESS_HEADER]).toEqual({ value: '2001:db8::7' });
  });

  it('writes access logs to a private, encrypted, TLS-only bucket whose files expire after 90 days', () => {
    const config = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as Record<string, unknown>;
    const bucketId = logicalIdByPath(template, 'AWS::S3::Bucket', '/AccessLogs/');
    expect(config.Logging).toEqual({ Bucket: { 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] }, Prefix: 'cloudfront/' });
    const bucket = resourcesOfType(template, 'AWS::S3::Bucket')[bucketId] as CfnResource;
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 90, Status: 'Enabled' })] },
    });
    const policy = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).find(
      (p) => JSON.stringify(p.Properties?.Bucket) === JSON.stringify({ Ref: bucketId }),
    );
    expect(JSON.stringify(policy?.Properties?.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it('has no custom domain by default, and a WAF web ACL created and attached only where it can be (us-east-1, a condition)', () => {
    const config = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as Record<string, unknown>;
    expect(config.Aliases).toBeUndefined();
    const acls = Object.entries(resourcesOfType(template, 'AWS::WAFv2::WebACL')) as Array<[string, { Condition?: string }]>;
    expect(acls).toHaveLength(1);
    const [aclId, acl] = acls[0]!;
    expect(acl.Condition).toBe('InUsEast1');
    expect(config.WebACLId).toEqual({ 'Fn::If': ['InUsEast1', { 'Fn::GetAtt': [aclId, 'Arn'] }, { Ref: 'AWS::NoValue' }] });
    expect(template.toJSON().Conditions.InUsEast1).toEqual({ 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] });
  });
});

describe('monitoring', () => {
  it('has an alarm topic and no email subscription unless alarmEmail is given (test/lib/monitoring.test.ts has the rest)', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});

describe('outputs', () => {
  it('give the CloudFront base URL ending in /v1, both raw Function URLs, table names, the secret and its fill-in command', () => {
    const distributionId = Object.keys(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0];
    template.hasOutput('BaseUrl', {
      Value: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/v1']] },
      Description: 'OpenAI base URL for every route (chat completions, embeddings, models), via CloudFront',
    });
    template.hasOutput('OriginSecretArn', { Value: { Ref: ids.originSecret } });
    template.hasOutput('DistributionDomainName', { Value: { 'Fn::GetAtt': [distributionId, 'DomainName'] } });
    template.hasOutput('AlarmTopicArn', {});
    template.hasOutput('DashboardName', {});
    const outputs = (template.toJSON() as { Outputs: Record<string, { Description?: string }> }).Outputs;
    for (const direct of ['ChatCompletionsUrl', 'EmbeddingsUrl', 'EmbeddingsBaseUrl'])
      expect(outputs[direct]?.Description).toMatch(/Answers only requests from CloudFront/);
    for (const [name, output] of Object.entries(outputs)) expect(output.Description, name).toBeTruthy();
    template.hasOutput('ChatCompletionsUrl', { Value: { 'Fn::GetAtt': [ids.chatUrl, 'FunctionUrl'] } });
    template.hasOutput('EmbeddingsUrl', { Value: { 'Fn::GetAtt': [ids.embeddingsUrl, 'FunctionUrl'] } });
    template.hasOutput('KeysTableName', { Value: { Ref: ids.tables.keys } });
    template.hasOutput('AccountsTableName', { Value: { Ref: ids.tables.accounts } });
    template.hasOutput('LedgerTableName', { Value: { Ref: ids.tables.ledger } });
    template.hasOutput('UpstreamSecretArn', { Value: { Ref: ids.secret } });
    template.hasOutput('PutUpstreamKeysCommand', {
      Value: {
        'Fn::Join': [
          '',
          [
            'aws secretsmanager put-secret-value --region ',
            { Ref: 'AWS::Region' },
            ' --secret-id Modelmux/upstream-keys --secret-string file://upstream-keys.json',
          ],
        ],
      },
    });
  });
});

describe('accounts: Cognito, the BYOK key and the account function', () => {
  it('has a self-sign-up user pool with email as the username, verified email and the strong password policy', () => {
    const pool = resourcesOfType(template, 'AWS::Cognito::UserPool')[ids.userPool] as CfnResource;
    const p = USER_POOL_SETTINGS.Policies.PasswordPolicy;
    expect(pool.Properties).toMatchObject({
      UsernameAttributes: ['email'],
      AutoVerifiedAttributes: ['email'],
      UsernameConfiguration: { CaseSensitive: false },
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: false },
      Policies: {
        PasswordPolicy: {
          MinimumLength: p.MinimumLength,
          RequireUppercase: true,
          RequireLowercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
          TemporaryPasswordValidityDays: 3,
        },
      },
      AccountRecoverySetting: { RecoveryMechanisms: [{ Name: 'verified_email', Priority: 1 }] },
      DeletionProtection: 'ACTIVE',
    });
    expect(p.MinimumLength).toBeGreaterThanOrEqual(12);
    expect(pool.DeletionPolicy).toBe('Retain');
    expect(pool.Properties?.LambdaConfig).toBeUndefined(); // accounts are created on first call, no trigger
  });

  it('has Cognito threat protection in audit mode by default: the Plus feature plan, standard authentication AUDIT', () => {
    const pool = resourcesOfType(template, 'AWS::Cognito::UserPool')[ids.userPool] as CfnResource;
    expect(pool.Properties).toMatchObject({ UserPoolTier: 'PLUS', UserPoolAddOns: { AdvancedSecurityMode: 'AUDIT' } });
    // Audit only: nothing is blocked, and custom authentication (which the dashboard does not use) is not configured.
    expect((pool.Properties?.UserPoolAddOns as Record<string, unknown>).AdvancedSecurityAdditionalFlows).toBeUndefined();
  });

  it('has a public dashboard client: no secret, USER_PASSWORD_AUTH and SRP, refresh tokens', () => {
    const client = resourcesOfType(template, 'AWS::Cognito::UserPoolClient')[ids.userPoolClient] as CfnResource;
    expect(client.Properties).toMatchObject({
      UserPoolId: { Ref: ids.userPool },
      GenerateSecret: false,
      PreventUserExistenceErrors: 'ENABLED',
      EnableTokenRevocation: true,
    });
    expect([...(client.Properties?.ExplicitAuthFlows as string[])].sort()).toEqual([...DASHBOARD_CLIENT_SETTINGS.ExplicitAuthFlows].sort());
  });

  it('has one retained, rotating KMS key; kms:Decrypt only for chat and embeddings, kms:GenerateDataKey only for the account function, both bound to the BYOK context', () => {
    template.resourceCountIs('AWS::KMS::Key', 1);
    const key = resourcesOfType(template, 'AWS::KMS::Key')[ids.byokKey] as CfnResource;
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.DeletionPolicy).toBe('Retain');
    const kmsStatements = allIamStatements(template).filter(
      ({ statement }) => actionsOf(statement).some((a) => a.startsWith('kms:')) && statement.Principal === undefined,
    );
    const byFunction = new Map<string, string[]>();
    for (const fn of [ids.chatFn, ids.embeddingsFn, ids.accountFn]) {
      byFunction.set(
        fn,
        roleStatementsOf(fn)
          .filter((st) => actionsOf(st).some((a) => a.startsWith('kms:')))
          .flatMap((st) => {
            expect(resourcesOfStatement(st)).toEqual([getAttArn(ids.byokKey)]);
            expect((st as IamStatement & { Condition?: unknown }).Condition).toEqual({
              StringEquals: { 'kms:EncryptionContext:purpose': BYOK_CONTEXT_PURPOSE },
            });
            return actionsOf(st);
          }),
      );
    }
    expect(byFunction.get(ids.chatFn)).toEqual(['kms:Decrypt']);
    expect(byFunction.get(ids.embeddingsFn)).toEqual(['kms:Decrypt']);
    expect(byFunction.get(ids.accountFn)).toEqual(['kms:GenerateDataKey']);
    expect(kmsStatements.length).toBe(3);
  });

  it('grants the account function exactly its table and index actions, the Stripe secret, its own log group, no upstream secret and no kms:Decrypt', () => {
    const granted = new Map<string, string[]>();
    for (const statement of roleStatementsOf(ids.accountFn)) {
      for (const resource of resourcesOfStatement(statement)) {
        const k = JSON.stringify(resource);
        granted.set(k, [...(granted.get(k) ?? []), ...actionsOf(statement)].sort());
      }
    }
    const expected = new Map<string, string[]>([
      // Logs: its own log group only.
      [JSON.stringify(getAttArn(logGroupOf(ids.accountFn))), [...LOG_WRITE_ACTIONS]],
      [JSON.stringify(getAttArn(ids.byokKey)), ['kms:GenerateDataKey']],
      // The origin secret (one door: it refuses calls that did not come through CloudFront).
      [JSON.stringify({ Ref: ids.originSecret }), ['secretsmanager:GetSecretValue']],
      // The Stripe keys `<stack>/stripe` (checkout and the webhook's signing secret).
      [JSON.stringify({ Ref: ids.stripeSecret }), ['secretsmanager:GetSecretValue']],
      // The settle queue's depth (a balance read reclaims a stranded lease only while it is empty).
      [JSON.stringify(getAttArn(logicalIdByPath(template, 'AWS::SQS::Queue', '/SettlePath/Queue/'))), ['sqs:GetQueueAttributes']],
    ]);
    // Not the responses table: the account API does not read stored responses.
    for (const [name, grant] of Object.entries(ACCOUNT_TABLE_ACTIONS)) {
      const table = ids.tables[name as keyof typeof ids.tables];
      expected.set(JSON.stringify(getAttArn(table)), [...grant.table].sort());
      if (grant.index) expected.set(JSON.stringify({ 'Fn::Join': ['', [getAttArn(table), `/index/${grant.index.name}`]] }), [...grant.index.actions]);
    }
    expect(granted).toEqual(expected);
    expect(JSON.stringify(roleStatementsOf(ids.accountFn))).not.toContain(JSON.stringify({ Ref: ids.secret }));
  });

  it('gives the account function the pool, the client, the key and the tables in env; the upstream functions the key ARN', () => {
    expect(envOf(ids.accountFn)).toMatchObject({
      COGNITO_USER_POOL_ID: { Ref: ids.userPool },
      COGNITO_CLIENT_ID: { Ref: ids.userPoolClient },
      BYOK_KMS_KEY_ID: getAttArn(ids.byokKey),
      [TABLE_ENV.accounts]: { Ref: ids.tables.accounts },
      STRIPE_SECRET_ARN: { Ref: ids.stripeSecret },
      SETTLE_QUEUE_URL: { Ref: logicalIdByPath(template, 'AWS::SQS::Queue', '/SettlePath/Queue/') },
    });
    expect(envOf(ids.accountFn).UPSTREAM_SECRET_ARN).toBeUndefined();
    for (const fn of [ids.chatFn, ids.embeddingsFn]) expect(envOf(fn).BYOK_KMS_KEY_ID).toEqual(getAttArn(ids.byokKey));
    template.hasOutput('UserPoolId', { Value: { Ref: ids.userPool } });
    template.hasOutput('UserPoolClientId', { Value: { Ref: ids.userPoolClient } });
  });
});

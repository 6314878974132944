import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../lib/stack-context';
import { CHAT_DEFAULT_MEMORY_MB } from '../../lib/constructs/chat-endpoint';
import { EMBEDDINGS_DEFAULT_MEMORY_MB } from '../../lib/constructs/embeddings-endpoint';
import { allIamStatements, type CfnResource, resourcesOfType, testApp } from './template-helpers';
import { synthTemplate as synth } from './support/synth';

/**
 * Stack options read from context. Each variant is synthesised once for the whole stack tier, without
 * bundling (stack.test.ts covers the real bundle): test/lib/support/synth.ts.
 */

// Each variant synthesises the whole stack (seconds each on a loaded machine).
vi.setConfig({ testTimeout: 120_000 });

/** The functions that call upstreams (chat, embeddings): not the account API's, the settle function, nor CDK's own helpers (the dashboard's upload). */
function upstreamFunctions(template: Template): CfnResource[] {
  return Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
    .filter(([id]) => id.startsWith('Chat') || id.startsWith('Embeddings'))
    .map(([, fn]) => fn);
}

function functionEnvs(template: Template): Array<Record<string, unknown>> {
  const fns = upstreamFunctions(template);
  expect(fns).toHaveLength(2);
  return fns.map((fn) => (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables);
}

/**
 * Secrets Manager statements other than those about the stack's own secrets: the origin secret (every
 * CloudFront stack has it) and the Stripe secret (the account function's, see {@link expectStripeStatementOnAccountAndSettleRoles}).
 * What is left must be about the upstream secret.
 */
const OTHER_SECRET_SIDS = ['OriginSecret', 'StripeSecret'];
function secretStatements(template: Template): unknown[] {
  return allIamStatements(template)
    .filter(({ statement }) => JSON.stringify(statement.Action).includes('secretsmanager:') && !OTHER_SECRET_SIDS.includes(statement.Sid ?? ''))
    .map(({ statement }) => statement);
}

/**
 * The Stripe secret statements: two, on the created `<stack>/stripe` secret, whatever the upstream
 * secret: the account function's role (checkout, the webhook) and the settle function's (auto top-up's
 * off-session charges), and no other role.
 */
function expectStripeStatementOnAccountAndSettleRoles(template: Template): void {
  const stripeSecret = Object.keys(resourcesOfType(template, 'AWS::SecretsManager::Secret')).filter((id) => id.startsWith('StripeSecret'));
  expect(stripeSecret).toHaveLength(1);
  const stripe = allIamStatements(template).filter(({ statement }) => statement.Sid === 'StripeSecret');
  expect(stripe.map((s) => s.owner.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(['AccountGatewayRoleDefaultPolicy', 'SettlePathSettleRoleDefaultPolicy']);
  for (const s of stripe) expect(s.statement).toMatchObject({ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: stripeSecret[0] } });
}

/** Secrets the stack creates for upstream keys. */
function upstreamSecrets(template: Template): string[] {
  return Object.keys(resourcesOfType(template, 'AWS::SecretsManager::Secret')).filter((id) => id.startsWith('UpstreamKeys'));
}

describe('stack options from context', () => {
  it('skips CloudFront when cloudfront=false and points BaseUrl at the chat Function URL', () => {
    const template = synth({ cloudfront: 'false' });
    template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    const chatUrlId = Object.entries(resourcesOfType(template, 'AWS::Lambda::Url')).find(([, url]) => url.Properties?.InvokeMode === 'RESPONSE_STREAM')?.[0];
    template.hasOutput('BaseUrl', { Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [chatUrlId, 'FunctionUrl'] }, 'v1']] } });
    template.hasOutput('EmbeddingsUrl', {});
    // No proxy in front: buffered chat may use the function's 300 s less the 5 s settle reserve.
    expect(
      functionEnvs(template)
        .map((env) => env.BUFFERED_CHAT_BUDGET_MS)
        .filter(Boolean),
    ).toEqual(['295000']);
  }, 120_000); // the file's first synth loads aws-cdk-lib's constructs: ~20 s alone, more on a busy machine

  it('imports the upstream secret by name: no secret created, GetSecretValue on that name and its 6-character suffix only', () => {
    const template = synth({ upstreamSecretName: 'modelmux/upstream-keys' });
    expect(upstreamSecrets(template)).toEqual([]);
    const statements = secretStatements(template);
    // One per upstream function (chat, embeddings); the Stripe statement is the account function's, not counted here.
    expect(statements.length).toBe(2);
    for (const statement of statements) {
      expect(statement).toMatchObject({ Action: 'secretsmanager:GetSecretValue' });
      expect(JSON.stringify(statement)).toContain(':secret:modelmux/upstream-keys-??????');
    }
    for (const env of functionEnvs(template)) expect(JSON.stringify(env.UPSTREAM_SECRET_ARN)).toContain(':secret:modelmux/upstream-keys');
    expectStripeStatementOnAccountAndSettleRoles(template);
  });

  it('imports the kept Stripe secret by name (a redeploy after cdk destroy): none created, read by name, granted on that name and its suffix only', () => {
    const template = synth({ stripeSecretName: 'Modelmux/stripe' });
    const secrets = Object.values(resourcesOfType(template, 'AWS::SecretsManager::Secret')).map((r) => String(JSON.stringify(r.Properties?.Name)));
    expect(secrets.filter((name) => name.includes('stripe'))).toEqual([]);
    const stripeEnvs = Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))
      .map((fn) => (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {})
      .filter((env) => env.STRIPE_SECRET_ARN !== undefined);
    expect(stripeEnvs.length).toBe(2); // the account and settle functions
    for (const env of stripeEnvs) expect(env.STRIPE_SECRET_ARN).toBe('Modelmux/stripe');
    const grants = allIamStatements(template).filter(({ statement }) => statement.Sid === 'StripeSecret');
    expect(grants.length).toBe(2);
    for (const { statement } of grants) expect(JSON.stringify(statement.Resource)).toContain(':secret:Modelmux/stripe-??????');
    expect(JSON.stringify((template.toJSON() as { Outputs: Record<string, unknown> }).Outputs.StripeSecretPutCommand)).toContain(
      '--secret-id Modelmux/stripe ',
    );
  });

  it('imports the upstream secret by full ARN and grants exactly that ARN', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:team/llm-keys-AbCdEf';
    const template = synth({ upstreamSecretName: arn });
    expect(upstreamSecrets(template)).toEqual([]);
    const statements = secretStatements(template);
    expect(statements.length).toBe(2);
    for (const statement of statements) expect(statement).toMatchObject({ Action: 'secretsmanager:GetSecretValue', Resource: arn });
    expectStripeStatementOnAccountAndSettleRoles(template);
    for (const env of functionEnvs(template)) expect(env.UPSTREAM_SECRET_ARN).toBe(arn);
    template.hasOutput('PutUpstreamKeysCommand', {
      Value: `aws secretsmanager put-secret-value --region eu-west-1 --secret-id ${arn} --secret-string file://upstream-keys.json`,
    });
  });

  it('passes base-URL overrides (object or JSON string) as plain env', () => {
    for (const upstreamBaseUrls of [{ OPENAI_BASE_URL: 'https://proxy.example/v1' }, '{"OPENAI_BASE_URL":"https://proxy.example/v1"}']) {
      const template = synth({ upstreamBaseUrls });
      for (const env of functionEnvs(template)) expect(env.OPENAI_BASE_URL).toBe('https://proxy.example/v1');
    }
  });

  it('refuses an API key (or any non-base-URL name) passed as a base-URL override', () => {
    expect(() => synth({ upstreamBaseUrls: { OPENAI_API_KEY: 'sk-should-not-be-here' } })).toThrow(
      /OPENAI_API_KEY is not one of .*API keys belong in the secret/,
    );
    expect(() => synth({ upstreamBaseUrls: { OPENAI_BASE_URL: 'not a url' } })).toThrow(/must be an http\(s\) URL/);
  });

  it('sets reserved concurrency of chat and embeddings only when asked (settle and account always have theirs)', () => {
    const template = synth({ chatReservedConcurrency: '20', embeddingsReservedConcurrency: 5 });
    const reserved = upstreamFunctions(template).map((fn) => fn.Properties?.ReservedConcurrentExecutions);
    expect(reserved.sort()).toEqual([20, 5]);
    // chat, embeddings, and the settle and account functions' defaults (deploy-readiness.test.ts).
    expect(
      Object.values(resourcesOfType(template, 'AWS::Lambda::Function')).filter((fn) => fn.Properties?.ReservedConcurrentExecutions !== undefined),
    ).toHaveLength(4);
    expect(() => synth({ chatReservedConcurrency: 'lots' })).toThrow(/chatReservedConcurrency must be a non-negative integer/);
  });

  it('passes publicBaseUrl to every function as PUBLIC_BASE_URL', () => {
    const template = synth({ publicBaseUrl: 'https://api.example.com' });
    // Every modelmux function that answers a client (CDK's own dashboard-upload handler is not one;
    // the settle function answers nobody, so it writes no dashboard links).
    const envs = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
      .filter(([id]) => !id.startsWith('CustomCDKBucketDeployment') && !id.startsWith('SettlePath'))
      .map(([, fn]) => (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables);
    // chat, embeddings, account.
    expect(envs).toHaveLength(3);
    for (const env of envs) expect(env.PUBLIC_BASE_URL).toBe('https://api.example.com');
  });

  it('derives PUBLIC_BASE_URL from a custom domain, and lets publicBaseUrl override it', () => {
    const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/abc';
    const publicUrls = (template: Template): unknown[] =>
      Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
        .filter(([id]) => !id.startsWith('CustomCDKBucketDeployment') && !id.startsWith('SettlePath'))
        .map(([, fn]) => (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables.PUBLIC_BASE_URL);
    expect(publicUrls(synth({ domainName: 'llm.example.org', certificateArn }))).toEqual(Array(3).fill('https://llm.example.org'));
    expect(publicUrls(synth({ domainName: 'llm.example.org', certificateArn, publicBaseUrl: 'https://x.example.org' }))).toEqual(
      Array(3).fill('https://x.example.org'),
    );
    expect(publicUrls(synth({}))).toEqual(Array(3).fill(undefined));
  });

  it('sets each function memory from chatMemoryMb / embeddingsMemoryMb, and refuses sizes Lambda does not offer', () => {
    const memory = (template: Template): { chat: unknown; embeddings: unknown } => {
      const functions = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'));
      const of = (prefix: string): unknown => functions.find(([id]) => id.startsWith(prefix))?.[1].Properties?.MemorySize;
      return { chat: of('ChatGateway'), embeddings: of('EmbeddingsGateway') };
    };
    expect(memory(synth({ chatMemoryMb: '256', embeddingsMemoryMb: 512 }))).toEqual({ chat: 256, embeddings: 512 });
    expect(memory(synth({}))).toEqual({ chat: CHAT_DEFAULT_MEMORY_MB, embeddings: EMBEDDINGS_DEFAULT_MEMORY_MB });
    expect(() => synth({ chatMemoryMb: '64' })).toThrow(/chatMemoryMb must be an integer from 128 to 10240/);
    expect(() => synth({ embeddingsMemoryMb: 20_000 })).toThrow(/embeddingsMemoryMb must be an integer from 128 to 10240/);
    expect(() => synth({ chatMemoryMb: '1.5GB' })).toThrow(/chatMemoryMb must be a non-negative integer/);
  });

  it('rejects a cloudfront flag that is not a boolean', () => {
    expect(() => synth({ cloudfront: 'yes' })).toThrow(/cloudfront must be true or false/);
  });

  it('turns Cognito threat protection off with cognitoThreatProtection=false: the Essentials plan, threat protection OFF (not just unset)', () => {
    const pools = Object.values(resourcesOfType(synth({ cognitoThreatProtection: 'false' }), 'AWS::Cognito::UserPool'));
    expect(pools).toHaveLength(1);
    expect(pools[0]?.Properties).toMatchObject({ UserPoolTier: 'ESSENTIALS', UserPoolAddOns: { AdvancedSecurityMode: 'OFF' } });
    expect(() => synth({ cognitoThreatProtection: 'audit' })).toThrow(/cognitoThreatProtection must be true or false/);
  });
});

describe('edge options from context', () => {
  const everything = {
    domainName: 'api.example.com',
    hostedZoneId: 'Z0123456789ABC',
    hostedZoneName: 'example.com',
    waf: 'true',
    wafRateLimit: '500',
    tracing: 'true',
    logRetentionDays: '90',
    chatLogRetentionDays: '365',
    accessLogRetentionDays: '30',
    originSecretVersion: 'v-2026-rotation',
  };
  let template: Template;
  let distribution: Record<string, unknown>;

  beforeAll(() => {
    template = synth(everything);
    distribution = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as Record<string, unknown>;
  }, 120_000);

  it('serves the custom domain with a DNS-validated certificate, TLS 1.2 minimum (TLSv1.2_2021) and alias records', () => {
    const certificateId = Object.keys(resourcesOfType(template, 'AWS::CertificateManager::Certificate'))[0];
    template.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: 'api.example.com',
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: 'api.example.com', HostedZoneId: 'Z0123456789ABC' }],
    });
    expect(distribution.Aliases).toEqual(['api.example.com']);
    expect(distribution.ViewerCertificate).toEqual({
      AcmCertificateArn: { Ref: certificateId },
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
    for (const type of ['A', 'AAAA'])
      template.hasResourceProperties('AWS::Route53::RecordSet', { Name: 'api.example.com.', Type: type, HostedZoneId: 'Z0123456789ABC' });
    template.hasOutput('BaseUrl', { Value: 'https://api.example.com/v1' });
  });

  it('refuses to deploy the certificate and the web ACL outside us-east-1 (CloudFormation rules)', () => {
    const rules = (template.toJSON() as { Rules?: Record<string, { Assertions: Array<{ Assert: unknown; AssertDescription: string }> }> }).Rules ?? {};
    const assertions = Object.entries(rules)
      .filter(([id]) => id !== 'CheckBootstrapVersion' && id !== 'FunctionUrlRegion') // the region rule every stack has: deploy-readiness.test.ts
      .flatMap(([, r]) => r.Assertions);
    expect(assertions).toHaveLength(2);
    for (const a of assertions) expect(a.Assert).toEqual({ 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] });
    const app = testApp({ ...everything }, { bundle: false });
    expect(() => new ModelmuxStack(app, 'Modelmux', { ...stackPropsFromContext(app.node), env: { region: 'eu-west-1' } })).toThrow(/us-east-1/);
  });

  it('attaches a WAF web ACL with a per-IP rate limit (429, OpenAI body) and AWS managed rules whose body rules only count', () => {
    const [aclId, acl] = Object.entries(resourcesOfType(template, 'AWS::WAFv2::WebACL'))[0] ?? [];
    expect(distribution.WebACLId).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const props = acl?.Properties as { Scope: string; Rules: Array<Record<string, unknown>>; CustomResponseBodies: Record<string, { Content: string }> };
    expect(props.Scope).toBe('CLOUDFRONT');
    const [rate, ...managed] = props.Rules;
    expect(rate).toMatchObject({
      Name: 'RateLimitPerIp',
      Action: { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'rateLimited' } } },
      Statement: { RateBasedStatement: { Limit: 500, AggregateKeyType: 'IP' } },
    });
    expect(JSON.parse(props.CustomResponseBodies.rateLimited?.Content ?? '{}')).toMatchObject({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
    });
    expect(managed.map((r) => (r.Statement as { ManagedRuleGroupStatement: { Name: string } }).ManagedRuleGroupStatement.Name)).toEqual([
      'AWSManagedRulesCommonRuleSet',
      'AWSManagedRulesKnownBadInputsRuleSet',
      'AWSManagedRulesAmazonIpReputationList',
    ]);
    const common = managed[0]?.Statement as { ManagedRuleGroupStatement: { RuleActionOverrides: Array<{ Name: string; ActionToUse: unknown }> } };
    expect(common.ManagedRuleGroupStatement.RuleActionOverrides).toContainEqual({ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } });
    for (const override of common.ManagedRuleGroupStatement.RuleActionOverrides) expect(override.Name).toMatch(/_BODY$/);
  });

  it('turns on X-Ray tracing: active mode, POWERTOOLS_TRACE_ENABLED, and the X-Ray write actions', () => {
    // Every modelmux function (CDK's own dashboard-upload handler is not one).
    for (const [, fn] of Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).filter(([id]) => !id.startsWith('CustomCDKBucketDeployment'))) {
      expect(fn.Properties?.TracingConfig).toEqual({ Mode: 'Active' });
      expect((fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_TRACE_ENABLED).toBe('true');
    }
    const xray = allIamStatements(template).filter(({ statement }) => JSON.stringify(statement.Action).includes('xray:'));
    expect(xray.length).toBe(4); // chat, embeddings, the account function and the settle function
  });

  it('keeps each function log for its own retention, and access logs for accessLogRetentionDays', () => {
    const retention = Object.entries(resourcesOfType(template, 'AWS::Logs::LogGroup'))
      .filter(([id]) => !id.startsWith('CustomCDKBucketDeployment'))
      .map(([id, g]) => [id.replace(/Gateway.*/, ''), g.Properties?.RetentionInDays]);
    const byFunction = Object.fromEntries(retention);
    // The settle function keeps the stack-wide retention (logRetentionDays; default here).
    const settle = Object.keys(byFunction).find((id) => id.startsWith('SettlePath'));
    expect(settle).toBeDefined();
    if (settle !== undefined) delete byFunction[settle];
    expect(byFunction).toEqual({ Chat: 365, Embeddings: 90, Account: 90 });
    const bucket = Object.entries(resourcesOfType(template, 'AWS::S3::Bucket')).find(([id]) => id.startsWith('AccessLogs'))?.[1];
    expect((bucket?.Properties?.LifecycleConfiguration as { Rules: Array<{ ExpirationInDays: number }> }).Rules[0]?.ExpirationInDays).toBe(30);
  });

  it('makes CloudFront send the origin secret version given for a rotation', () => {
    const functionOrigins = (
      distribution.Origins as Array<{ S3OriginConfig?: unknown; OriginCustomHeaders: Array<{ HeaderValue: { 'Fn::Join': [string, unknown[]] } }> }>
    ).filter((o) => o.S3OriginConfig === undefined);
    const headers = functionOrigins.map((o) => o.OriginCustomHeaders[0]?.HeaderValue['Fn::Join'][1]);
    expect(headers).toHaveLength(3);
    for (const parts of headers) expect(parts?.at(-1)).toBe(':SecretString:current::v-2026-rotation}}');
  });

  it('takes a us-east-1 certificate ARN and an existing web ACL instead', () => {
    const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/abcd-1234';
    const webAclArn = 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/team-acl/1111';
    const variant = synth({ domainName: 'llm.example.org', certificateArn, wafWebAclArn: webAclArn });
    const config = Object.values(resourcesOfType(variant, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as Record<string, unknown>;
    expect(config).toMatchObject({
      Aliases: ['llm.example.org'],
      WebACLId: webAclArn,
      ViewerCertificate: { AcmCertificateArn: certificateArn, MinimumProtocolVersion: 'TLSv1.2_2021' },
    });
    variant.resourceCountIs('AWS::WAFv2::WebACL', 0);
    variant.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    variant.resourceCountIs('AWS::Route53::RecordSet', 0);
  });

  it('creates the WAF by default wherever CloudFront can use it: in a stack pinned to us-east-1 always, elsewhere none and a synth warning; waf=false turns it off', () => {
    const pinned = (region: string, context: Record<string, unknown> = {}) => {
      const app = testApp(context, { bundle: false });
      const stack = new ModelmuxStack(app, 'Modelmux', { ...stackPropsFromContext(app.node), env: { region } });
      const template = Template.fromStack(stack);
      const config = Object.values(resourcesOfType(template, 'AWS::CloudFront::Distribution'))[0]?.Properties?.DistributionConfig as Record<string, unknown>;
      const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('No WAF web ACL'));
      return {
        acls: Object.entries(resourcesOfType(template, 'AWS::WAFv2::WebACL')) as Array<[string, CfnResource & { Condition?: string }]>,
        config,
        warnings,
      };
    };
    const east = pinned('us-east-1');
    expect(east.acls).toHaveLength(1);
    expect(east.acls[0]![1].Condition).toBeUndefined();
    expect(east.config.WebACLId).toEqual({ 'Fn::GetAtt': [east.acls[0]![0], 'Arn'] });
    expect(east.warnings).toEqual([]);
    const west = pinned('eu-west-1');
    expect(west.acls).toEqual([]);
    expect(west.config.WebACLId).toBeUndefined();
    expect(west.warnings).toHaveLength(1);
    const off = synth({ waf: 'false' });
    off.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expect(pinned('eu-west-1', { waf: 'false' }).warnings).toEqual([]);
  });

  it('refuses inconsistent or malformed edge and logging options, naming the context key', () => {
    expect(() => synth({ domainName: 'api.example.com' })).toThrow(/domainName needs certificateArn/);
    expect(() => synth({ domainName: 'a.example.com', certificateArn: 'arn:aws:acm:eu-west-1:1:certificate/x' })).toThrow(/us-east-1/);
    expect(() => synth({ cloudfront: 'false', waf: 'true' })).toThrow(/need the CloudFront distribution/);
    expect(() => synth({ waf: 'true', wafWebAclArn: 'arn:x' })).toThrow(/exclude each other/);
    expect(() => synth({ waf: 'true', wafRateLimit: '5' })).toThrow(/at least 10/);
    expect(() => synth({ logRetentionDays: '10' })).toThrow(/logRetentionDays must be one of/);
    expect(() => synth({ alarmEmail: 'not-an-address' })).toThrow(/alarmEmail must be an email address/);
    expect(() => synth({ hostedZoneId: 'Z1', hostedZoneName: 'example.com' })).toThrow(/need domainName/);
  });
});

describe('stack-unique names', () => {
  it('gives two stacks in one account their own upstream secret and metrics service', () => {
    const app = testApp({}, { bundle: false });
    const stacks = ['Modelmux', 'Modelmux-staging'].map((id) => new ModelmuxStack(app, id, stackPropsFromContext(app.node)));
    const names = stacks.map((stack) => {
      const t = Template.fromStack(stack);
      const secret = Object.entries(resourcesOfType(t, 'AWS::SecretsManager::Secret')).find(([sid]) => sid.startsWith('UpstreamKeys'))?.[1];
      const env = (Object.values(resourcesOfType(t, 'AWS::Lambda::Function'))[0]?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      return [secret?.Properties?.Name, env.POWERTOOLS_SERVICE_NAME];
    });
    expect(names).toEqual([
      ['Modelmux/upstream-keys', 'Modelmux'],
      ['Modelmux-staging/upstream-keys', 'Modelmux-staging'],
    ]);
  });
});

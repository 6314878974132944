import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_PATH_PATTERN, EMBEDDINGS_PATH_PATTERN } from '../../lib/constructs/api-distribution';
import { contentSecurityPolicy, siteSecurityHeaders } from '../../web/security-headers';
import { actionsOf, allIamStatements, type CfnResource, logicalIdByPath, resourcesOfStatement, resourcesOfType } from './template-helpers';
import { synthStack } from './support/synth';

/**
 * The dashboard in the default stack: a private bucket read only by this distribution (OAC), the
 * page as the distribution's default behaviour with the strict CSP, the API keeping /v1/*, and the
 * real build (local asset bundling) uploaded by BucketDeployment. Synthesised once, with bundling.
 */

// CloudFront managed cache policy "CachingOptimized" (CloudFront docs, "Use managed cache policies").
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';

let template: Template;
let assemblyDir: string;
let bucketId: string;
let distributionId: string;
let config: {
  DefaultRootObject?: string;
  DefaultCacheBehavior: Record<string, unknown>;
  CacheBehaviors: Array<Record<string, unknown>>;
  Origins: Array<{ Id: string; DomainName: unknown; OriginAccessControlId?: unknown; S3OriginConfig?: Record<string, unknown> }>;
};

beforeAll(() => {
  ({ template, assemblyDir } = synthStack());
  bucketId = logicalIdByPath(template, 'AWS::S3::Bucket', '/Site/Bucket/');
  distributionId = logicalIdByPath(template, 'AWS::CloudFront::Distribution', '/Api/Distribution/');
  config = resourcesOfType(template, 'AWS::CloudFront::Distribution')[distributionId]?.Properties?.DistributionConfig as typeof config;
}, 180_000);

const originOf = (behaviour: Record<string, unknown> | undefined) => config.Origins.find((o) => o.Id === behaviour?.TargetOriginId);

describe('dashboard bucket', () => {
  it('blocks all public access, is encrypted, owner-enforced, and is no website', () => {
    const bucket = resourcesOfType(template, 'AWS::S3::Bucket')[bucketId] as CfnResource;
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    expect(bucket.Properties?.WebsiteConfiguration).toBeUndefined();
    // Its own accesses are logged to the stack's access-log bucket, under site/.
    const logs = logicalIdByPath(template, 'AWS::S3::Bucket', '/AccessLogs/');
    expect(bucket.Properties?.LoggingConfiguration).toEqual({ DestinationBucketName: { Ref: logs }, LogFilePrefix: 'site/' });
  });

  it('lets only CloudFront read it, for this distribution only, and refuses plain HTTP', () => {
    const policies = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).filter(
      (p) => JSON.stringify(p.Properties?.Bucket) === JSON.stringify({ Ref: bucketId }),
    );
    expect(policies).toHaveLength(1);
    const statements = (policies[0]?.Properties?.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
    const allows = statements.filter((s) => s.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    expect(JSON.stringify(allows[0]?.Condition)).toContain(`":distribution/",{"Ref":"${distributionId}"}`);
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Principal: { AWS: '*' } }),
    );
  });

  it('is the origin of the default behaviour through origin access control (no OAI, no public read)', () => {
    const origin = originOf(config.DefaultCacheBehavior);
    expect(JSON.stringify(origin?.DomainName)).toContain(bucketId);
    expect(origin?.OriginAccessControlId).toBeDefined();
    expect(origin?.S3OriginConfig).toEqual({ OriginAccessIdentity: '' });
    const oacs = Object.values(resourcesOfType(template, 'AWS::CloudFront::OriginAccessControl'));
    expect(oacs).toHaveLength(1);
    expect(oacs[0]?.Properties?.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
  });
});

describe('distribution', () => {
  it('serves the page at / from the bucket (GET/HEAD, cached, HTTPS) and /v1/* from the API', () => {
    expect(config.DefaultRootObject).toBe('index.html');
    expect(config.DefaultCacheBehavior).toMatchObject({
      AllowedMethods: ['GET', 'HEAD'],
      CachePolicyId: CACHING_OPTIMIZED,
      ViewerProtocolPolicy: 'redirect-to-https',
      Compress: true,
    });
    const patterns = config.CacheBehaviors.map((b) => b.PathPattern);
    expect(patterns).toContain(API_PATH_PATTERN);
    // CloudFront takes the first matching pattern: every other /v1/ route (embeddings, the account
    // API) must precede /v1/*, which therefore comes last.
    expect(patterns.indexOf(EMBEDDINGS_PATH_PATTERN)).toBeGreaterThanOrEqual(0);
    expect(patterns.at(-1)).toBe(API_PATH_PATTERN);
    expect(patterns).toContain('/config.json');
    const chatUrlId = logicalIdByPath(template, 'AWS::Lambda::Url', '/Chat/');
    expect(JSON.stringify(originOf(config.CacheBehaviors.find((b) => b.PathPattern === API_PATH_PATTERN))?.DomainName)).toContain(chatUrlId);
    template.hasOutput('DashboardUrl', { Value: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/']] } });
  });

  it('attaches a response headers policy with the strict CSP and security headers of web/security-headers.ts', () => {
    const policyRef = config.DefaultCacheBehavior.ResponseHeadersPolicyId as { Ref: string };
    const policy = resourcesOfType(template, 'AWS::CloudFront::ResponseHeadersPolicy')[policyRef.Ref]?.Properties?.ResponseHeadersPolicyConfig as {
      SecurityHeadersConfig: Record<string, Record<string, unknown>>;
      CustomHeadersConfig: { Items: Array<{ Header: string; Value: string; Override: boolean }> };
    };
    const security = policy.SecurityHeadersConfig;
    // The CSP names Cognito's endpoint in the stack's region (a token): render it with a stand-in.
    const csp = renderJoin(security.ContentSecurityPolicy?.ContentSecurityPolicy, { 'AWS::Region': 'eu-west-1' });
    expect(csp).toBe(contentSecurityPolicy({ cognitoEndpoint: 'https://cognito-idp.eu-west-1.amazonaws.com', https: true }));
    expect(csp).toContain("connect-src 'self' https://cognito-idp.eu-west-1.amazonaws.com;");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(security.ContentSecurityPolicy?.Override).toBe(true);
    expect(security).toMatchObject({
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: 'DENY', Override: true },
      ReferrerPolicy: { ReferrerPolicy: 'no-referrer', Override: true },
      StrictTransportSecurity: { AccessControlMaxAgeSec: 63_072_000, IncludeSubdomains: true, Preload: true, Override: true },
      XSSProtection: { Protection: false, Override: true },
    });
    const custom = Object.fromEntries(policy.CustomHeadersConfig.Items.map((h) => [h.Header, h.Value]));
    expect(custom).toEqual(siteSecurityHeaders({ cognitoEndpoint: 'x', https: true }).custom);
  });

  it('leaves the API behaviours without the page headers policy (API answers are not the page)', () => {
    for (const behaviour of config.CacheBehaviors.filter((b) => String(b.PathPattern).startsWith('/v1/'))) {
      expect(behaviour.ResponseHeadersPolicyId).toBeUndefined();
    }
  });
});

describe('deployment of web/dist', () => {
  const deployments = () => Object.values(resourcesOf('Custom::CDKBucketDeployment'));

  it('uploads the hashed assets as immutable and index.html as no-cache with an invalidation of /', () => {
    const all = deployments();
    expect(all).toHaveLength(2);
    for (const d of all) expect(d.Properties?.DestinationBucketName).toEqual({ Ref: bucketId });
    const assets = all.find((d) => JSON.stringify(d.Properties?.Exclude) === '["index.html"]');
    const page = all.find((d) => JSON.stringify(d.Properties?.Include) === '["index.html"]');
    expect(assets?.Properties).toMatchObject({ Prune: false, SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable' } });
    expect(page?.Properties).toMatchObject({
      Exclude: ['*'],
      Prune: false,
      SystemMetadata: { 'cache-control': 'no-cache' },
      DistributionId: { Ref: distributionId },
      DistributionPaths: ['/', '/index.html'],
    });
  });

  it('ships the real build: index.html loads one hashed module script and one stylesheet, nothing inline', () => {
    const key = String((deployments()[0]?.Properties?.SourceObjectKeys as string[])[0]);
    const dir = join(assemblyDir, `asset.${key.replace(/\.zip$/, '')}`);
    const files = readdirSync(dir).sort();
    const js = files.filter((f) => /^app-[A-Z0-9]{8}\.js$/.test(f));
    const css = files.filter((f) => /^styles-[A-Z0-9]{8}\.css$/.test(f));
    expect(js).toHaveLength(1);
    expect(css).toHaveLength(1);
    expect(files).toContain('index.html');
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(html).toContain(`<script type="module" src="/${js[0]}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="/${css[0]}" />`);
    expect(html.match(/<script/g)).toHaveLength(1); // no inline script
    expect(html).not.toMatch(/<style|style="/); // no inline style
    expect(html).not.toMatch(/https?:\/\//); // no third-party origin
  });

  it('gives the upload handler only the site bucket, the asset bucket and invalidations', () => {
    const statements = allIamStatements(template).filter(({ owner }) => owner.startsWith('CustomCDKBucketDeployment'));
    expect(statements.length).toBeGreaterThan(0);
    for (const { statement } of statements) {
      const actions = actionsOf(statement);
      if (actions.join() === 'sts:AssumeRole') {
        expect(statement.Principal).toEqual({ Service: 'lambda.amazonaws.com' }); // its role's trust policy
        continue;
      }
      if (actions.every((a) => a.startsWith('cloudfront:'))) {
        expect(actions.sort()).toEqual(['cloudfront:CreateInvalidation', 'cloudfront:GetInvalidation']);
        continue;
      }
      expect(actions.every((a) => a.startsWith('s3:'))).toBe(true);
      for (const resource of resourcesOfStatement(statement)) {
        const text = JSON.stringify(resource);
        expect(text.includes(bucketId) || text.includes('cdk-hnb659fds-assets'), text).toBe(true);
      }
      if (actions.some((a) => a.startsWith('s3:Delete') || a.startsWith('s3:Put'))) {
        for (const resource of resourcesOfStatement(statement)) expect(JSON.stringify(resource)).toContain(bucketId);
      }
    }
  });
});

function resourcesOf(type: string): Record<string, CfnResource> {
  return resourcesOfType(template, type);
}

/** Renders a CloudFormation string, `Fn::Join` or `Ref` with the given pseudo-parameter values. */
function renderJoin(value: unknown, refs: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const v = value as { 'Fn::Join'?: [string, unknown[]]; Ref?: string };
  if (v.Ref !== undefined) return refs[v.Ref] ?? `<${v.Ref}>`;
  if (v['Fn::Join']) return v['Fn::Join'][1].map((part) => renderJoin(part, refs)).join(v['Fn::Join'][0]);
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

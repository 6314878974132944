import { AssetHashType, Aws, type CfnElement, DockerImage, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  type IDistribution,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { buildWebSync, WEB_DIR } from '../../web/build';
import { siteSecurityHeaders } from '../../web/security-headers';

/** Props of {@link Site}. */
export interface SiteProps {
  /**
   * Cognito's JSON API endpoint the page signs in through (CSP connect-src). Default: AWS's own for
   * the stack's region, `https://cognito-idp.<region>.amazonaws.com`.
   */
  readonly cognitoEndpoint?: string;
  /** Bucket for the site bucket's S3 server access logs (prefix `site/`). Default: none. */
  readonly accessLogsBucket?: IBucket;
}

/**
 * The account dashboard (web/) in AWS: a private S3 bucket (all public access blocked, TLS-only
 * bucket policy, SSE-S3, objects owned by the bucket owner), read by CloudFront alone through origin
 * access control (OAC: the bucket policy allows cloudfront.amazonaws.com for THIS distribution only),
 * and a response headers policy carrying the strict CSP and the security headers of
 * web/security-headers.ts, the same set `npm start` sends.
 *
 * Use: `site.behavior` as the distribution's default behaviour (the page at `/`), then
 * `site.deploy(distribution)` to upload web/dist. The build runs at synth time by local asset bundling
 * (esbuild in-process, no Docker); its output is content-hashed, so every file but index.html is
 * cached for a year, and index.html is revalidated and invalidated on each deployment.
 *
 * The bucket is retained when the stack is deleted (empty it by hand first if you want it gone):
 * deleting a non-empty bucket would fail the stack deletion, and auto-delete needs another function.
 */
export class Site extends Construct {
  readonly bucket: Bucket;
  readonly responseHeadersPolicy: ResponseHeadersPolicy;
  /** The distribution behaviour serving the site: GET/HEAD, cached, compressed, HTTPS (redirected). */
  readonly behavior: BehaviorOptions;

  constructor(scope: Construct, id: string, props: SiteProps = {}) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      ...(props.accessLogsBucket ? { serverAccessLogsBucket: props.accessLogsBucket, serverAccessLogsPrefix: 'site/' } : {}),
    });
    if (!props.accessLogsBucket) {
      Validations.of(this.bucket).acknowledge({
        id: 'AwsSolutions::AwsSolutions-S1',
        reason: 'No access-log bucket was given; CloudFront logs every viewer request to the site anyway.',
      });
    }

    const headers = siteSecurityHeaders({
      cognitoEndpoint: props.cognitoEndpoint ?? `https://cognito-idp.${Aws.REGION}.amazonaws.com`,
      https: true,
    });
    this.responseHeadersPolicy = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'modelmux dashboard: strict CSP and security headers (web/security-headers.ts)',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: headers.contentSecurityPolicy, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(headers.strictTransportSecurity.maxAgeSeconds),
          includeSubdomains: headers.strictTransportSecurity.includeSubdomains,
          preload: headers.strictTransportSecurity.preload,
          override: true,
        },
        xssProtection: { protection: false, override: true },
      },
      customHeadersBehavior: {
        customHeaders: Object.entries(headers.custom).map(([header, value]) => ({ header, value, override: true })),
      },
    });

    this.behavior = {
      origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: this.responseHeadersPolicy,
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      compress: true,
    };
  }

  /**
   * Uploads the built site: the hashed assets first (cached for a year, old ones kept so a page
   * loaded before a deployment still finds its files), then index.html (revalidated on every load)
   * with an invalidation of `/` and `/index.html` on `distribution`.
   */
  deploy(distribution: IDistribution): void {
    const source = Source.asset(WEB_DIR, {
      // The output depends on node_modules (preact) too, so hash what the build wrote.
      assetHashType: AssetHashType.OUTPUT,
      exclude: ['dist', 'node_modules'],
      bundling: {
        // Never used: local bundling always succeeds or throws with esbuild's message.
        image: DockerImage.fromRegistry('public.ecr.aws/docker/library/node:24-alpine'),
        local: {
          tryBundle(outputDir: string): boolean {
            buildWebSync(outputDir);
            return true;
          },
        },
      },
    });
    const assets = new BucketDeployment(this, 'Assets', {
      sources: [source],
      destinationBucket: this.bucket,
      exclude: ['index.html'],
      prune: false,
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
    });
    const page = new BucketDeployment(this, 'Page', {
      sources: [source],
      destinationBucket: this.bucket,
      exclude: ['*'],
      include: ['index.html'],
      prune: false,
      cacheControl: [CacheControl.noCache()],
      distribution,
      distributionPaths: ['/', '/index.html'],
    });
    page.node.addDependency(assets);
    this.acknowledgeUploadHandler();
  }

  /**
   * cdk-nag findings on CDK's own BucketDeployment handler (a singleton function CDK writes, not ours),
   * each with its reason. Its grants are scoped in test/lib/site.test.ts.
   */
  private acknowledgeUploadHandler(): void {
    const stack = Stack.of(this);
    const handler = stack.node.tryFindChild('Custom::CDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756C');
    if (handler === undefined) return;
    const bucketId = stack.resolve(stack.getLogicalId(this.bucket.node.defaultChild as CfnElement)) as string;
    const findings: Array<[string, string]> = [
      [
        'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        "CDK's upload handler logs through the AWS-managed basic execution policy (CloudWatch Logs only).",
      ],
      ...['s3:GetBucket*', 's3:GetObject*', 's3:List*', 's3:Abort*', 's3:DeleteObject*'].map((a): [string, string] => [
        `IAM5[Action::${a}]`,
        "CDK's upload handler reads the CDK asset bucket and syncs THIS site bucket (bucket.grantReadWrite: CDK's action families); no other bucket.",
      ]),
      [
        `IAM5[Resource::arn:${envPart(stack.partition, 'Partition')}:s3:::cdk-hnb659fds-assets-${envPart(stack.account, 'AccountId')}-${envPart(stack.region, 'Region')}/*]`,
        'The objects of the CDK asset bucket, where the built site is staged.',
      ],
      [`IAM5[Resource::<${bucketId}.Arn>/*]`, 'The objects of the site bucket it deploys.'],
      ['IAM5[Resource::*]', 'cloudfront:CreateInvalidation/GetInvalidation, which have no resource-level permissions in CDK’s grant.'],
      ['L1', "CDK's upload handler runtime is chosen by aws-cdk-lib (Python with the AWS CLI layer) and moves with the library."],
    ];
    for (const [id, reason] of findings) Validations.of(handler).acknowledge({ id: `AwsSolutions::AwsSolutions-${id}`, reason });
  }
}

/**
 * How cdk-nag writes an environment part of a resource name: the literal when the stack is pinned to a
 * region (the CDK CLI sets CDK_DEFAULT_REGION from the AWS config even offline, which also resolves the
 * partition), else the pseudo parameter.
 */
function envPart(value: string, pseudo: 'Partition' | 'AccountId' | 'Region'): string {
  return Token.isUnresolved(value) ? `<AWS::${pseudo}>` : value;
}

import type { CfnCondition } from 'aws-cdk-lib';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { requireRegion } from './region-rule';

/** Requests one IP may send in any 5 minutes before WAF blocks it, unless the stack says otherwise. */
export const DEFAULT_WAF_RATE_LIMIT = 2_000;

/**
 * Rules of AWS's managed groups that inspect the request BODY. A chat request's body is arbitrary user
 * text (code, HTML, shell, file paths, URLs, log lines) and often tens of KB: these rules would block
 * ordinary prompts (CommonRuleSet's SizeRestrictions_BODY alone blocks every body over 8 KB), so they
 * only count (visible in WAF metrics and sampled requests). URI, query, header and cookie rules block.
 * Rule names: AWS WAF Developer Guide, "AWS Managed Rules rule groups list".
 */
const BODY_RULES_COUNTED: Readonly<Record<string, readonly string[]>> = {
  AWSManagedRulesCommonRuleSet: ['SizeRestrictions_BODY', 'EC2MetaDataSSRF_BODY', 'GenericLFI_BODY', 'GenericRFI_BODY', 'CrossSiteScripting_BODY'],
  AWSManagedRulesKnownBadInputsRuleSet: ['JavaDeserializationRCE_BODY', 'Log4JRCE_BODY'],
  AWSManagedRulesAmazonIpReputationList: [],
};

/** Props of {@link ApiWebAcl}. */
export interface ApiWebAclProps {
  /** Requests per 5 minutes per client IP before blocking (WAF minimum 10). Default {@link DEFAULT_WAF_RATE_LIMIT}. */
  readonly rateLimit?: number;
  /**
   * Create the web ACL only where this condition holds (the stack's default: only in us-east-1, the
   * one region a CloudFront web ACL can be made in) instead of refusing other regions with a rule.
   */
  readonly condition?: CfnCondition;
}

/**
 * An AWS WAF web ACL for the distribution (scope CLOUDFRONT, hence created in us-east-1: a
 * CloudFormation rule refuses other regions; elsewhere attach one made there with `wafWebAclArn`).
 * Rules, in order: a per-IP rate limit (blocks with 429), then AWS's managed IP reputation list,
 * common rule set and known-bad-inputs set (body rules counted, see {@link BODY_RULES_COUNTED}).
 * Effective only because the Function URLs answer nothing without CloudFront's origin secret.
 * Cost: $5 per month, $1 per rule, $0.60 per million requests (AWS WAF pricing page): about $9/month
 * for these four rules plus the requests, which the stack's default pays for in us-east-1.
 */
export class ApiWebAcl extends Construct {
  /** The web ACL's ARN, for the distribution's `webAclId`. */
  readonly arn: string;

  constructor(scope: Construct, id: string, props: ApiWebAclProps = {}) {
    super(scope, id);
    const limit = props.rateLimit ?? DEFAULT_WAF_RATE_LIMIT;
    if (!Number.isInteger(limit) || limit < 10) throw new Error('wafRateLimit must be a whole number of requests, at least 10 (AWS WAF minimum)');
    if (props.condition === undefined)
      requireRegion(
        this,
        'WebAclRegion',
        'us-east-1',
        'A WAF web ACL for CloudFront must be created in us-east-1: deploy this stack there, or pass wafWebAclArn of a web ACL created there',
      );
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    const managed = Object.entries(BODY_RULES_COUNTED).map(([name, counted], i): CfnWebACL.RuleProperty => ({
      name,
      priority: i + 1,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name,
          ...(counted.length > 0 ? { ruleActionOverrides: counted.map((rule) => ({ name: rule, actionToUse: { count: {} } })) } : {}),
        },
      },
      visibilityConfig: visibility(name),
    }));
    const acl = new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      description: 'modelmux: per-IP rate limit and AWS managed rules in front of the API',
      visibilityConfig: visibility('modelmux-web-acl'),
      // OpenAI's error body, so an SDK reads a RateLimitError like any other 429 (and retries it). No
      // retry-after: WAF prefixes custom response headers with x-amzn-waf-, which no client reads.
      customResponseBodies: {
        rateLimited: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            error: {
              message: 'Too many requests from your network address. Please slow down and retry.',
              type: 'rate_limit_error',
              param: null,
              code: 'rate_limit_exceeded',
            },
          }),
        },
      },
      rules: [
        {
          name: 'RateLimitPerIp',
          priority: 0,
          action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'rateLimited' } } },
          statement: { rateBasedStatement: { limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: visibility('RateLimitPerIp'),
        },
        ...managed,
      ],
    });
    if (props.condition !== undefined) acl.cfnOptions.condition = props.condition;
    this.arn = acl.attrArn;
  }
}

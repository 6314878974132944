import { Aws, CfnCondition, CfnRule, Fn, Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/**
 * Makes a deployment outside `region` fail at once with `why`: a CloudFormation rule, checked before any
 * resource is created. For resources CloudFront only accepts from us-east-1 (an ACM certificate, a WAF
 * web ACL of scope CLOUDFRONT). A stack pinned to another region fails already at synth.
 * @throws Error when the stack's region is known and is not `region`.
 */
export function requireRegion(scope: Construct, id: string, region: string, why: string): void {
  const stackRegion = Stack.of(scope).region;
  if (!Token.isUnresolved(stackRegion) && stackRegion !== region) throw new Error(`${why} (this stack is in ${stackRegion})`);
  new CfnRule(scope, id, {
    assertions: [{ assert: Fn.conditionEquals(Aws.REGION, region), assertDescription: why }],
  });
}

/**
 * The regions where Lambda has no function URLs ("Function URLs are not supported in the following AWS
 * Regions", https://docs.aws.amazon.com/lambda/latest/dg/lambda-urls.html, read 2026-12-07;
 * docs/aws-regions.md): every endpoint of the stack is a function URL, so it cannot run there.
 */
export const FUNCTION_URL_UNSUPPORTED_REGIONS: readonly string[] = [
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ap-east-2',
  'ca-west-1',
  'eu-south-2',
  'eu-central-2',
  'il-central-1',
  'me-central-1',
];

/**
 * Makes a deployment in a region without Lambda function URLs ({@link FUNCTION_URL_UNSUPPORTED_REGIONS})
 * fail before any resource is created (a CloudFormation rule), with a message naming the fix; a stack
 * pinned to such a region fails already at synth.
 * @throws Error when the stack's region is known and has no function URLs.
 */
export function requireFunctionUrlRegion(scope: Construct, id: string): void {
  const why = `Lambda function URLs, which serve every modelmux endpoint, do not exist in ${FUNCTION_URL_UNSUPPORTED_REGIONS.join(', ')}: deploy in another region (https://docs.aws.amazon.com/lambda/latest/dg/lambda-urls.html)`;
  const stackRegion = Stack.of(scope).region;
  if (!Token.isUnresolved(stackRegion) && FUNCTION_URL_UNSUPPORTED_REGIONS.includes(stackRegion)) throw new Error(`${why} (this stack is in ${stackRegion})`);
  new CfnRule(scope, id, {
    assertions: [{ assert: Fn.conditionNot(Fn.conditionContains([...FUNCTION_URL_UNSUPPORTED_REGIONS], Aws.REGION)), assertDescription: why }],
  });
}

/** Id of the stack's one "deployed in us-east-1" condition (see {@link inUsEast1}). */
const IN_US_EAST_1 = 'InUsEast1';

/**
 * The stack's one CloudFormation condition "this stack is deployed in us-east-1", created on first use
 * and shared (CloudFront's metrics and its web ACLs exist only there; one condition, not one per user:
 * template validation flags equal conditions as W9053).
 */
export function inUsEast1(scope: Construct): CfnCondition {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild(IN_US_EAST_1);
  if (existing instanceof CfnCondition) return existing;
  return new CfnCondition(stack, IN_US_EAST_1, { expression: Fn.conditionEquals(Aws.REGION, 'us-east-1') });
}

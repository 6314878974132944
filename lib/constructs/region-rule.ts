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

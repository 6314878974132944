import { Aws, CfnRule, Fn, Stack, Token } from 'aws-cdk-lib';
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

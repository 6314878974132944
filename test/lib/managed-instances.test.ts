import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { MI_DEFAULTS, MI_MEMORY_GIB_PER_VCPU, MI_MIN_MEMORY_MB } from '../../lib/constructs/managed-instances';
import { allIamStatements, type CfnResource, resourcesOfType } from './template-helpers';
import { synthTemplate as synth } from './support/synth';

/**
 * `-c compute=managed-instances` (docs/managed-instances.md): the chat and embeddings
 * functions on a Lambda Managed Instances capacity provider, wired to its VPC and operator role; and
 * without the option, none of it. One synth per context for the whole stack tier (support/synth.ts).
 */
vi.setConfig({ testTimeout: 180_000 });

const MI = { compute: 'managed-instances' };
const EXISTING = {
  ...MI,
  vpcId: 'vpc-0123456789abcdef0',
  vpcSubnetIds: 'subnet-0aaaaaaaaaaaaaaa1,subnet-0bbbbbbbbbbbbbbb2',
  managedInstancesMinEnvironments: '5',
  managedInstancesMaxEnvironments: 40,
  managedInstancesMaxVCpus: '64',
  managedInstancesMaxConcurrency: '160',
};

/** The functions of the template by logical id prefix: Chat, Embeddings, Account, SettlePath. */
function functionsNamed(template: Template, prefix: string): CfnResource[] {
  return Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
    .filter(([id]) => id.startsWith(prefix))
    .map(([, fn]) => fn);
}

function onlyEntry(template: Template, type: string): [string, CfnResource] {
  const entries = Object.entries(resourcesOfType(template, type));
  expect(entries, type).toHaveLength(1);
  return entries[0] as [string, CfnResource];
}

/** The `live` alias of a request function and the version it points at. */
function liveVersion(template: Template, prefix: 'Chat' | 'Embeddings'): CfnResource {
  const alias = Object.entries(resourcesOfType(template, 'AWS::Lambda::Alias')).find(([id]) => id.startsWith(prefix))?.[1];
  const versionId = (alias?.Properties?.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return resourcesOfType(template, 'AWS::Lambda::Version')[versionId] as CfnResource;
}

describe('compute=managed-instances', () => {
  it('puts chat and embeddings (and nothing else) on one arm64 capacity provider, 2 GiB per vCPU, 2,048 MB, numbered versions only', () => {
    const template = synth(MI);
    const [providerId] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
    for (const prefix of ['Chat', 'Embeddings']) {
      const [fn] = functionsNamed(template, prefix);
      expect(fn?.Properties).toMatchObject({
        Architectures: ['arm64'],
        MemorySize: MI_MIN_MEMORY_MB,
        PublishToLatestPublished: false,
        CapacityProviderConfig: {
          LambdaManagedInstancesCapacityProviderConfig: {
            CapacityProviderArn: { 'Fn::GetAtt': [providerId, 'Arn'] },
            ExecutionEnvironmentMemoryGiBPerVCpu: MI_MEMORY_GIB_PER_VCPU,
            PerExecutionEnvironmentMaxConcurrency: MI_DEFAULTS.maxConcurrency,
          },
        },
      });
      expect(fn?.Properties?.ReservedConcurrentExecutions).toBeUndefined();
      // The version the Function URL's alias serves keeps the minimum of environments running.
      expect(liveVersion(template, prefix as 'Chat').Properties?.FunctionScalingConfig).toEqual({ MinExecutionEnvironments: MI_DEFAULTS.minEnvironments });
    }
    for (const prefix of ['Account', 'SettlePath'])
      for (const fn of functionsNamed(template, prefix)) expect(fn.Properties?.CapacityProviderConfig).toBeUndefined();
    // The streaming chat URL and the buffered embeddings URL still serve the `live` alias.
    const urls = Object.values(resourcesOfType(template, 'AWS::Lambda::Url'))
      .map((u) => u.Properties?.InvokeMode)
      .sort();
    expect(urls).toEqual(['BUFFERED', 'BUFFERED', 'RESPONSE_STREAM']);
  });

  it('runs the instances in private subnets of a new 3-zone VPC: one NAT gateway, a DynamoDB gateway endpoint on their routes, HTTPS out only, nothing in', () => {
    const template = synth(MI);
    const [, provider] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
    expect(provider.Properties).toMatchObject({
      InstanceRequirements: { Architectures: ['arm64'] },
      CapacityProviderScalingConfig: { MaxVCpuCount: MI_DEFAULTS.maxVCpus },
    });
    const vpcConfig = provider.Properties?.VpcConfig as { SubnetIds: Array<{ Ref: string }>; SecurityGroupIds: Array<{ 'Fn::GetAtt': [string, string] }> };
    const subnets = resourcesOfType(template, 'AWS::EC2::Subnet');
    expect(vpcConfig.SubnetIds).toHaveLength(3);
    for (const { Ref } of vpcConfig.SubnetIds) expect(subnets[Ref]?.Properties?.MapPublicIpOnLaunch).toBe(false);
    expect(new Set(vpcConfig.SubnetIds.map(({ Ref }) => JSON.stringify(subnets[Ref]?.Properties?.AvailabilityZone))).size).toBe(3);
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    // Every instance subnet routes 0.0.0.0/0 to the NAT, and DynamoDB through the gateway endpoint.
    const routes = Object.values(resourcesOfType(template, 'AWS::EC2::Route')).filter((r) => r.Properties?.NatGatewayId !== undefined);
    expect(routes).toHaveLength(3);
    const [, endpoint] = onlyEntry(template, 'AWS::EC2::VPCEndpoint');
    expect(endpoint.Properties).toMatchObject({
      VpcEndpointType: 'Gateway',
      ServiceName: { 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.dynamodb']] },
    });
    const endpointTables = JSON.stringify(endpoint.Properties?.RouteTableIds);
    for (const route of routes) expect(endpointTables).toContain((route.Properties?.RouteTableId as { Ref: string }).Ref);
    const [sgId, sg] = onlyEntry(template, 'AWS::EC2::SecurityGroup');
    expect(vpcConfig.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [sgId, 'GroupId'] }]);
    expect(sg.Properties?.SecurityGroupIngress).toBeUndefined();
    expect(sg.Properties?.SecurityGroupEgress).toEqual([expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 })]);
    template.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
  });

  it("gives Lambda an operator role for this account's capacity providers only, with AWS's operator policy and nothing more", () => {
    const template = synth(MI);
    const [, provider] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
    const roleId = (provider.Properties?.PermissionsConfig as { CapacityProviderOperatorRoleArn: { 'Fn::GetAtt': [string, string] } })
      .CapacityProviderOperatorRoleArn['Fn::GetAtt'][0];
    const role = resourcesOfType(template, 'AWS::IAM::Role')[roleId];
    expect(role?.Properties?.ManagedPolicyArns).toEqual([
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/AWSLambdaManagedEC2ResourceOperator']] },
    ]);
    const [trust] = (role?.Properties?.AssumeRolePolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
    expect(trust).toMatchObject({
      Action: 'sts:AssumeRole',
      Principal: { Service: 'lambda.amazonaws.com' },
      Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
    });
    expect(JSON.stringify(trust)).toContain(':capacity-provider:*');
    expect(allIamStatements(template).filter(({ owner, statement }) => owner.startsWith(roleId) && statement.Action !== 'sts:AssumeRole')).toEqual([]);
  });

  it("uses an existing VPC's subnets (no VPC, NAT or endpoint created) and passes the sizing options through", () => {
    const template = synth(EXISTING);
    for (const type of ['AWS::EC2::VPC', 'AWS::EC2::NatGateway', 'AWS::EC2::VPCEndpoint']) template.resourceCountIs(type, 0);
    const [, provider] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
    expect(provider.Properties).toMatchObject({
      VpcConfig: { SubnetIds: EXISTING.vpcSubnetIds.split(',') },
      CapacityProviderScalingConfig: { MaxVCpuCount: 64 },
    });
    expect(onlyEntry(template, 'AWS::EC2::SecurityGroup')[1].Properties?.VpcId).toBe(EXISTING.vpcId);
    for (const prefix of ['Chat', 'Embeddings'] as const) {
      const config = functionsNamed(template, prefix)[0]?.Properties?.CapacityProviderConfig as {
        LambdaManagedInstancesCapacityProviderConfig: Record<string, unknown>;
      };
      expect(config.LambdaManagedInstancesCapacityProviderConfig.PerExecutionEnvironmentMaxConcurrency).toBe(160);
      expect(liveVersion(template, prefix).Properties?.FunctionScalingConfig).toEqual({ MinExecutionEnvironments: 5, MaxExecutionEnvironments: 40 });
    }
  });

  it('refuses options that do not go with it, naming the context key', () => {
    expect(() => synth({ compute: 'ec2' })).toThrow(/context compute must be lambda or managed-instances/);
    expect(() => synth({ vpcId: 'vpc-0123456789abcdef0', vpcSubnetIds: 'subnet-0aaaaaaaaaaaaaaa1' })).toThrow(/need compute=managed-instances/);
    expect(() => synth({ managedInstancesMinEnvironments: '3' })).toThrow(/need compute=managed-instances/);
    expect(() => synth({ ...MI, vpcId: 'vpc-0123456789abcdef0' })).toThrow(/vpcId and vpcSubnetIds go together/);
    expect(() => synth({ ...MI, vpcId: 'my-vpc', vpcSubnetIds: 'subnet-0aaaaaaaaaaaaaaa1' })).toThrow(/context vpcId must be a VPC id/);
    expect(() => synth({ ...MI, chatMemoryMb: '1024' })).toThrow(/at least 2048 with compute=managed-instances/);
    expect(() => synth({ ...MI, chatReservedConcurrency: '10' })).toThrow(/do not apply with compute=managed-instances/);
    expect(() => synth({ ...MI, tracing: 'true' })).toThrow(/context tracing is not supported with compute=managed-instances/);
    expect(() => synth({ ...MI, managedInstancesMaxConcurrency: '2000' })).toThrow(/managedInstancesMaxConcurrency must be from 1 to 1600/);
    expect(() => synth({ ...MI, managedInstancesMinEnvironments: '6', managedInstancesMaxEnvironments: '4' })).toThrow(
      /MaxEnvironments must be at least managedInstancesMinEnvironments/,
    );
  });
});

describe('default compute (per-invocation Lambda)', () => {
  it('has no capacity provider, VPC, NAT or endpoint, and no function with capacity-provider or version-scaling settings', () => {
    const template = synth({ cloudfront: 'false' }); // shared with stack-options.test.ts; the default (bundled) synth is stack.test.ts's
    for (const type of ['AWS::Lambda::CapacityProvider', 'AWS::EC2::VPC', 'AWS::EC2::NatGateway', 'AWS::EC2::VPCEndpoint', 'AWS::EC2::SecurityGroup'])
      template.resourceCountIs(type, 0);
    for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties?.CapacityProviderConfig).toBeUndefined();
      expect(fn.Properties?.PublishToLatestPublished).toBeUndefined();
    }
    for (const version of Object.values(resourcesOfType(template, 'AWS::Lambda::Version'))) expect(version.Properties?.FunctionScalingConfig).toBeUndefined();
    expect(functionsNamed(template, 'Chat')[0]?.Properties?.MemorySize).toBeLessThan(MI_MIN_MEMORY_MB);
  });
});

import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { maxVCpusFor, MI_DEFAULTS, MI_MEMORY_GIB_PER_VCPU, MI_MIN_MEMORY_MB } from '../../lib/constructs/managed-instances';
import { ModelmuxStack } from '../../lib/modelmux-stack';
import { stackPropsFromContext } from '../../lib/stack-context';
import { allIamStatements, type CfnResource, logicalIdByPath, resourcesOfType, testApp } from './template-helpers';
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
  it('attaches no shutdown extension: environments never freeze there, and Node serves them from worker threads', () => {
    const template = synth(MI);
    expect(Object.keys(resourcesOfType(template, 'AWS::Lambda::LayerVersion')).filter((id) => id.startsWith('ShutdownExtension'))).toEqual([]);
    for (const prefix of ['Chat', 'Embeddings']) for (const fn of functionsNamed(template, prefix)) expect(fn.Properties?.Layers).toBeUndefined();
  });

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

  it('runs the instances in private subnets of a new 3-zone VPC: a NAT gateway per zone, a DynamoDB gateway endpoint on their routes, HTTPS out only, nothing in', () => {
    const template = synth(MI);
    const [, provider] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
    expect(provider.Properties).toMatchObject({
      InstanceRequirements: { Architectures: ['arm64'] },
    });
    const vpcConfig = provider.Properties?.VpcConfig as { SubnetIds: Array<{ Ref: string }>; SecurityGroupIds: Array<{ 'Fn::GetAtt': [string, string] }> };
    const subnets = resourcesOfType(template, 'AWS::EC2::Subnet');
    expect(vpcConfig.SubnetIds).toHaveLength(3);
    for (const { Ref } of vpcConfig.SubnetIds) expect(subnets[Ref]?.Properties?.MapPublicIpOnLaunch).toBe(false);
    expect(new Set(vpcConfig.SubnetIds.map(({ Ref }) => JSON.stringify(subnets[Ref]?.Properties?.AvailabilityZone))).size).toBe(3);
    template.resourceCountIs('AWS::EC2::NatGateway', 3);
    // Every instance subnet routes 0.0.0.0/0 to its own zone's NAT, and DynamoDB through the gateway endpoint.
    const routes = Object.values(resourcesOfType(template, 'AWS::EC2::Route')).filter((r) => r.Properties?.NatGatewayId !== undefined);
    expect(routes).toHaveLength(3);
    expect(new Set(routes.map((r) => JSON.stringify(r.Properties?.NatGatewayId))).size).toBe(3);
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

/** The stack synthesised with a deploy environment (the CLI's CDK_DEFAULT_ACCOUNT/REGION), unbundled; not cached. */
function synthWithEnv(env: { account?: string; region?: string }, context: Record<string, unknown> = MI): Template {
  const app = testApp(context, { bundle: false });
  const stack = new ModelmuxStack(app, 'Modelmux', { env, ...stackPropsFromContext(app.node) });
  return Template.fromStack(stack);
}

/** The Availability Zones of the capacity provider's subnets, as the template names them. */
function providerZones(template: Template): string[] {
  const [, provider] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
  const subnets = resourcesOfType(template, 'AWS::EC2::Subnet');
  return (provider.Properties?.VpcConfig as { SubnetIds: Array<{ Ref: string }> }).SubnetIds.map(({ Ref }) =>
    JSON.stringify(subnets[Ref]?.Properties?.AvailabilityZone),
  );
}

describe('compute=managed-instances: zones, NAT gateways, vCPU ceiling, capacity alarms', () => {
  it('spans 3 zones whether the synth knows no environment, only the region (offline CLI), or both', () => {
    expect(new Set(providerZones(synth(MI))).size).toBe(3);
    // Region only: Stack.availabilityZones would give two deploy-time zones; the stack names three.
    const regionOnly = synthWithEnv({ region: 'us-east-1' });
    expect(new Set(providerZones(regionOnly)).size).toBe(3);
    regionOnly.resourceCountIs('AWS::EC2::NatGateway', 3);
    // Account and region: the zones come from the availability-zones context lookup (its 3 dummies offline).
    expect(new Set(providerZones(synthWithEnv({ account: '123456789012', region: 'us-east-1' }))).size).toBe(3);
  });

  it('takes fewer NAT gateways on -c managedInstancesNatGateways (zones without one route through another), only for its own VPC', () => {
    const template = synth({ ...MI, managedInstancesNatGateways: '1' });
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    const routes = Object.values(resourcesOfType(template, 'AWS::EC2::Route')).filter((r) => r.Properties?.NatGatewayId !== undefined);
    expect(routes).toHaveLength(3);
    expect(() => synth({ ...MI, managedInstancesNatGateways: '4' })).toThrow(/managedInstancesNatGateways must be from 1 to 3/);
    expect(() => synth({ ...EXISTING, managedInstancesNatGateways: '2' })).toThrow(/managedInstancesNatGateways applies to the stack's own VPC/);
    expect(() => synth({ managedInstancesNatGateways: '2' })).toThrow(/need compute=managed-instances/);
  });

  it('sizes MaxVCpuCount to 3 × the minimum footprint (environments × vCPUs each × 2 instance vCPUs per environment vCPU)', () => {
    const maxVCpus = (template: Template) =>
      (onlyEntry(template, 'AWS::Lambda::CapacityProvider')[1].Properties?.CapacityProviderScalingConfig as { MaxVCpuCount: number }).MaxVCpuCount;
    // Default: 2 functions × 3 environments × 1 vCPU (2,048 MB at 2 GiB a vCPU) × 2 = 12; × 3 = 36.
    expect(maxVCpus(synth(MI))).toBe(3 * (3 * 1 * 2 + 3 * 1 * 2));
    expect(maxVCpus(synth(MI))).toBe(
      maxVCpusFor([
        { minEnvironments: 3, memoryMb: 2048 },
        { minEnvironments: 3, memoryMb: 2048 },
      ]),
    );
    // 4 environments each, chat at 4,096 MB (2 vCPUs): 4 × 2 × 2 + 4 × 1 × 2 = 24; × 3 = 72.
    const sized = { ...MI, managedInstancesMinEnvironments: '4', chatMemoryMb: '4096' };
    expect(maxVCpus(synth(sized))).toBe(3 * (4 * 2 * 2 + 4 * 1 * 2));
    expect(maxVCpus(synth(sized))).toBe(
      maxVCpusFor([
        { minEnvironments: 4, memoryMb: 4096 },
        { minEnvironments: 4, memoryMb: 2048 },
      ]),
    );
    // Below a rollout's floor (2 × 12 = 24) the override is refused; the ceiling never goes under 12.
    expect(() => synth({ ...MI, managedInstancesMaxVCpus: '20' })).toThrow(/below a rollout's floor of 24 vCPUs/);
    expect(maxVCpusFor([{ minEnvironments: 1, memoryMb: 2048 }])).toBe(12);
  });

  it("alarms on the capacity provider's CPU and allocated vCPUs (AWS/Lambda, over its instance types), to the alarm topic", () => {
    const template = synth(MI);
    const [providerId] = onlyEntry(template, 'AWS::Lambda::CapacityProvider');
    const topicId = logicalIdByPath(template, 'AWS::SNS::Topic', '/Monitoring/');
    const alarms = Object.fromEntries(
      Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((a) => [String(a.Properties?.AlarmName), a.Properties ?? {}]),
    );
    const expected = { 'Modelmux-CapacityCpu': ['CPUUtilization', 80], 'Modelmux-CapacityVCpus': ['vCPUAllocated', Math.floor((0.8 * 36) / 2)] } as const;
    for (const [name, [metric, threshold]] of Object.entries(expected)) {
      const alarm = alarms[name];
      expect(alarm, name).toBeDefined();
      const query = JSON.stringify(alarm?.Metrics);
      expect(query).toContain(`(${metric}) FROM SCHEMA(\\"AWS/Lambda\\", CapacityProviderName, InstanceType) WHERE CapacityProviderName = '`);
      expect(query).toContain(`{"Ref":"${providerId}"}`);
      expect(alarm?.Threshold, name).toBe(threshold);
      expect(alarm?.AlarmActions, name).toEqual([{ Ref: topicId }]);
    }
    // Above the rollout's floor of allocated vCPUs (2 × 6), so a rollout alone does not raise it.
    expect(expected['Modelmux-CapacityVCpus'][1]).toBeGreaterThan(12);
    const noProvider = Object.values(resourcesOfType(synth({ cloudfront: 'false' }), 'AWS::CloudWatch::Alarm')).map((a) => String(a.Properties?.AlarmName));
    expect(noProvider.filter((n) => n.startsWith('Modelmux-Capacity'))).toEqual([]);
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

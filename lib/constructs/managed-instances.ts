import { Annotations, Fn, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  type ISubnet,
  type IVpc,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, CapacityProvider, type CfnFunction, type CfnVersion } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { GatewayFunction } from './gateway-function';

/**
 * Memory of an execution environment on Lambda Managed Instances, MB: LMI's minimum (docs/managed-instances.md §2),
 * and with {@link MI_MEMORY_GIB_PER_VCPU} one vCPU per environment.
 */
export const MI_MIN_MEMORY_MB = 2048;
/** `ExecutionEnvironmentMemoryGiBPerVCpu`: 2 GiB a vCPU, the API's minimum: our work is CPU, not memory (docs/managed-instances.md §1). */
export const MI_MEMORY_GIB_PER_VCPU = 2;
/** Defaults of the `-c managedInstances*` options (docs/managed-instances.md §1, "Sizing the stack uses"); `MaxVCpuCount` is computed ({@link maxVCpusFor}). */
export const MI_DEFAULTS = { minEnvironments: 3, maxConcurrency: 64 } as const;
/** Availability Zones of the stack's own VPC: LMI's default minimum of 3 environments is one per zone (docs/managed-instances.md §2, Versions). */
export const MI_ZONES = 3;
/**
 * Instance vCPUs one environment vCPU occupies, at worst: Lambda keeps 1 vCPU and 1 GiB of every instance
 * for itself (docs/managed-instances.md §1, "The monthly floor"), so a 1-vCPU environment fills a 2-vCPU
 * instance, a 2-vCPU one a 4-vCPU instance (3 usable). `MaxVCpuCount` counts instance vCPUs.
 */
export const MI_INSTANCE_VCPUS_PER_ENVIRONMENT_VCPU = 2;
/**
 * `MaxVCpuCount` over the minimum footprint: a rollout keeps both versions' minimums running (2×), and
 * the third share is room to scale on traffic meanwhile (docs/managed-instances.md §1, "Sizing the stack uses").
 */
export const MI_VCPU_HEADROOM = 3;
/** The smallest `MaxVCpuCount` the capacity provider takes, vCPUs (CDK's `CapacityProvider` validation: 12 to 15,000). */
export const MI_MIN_MAX_VCPUS = 12;

/** One function's share of the capacity provider: its published version's minimum environments and their memory, MB. */
export interface EnvironmentSizing {
  readonly minEnvironments: number;
  readonly memoryMb: number;
}

/** vCPUs of one execution environment of `memoryMb` at {@link MI_MEMORY_GIB_PER_VCPU} (rounded up: Lambda allocates whole vCPUs). */
export function environmentVCpus(memoryMb: number): number {
  return Math.ceil(memoryMb / 1024 / MI_MEMORY_GIB_PER_VCPU);
}

/** The minimum footprint in instance vCPUs: every function's minimum environments × their vCPUs × {@link MI_INSTANCE_VCPUS_PER_ENVIRONMENT_VCPU}. */
export function minimumFootprintVCpus(sizings: readonly EnvironmentSizing[]): number {
  return sizings.reduce((sum, s) => sum + s.minEnvironments * environmentVCpus(s.memoryMb) * MI_INSTANCE_VCPUS_PER_ENVIRONMENT_VCPU, 0);
}

/** The default `MaxVCpuCount`: {@link MI_VCPU_HEADROOM} × the minimum footprint, at least {@link MI_MIN_MAX_VCPUS}. */
export function maxVCpusFor(sizings: readonly EnvironmentSizing[]): number {
  return Math.max(MI_MIN_MAX_VCPUS, MI_VCPU_HEADROOM * minimumFootprintVCpus(sizings));
}

/** Where the capacity provider's instances run: an existing VPC's private subnets (with a route to the internet). */
export interface ExistingVpc {
  readonly vpcId: string;
  /** Private subnets with egress to the internet (NAT), 1–16, ideally one per Availability Zone. */
  readonly subnetIds: readonly string[];
}

/** The `compute=managed-instances` options (lib/stack-context.ts reads them from `-c`). */
export interface ManagedInstancesOptions {
  /** An existing VPC instead of a new one (its NAT and endpoints are the operator's). */
  readonly vpc?: ExistingVpc | undefined;
  /** Execution environments each function's published version keeps running (`MinExecutionEnvironments`); default 3. */
  readonly minEnvironments?: number | undefined;
  /** At most this many per function version (`MaxExecutionEnvironments`); default: bounded by {@link maxVCpus} only. */
  readonly maxEnvironments?: number | undefined;
  /**
   * The capacity provider's vCPU ceiling across both functions (`MaxVCpuCount`), a spend cap; default
   * {@link maxVCpusFor} of the functions' minimums. Refused below a rollout's floor (2 × the minimum footprint).
   */
  readonly maxVCpus?: number | undefined;
  /**
   * NAT gateways of the stack's own VPC, 1 to {@link MI_ZONES}; default one per zone, so an Availability
   * Zone's outage leaves the other zones' environments their route to the providers. Each costs
   * $0.045 an hour ($32.85 a month) plus $0.045 per GB (docs/managed-instances.md §1); with fewer, the
   * zones without one route through another zone's (cross-zone data too) and lose egress with it.
   */
  readonly natGateways?: number | undefined;
  /** Concurrent invocations one execution environment takes (`PerExecutionEnvironmentMaxConcurrency`, 1–1,600); default 64. */
  readonly maxConcurrency?: number | undefined;
}

/** Props of {@link ManagedInstances}. */
export interface ManagedInstancesProps extends ManagedInstancesOptions {
  /** The request functions moved onto the capacity provider (chat, embeddings). Each has a `live` alias on a published version. */
  readonly functions: readonly GatewayFunction[];
  /** Days the capacity provider's system logs are kept. */
  readonly logRetentionDays: number;
}

/**
 * Lambda Managed Instances for the request functions (docs/managed-instances.md): a
 * capacity provider on Graviton (arm64, like the functions) in a VPC, and each function's
 * capacity-provider configuration and published-version scaling. One execution environment serves up
 * to `maxConcurrency` invocations at once through one module instance, so the per-environment state
 * (credit leases, breakers, caches) is shared by them: test/integration/managed-instances-concurrency.test.ts.
 *
 * Network: a new VPC (3 Availability Zones, public subnets with a NAT gateway in each zone by default,
 * private subnets for the instances) unless an existing one is given. DynamoDB, the hot path, goes through a gateway endpoint
 * (free, no NAT per-GB charge); the upstream providers, SQS (only the durable settle fallback),
 * Secrets Manager (INIT only), KMS (BYOK) and Lambda's own control traffic go through the NAT: interface
 * endpoints would cost $0.01 an hour per AZ each, more than the NAT's share of this traffic. The
 * security group admits nothing in and lets only HTTPS (TCP 443) out.
 *
 * Operator role: assumed by Lambda for this account's capacity providers only, with AWS's managed
 * policy for it (AWSLambdaManagedEC2ResourceOperator: the EC2 instance and network-interface actions
 * Lambda needs, scoped by AWS as the service changes).
 */
export class ManagedInstances extends Construct {
  /** The capacity provider. */
  readonly capacityProvider: CapacityProvider;
  /** Its `MaxVCpuCount`, vCPUs. */
  readonly maxVCpus: number;
  /** The functions' minimum footprint, instance vCPUs ({@link minimumFootprintVCpus}). */
  readonly footprintVCpus: number;
  /** The instances' security group. */
  readonly securityGroup: SecurityGroup;

  constructor(scope: Construct, id: string, props: ManagedInstancesProps) {
    super(scope, id);
    if (props.vpc !== undefined && props.natGateways !== undefined)
      throw new Error("context managedInstancesNatGateways applies to the stack's own VPC, not vpcId");
    const natGateways = props.natGateways ?? MI_ZONES;
    if (!Number.isInteger(natGateways) || natGateways < 1 || natGateways > MI_ZONES)
      throw new Error(`context managedInstancesNatGateways must be from 1 to ${MI_ZONES}`);
    const minEnvironments = props.minEnvironments ?? MI_DEFAULTS.minEnvironments;
    const sizings = props.functions.map((g) => ({ minEnvironments, memoryMb: (g.function.node.defaultChild as CfnFunction).memorySize ?? MI_MIN_MEMORY_MB }));
    this.footprintVCpus = minimumFootprintVCpus(sizings);
    this.maxVCpus = props.maxVCpus ?? maxVCpusFor(sizings);
    if (this.maxVCpus < 2 * this.footprintVCpus)
      throw new Error(
        `context managedInstancesMaxVCpus (${this.maxVCpus}) is below a rollout's floor of ${2 * this.footprintVCpus} vCPUs (both versions' minimum environments)`,
      );
    const { vpc, subnets } = props.vpc === undefined ? this.newVpc(natGateways) : this.existingVpc(props.vpc);
    this.securityGroup = new SecurityGroup(this, 'Instances', {
      vpc,
      description: 'modelmux Lambda Managed Instances: no inbound, HTTPS out',
      allowAllOutbound: false,
    });
    this.securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS to AWS APIs (DynamoDB via its gateway endpoint) and the upstream providers');

    const stack = Stack.of(this);
    const operatorRole = new Role(this, 'OperatorRole', {
      description: 'Lambda manages the EC2 instances of the modelmux capacity provider',
      assumedBy: new ServicePrincipal('lambda.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:lambda:${stack.region}:${stack.account}:capacity-provider:*` },
      }),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AWSLambdaManagedEC2ResourceOperator')],
    });
    Validations.of(operatorRole).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AWSLambdaManagedEC2ResourceOperator]',
      reason:
        'The operator role of a Lambda capacity provider: AWS documents this managed policy for it (Lambda docs, lambda-managed-instances-operator-role) and keeps it in step with what Lambda does to the instances.',
    });
    const systemLogs = new LogGroup(this, 'SystemLogs', { retention: props.logRetentionDays as RetentionDays, removalPolicy: RemovalPolicy.DESTROY });
    this.capacityProvider = new CapacityProvider(this, 'CapacityProvider', {
      subnets,
      securityGroups: [this.securityGroup],
      operatorRole,
      architectures: [Architecture.ARM_64],
      maxVCpuCount: this.maxVCpus,
      logGroup: systemLogs,
    });
    for (const gateway of props.functions) this.attach(gateway, props);
  }

  /** Moves one function onto the capacity provider; its published version (the `live` alias's) keeps the minimum running. */
  private attach(gateway: GatewayFunction, props: ManagedInstancesProps): void {
    this.capacityProvider.addFunction(gateway.function, {
      perExecutionEnvironmentMaxConcurrency: props.maxConcurrency ?? MI_DEFAULTS.maxConcurrency,
      executionEnvironmentMemoryGiBPerVCpu: MI_MEMORY_GIB_PER_VCPU,
      // Only the numbered versions CodeDeploy shifts the `live` alias between: a `$LATEST.PUBLISHED`
      // version beside them would keep its own minimum of environments running, doubling the floor.
      publishToLatestPublished: false,
    });
    const version = gateway.function.currentVersion.node.defaultChild as CfnVersion;
    version.functionScalingConfig = {
      minExecutionEnvironments: props.minEnvironments ?? MI_DEFAULTS.minEnvironments,
      maxExecutionEnvironments: props.maxEnvironments,
    };
  }

  /** A VPC over {@link MI_ZONES} Availability Zones: public subnets (`natGateways` NAT gateways), private subnets for the instances, a DynamoDB gateway endpoint, flow logs of rejected traffic. */
  private newVpc(natGateways: number): { vpc: IVpc; subnets: ISubnet[] } {
    const stack = Stack.of(this);
    // `maxAzs` takes Stack.availabilityZones, which for a stack without both account and region (the
    // offline synth, or a CLI that knows the region but not the account) is only TWO deploy-time zones;
    // only with both known does it look the zones up (`availability-zones:account=…:region=…` context,
    // cached in cdk.context.json). So without both, name three zones ourselves: the region's first three
    // at deploy time (Fn::GetAZs); a region with fewer than three fails the deploy rather than run on two.
    const envKnown = !Token.isUnresolved(stack.account) && !Token.isUnresolved(stack.region);
    const zones = envKnown ? { maxAzs: MI_ZONES } : { availabilityZones: [...Array(MI_ZONES).keys()].map((i) => Fn.select(i, Fn.getAzs())) };
    const vpc = new Vpc(this, 'Vpc', {
      ...zones,
      natGateways,
      subnetConfiguration: [
        { name: 'Public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'Instances', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      gatewayEndpoints: { DynamoDb: { service: GatewayVpcEndpointAwsService.DYNAMODB } },
      restrictDefaultSecurityGroup: false,
    });
    vpc.addFlowLog('Rejected', {
      destination: FlowLogDestination.toCloudWatchLogs(new LogGroup(this, 'FlowLogs', { retention: 30, removalPolicy: RemovalPolicy.DESTROY })),
      trafficType: FlowLogTrafficType.REJECT,
    });
    return { vpc, subnets: vpc.privateSubnets };
  }

  /** The given VPC and subnets (no lookup: synth stays offline). */
  private existingVpc(existing: ExistingVpc): { vpc: IVpc; subnets: ISubnet[] } {
    // Only the security group uses it (its VpcId); the subnets are given, so the zones are never read.
    const vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: existing.vpcId, availabilityZones: Stack.of(this).availabilityZones });
    const subnets = existing.subnetIds.map((subnetId, i) => Subnet.fromSubnetId(this, `Subnet${i}`, subnetId));
    for (const subnet of subnets)
      Annotations.of(subnet).acknowledgeWarning(
        '@aws-cdk/aws-ec2:noSubnetRouteTableId',
        "Only the capacity provider reads these subnets (their ids); their routes are the operator's",
      );
    return { vpc, subnets };
  }
}

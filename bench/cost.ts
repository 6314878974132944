/**
 * The AWS cost of 1M requests of a stated mix, from measured figures: the gateway's CPU per request,
 * the DynamoDB capacity units and AWS calls it issued, the bytes it logged and sent. List prices are
 * us-east-1, each with its source and the date it has applied since.
 */

import type { Kind } from './measure';

/** A list price: USD per unit, where it is published, since when it applies. */
export interface Price {
  usd: number;
  unit: string;
  source: string;
  since: string;
}

/** us-east-1 list prices, pay-as-you-go, no free tier (the free tiers are per account, not per request). */
export const PRICES = {
  lambdaGbSecondArm: {
    usd: 0.0000133334,
    unit: 'GB-s (arm64, first 7.5 billion GB-s a month)',
    source: 'https://aws.amazon.com/lambda/pricing/',
    since: '2021-09-29 (Graviton2 launch)',
  },
  lambdaGbSecondX86: {
    usd: 0.0000166667,
    unit: 'GB-s (x86_64, first 6 billion GB-s a month)',
    source: 'https://aws.amazon.com/lambda/pricing/',
    since: '2020-12-01 (1 ms billing)',
  },
  lambdaRequest: { usd: 0.2 / 1e6, unit: 'request', source: 'https://aws.amazon.com/lambda/pricing/', since: '2014 (launch)' },
  dynamoWrite: {
    usd: 0.625 / 1e6,
    unit: 'write request unit (on-demand)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    since: '2024-11-01 (on-demand price cut)',
  },
  dynamoRead: { usd: 0.125 / 1e6, unit: 'read request unit (on-demand)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/', since: '2024-11-01' },
  dynamoStorage: {
    usd: 0.25 + 0.2,
    unit: 'GB-month stored (0.25) + point-in-time recovery (0.20)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    since: '2024-11-01',
  },
  cloudfrontRequest: {
    usd: 0.01 / 1e4,
    unit: 'HTTPS request (United States)',
    source: 'https://aws.amazon.com/cloudfront/pricing/ (pay-as-you-go)',
    since: 'as listed 2025-11',
  },
  cloudfrontOut: {
    usd: 0.085,
    unit: 'GB to the internet (United States, first 10 TB)',
    source: 'https://aws.amazon.com/cloudfront/pricing/ (pay-as-you-go)',
    since: 'as listed 2025-11',
  },
  cloudfrontToOrigin: {
    usd: 0.02,
    unit: 'GB to the origin (request bodies, United States)',
    source: 'https://aws.amazon.com/cloudfront/pricing/',
    since: 'as listed 2025-11',
  },
  logsIngest: {
    usd: 0.5,
    unit: 'GB of Lambda logs ingested (Standard class, first tier)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/ (Lambda logs tiers)',
    since: '2025-05-01',
  },
  wafRequest: { usd: 0.6 / 1e6, unit: 'request inspected by a web ACL', source: 'https://aws.amazon.com/waf/pricing/', since: 'as listed 2025-11' },
  sqsRequest: { usd: 0.4 / 1e6, unit: 'request (standard queue, 64 KB chunks)', source: 'https://aws.amazon.com/sqs/pricing/', since: 'as listed 2025-11' },
  ec2C7gLarge: {
    usd: 0.0725,
    unit: 'c7g.large instance-hour (2 vCPU, 4 GiB; Linux on-demand)',
    source: 'https://aws.amazon.com/ec2/pricing/on-demand/',
    since: 'as listed 2026',
  },
  natHour: { usd: 0.045, unit: 'NAT gateway hour', source: 'https://aws.amazon.com/vpc/pricing/ (NAT Gateway)', since: 'as listed 2026' },
  natGb: { usd: 0.045, unit: 'GB through a NAT gateway', source: 'https://aws.amazon.com/vpc/pricing/ (NAT Gateway)', since: 'as listed 2026' },
  managedInstancesFee: {
    usd: 0.15,
    unit: 'Lambda Managed Instances management fee, share of the EC2 on-demand price',
    source: 'https://aws.amazon.com/lambda/pricing/ (Lambda Managed Instances)',
    since: '2025-11-30 (launch)',
  },
  managedInstancesRequest: {
    usd: 0.2 / 1e6,
    unit: 'request (Lambda Managed Instances)',
    source: 'https://aws.amazon.com/lambda/pricing/ (Lambda Managed Instances)',
    since: '2025-11-30 (launch)',
  },
} satisfies Record<string, Price>;

/**
 * CloudFront's flat-rate plans (launched 2025-11-18; https://aws.amazon.com/cloudfront/pricing/): Pro $15 a
 * month for 10M requests and 50 TB, Business $200 for 125M requests and 50 TB, no overage charges. At
 * full use that is $1.50 or $1.60 per 1M requests, data transfer included.
 */
export const CLOUDFRONT_FLAT_RATE_PER_1M = { usd: 1.6, plan: 'Business: $200 / 125M requests / 50 TB a month' };

/**
 * Stated assumptions: one full vCPU at 1,769 MB and a proportional share below (Lambda Developer Guide,
 * "Configure Lambda function memory"); 5 ms per DynamoDB call on the path, in the same region; 1% of
 * invocations cold ("Lambda standardizes billing for INIT phase", 2025: "typically under 1%"); 26 bytes
 * per log event (CloudWatch Logs API Reference, PutLogEvents); Lambda's START/END/REPORT lines, when the
 * system log level lets them through: 270 bytes in 3 events.
 */
export const ASSUMPTIONS = { fullVcpuMb: 1769, dynamoCallMs: 5, coldStartShare: 0.01, logEventOverheadBytes: 26, platformLogBytes: 270, platformLogEvents: 3 };

/**
 * Lambda Managed Instances as the stack deploys them (`-c compute=managed-instances`, docs/managed-instances.md):
 * execution environments of 1 vCPU and 2 GiB, each about one c7g.large-equivalent (Lambda keeps ~1 vCPU of an
 * instance for itself), 3 per function at least (one per Availability Zone, "Scaling Lambda Managed Instances",
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-managed-instances-scaling.html), chat and embeddings: 6;
 * up to 64 concurrent requests per vCPU, Node.js's default ("Node.js runtime for Lambda Managed Instances",
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-managed-instances-nodejs-runtime.html); billed per
 * instance-hour (EC2 price + 15% fee) plus $0.20 per 1M requests, no duration charge; a NAT gateway per
 * Availability Zone (the stack's default, `natGateways`: 3), whose hours are in the floor and whose GB are per
 * request: what crosses the NAT is the upstream call, its request (≈ the client's) and its answer, which the
 * gateway asks for without compression (node:http sends no Accept-Encoding), so the answer counts decoded,
 * not as gzipped for the client (a 500-chunk stream: ~90 KB, not ~2 KB). The client's answer leaves through
 * the Function URL, not the NAT.
 */
export const MANAGED = {
  instance: 'c7g.large-equivalent (1 vCPU)',
  vcpus: 1,
  minInstances: 6,
  natGateways: 3,
  concurrencyPerVcpu: 64,
  utilisation: 0.5,
  hoursPerMonth: 730,
};

/**
 * What one request of a kind costs the platform, measured: handler-path CPU (ms), DynamoDB calls, write
 * and read units, SQS calls, log bytes and lines, and the answer's bytes on the wire (gzip when the client
 * asks, as the SDK does: CloudFront's bytes out), decoded, and the request's bytes.
 */
export interface RequestFigures {
  cpuMs: number;
  dynamoCalls: number;
  writeUnits: number;
  readUnits: number;
  sqsCalls: number;
  logBytes: number;
  logLines: number;
  responseBytes: number;
  decodedResponseBytes: number;
  requestBytes: number;
}

/** One part of the mix; `upstreamMs` is the time the upstream takes to answer (the gateway waits, and Lambda bills, all of it). */
export interface MixPart {
  label: string;
  share: number;
  upstreamMs: number;
  fn: 'Chat' | 'Embeddings';
  figures: RequestFigures;
}

/** The request mix: 70% streamed chat of 2 s and 500 tokens, 20% buffered chat, 10% embeddings. */
export const MIX: Array<Omit<MixPart, 'figures'> & { kind: Kind }> = [
  { kind: 'stream500', label: 'streamed chat: 500 tokens in 500 chunks', share: 0.7, upstreamMs: 2000, fn: 'Chat' },
  { kind: 'chat500', label: 'buffered chat: 500 tokens', share: 0.2, upstreamMs: 2000, fn: 'Chat' },
  { kind: 'embeddings', label: 'embeddings: 0.1 s upstream, one input', share: 0.1, upstreamMs: 100, fn: 'Embeddings' },
];

/** The mix with every chat part's upstream time set to `ms`. */
export const withUpstream = (mix: MixPart[], ms: number): MixPart[] => mix.map((p) => (p.fn === 'Chat' ? { ...p, upstreamMs: ms } : p));

/** 1M requests of the mix, by line ("compute": Lambda GB-s + requests, or Managed Instances' hours + requests); INIT of chat at its memory, ms. */
export interface CostRow {
  label: string;
  lambdaGbS: number;
  lambdaUsd: number;
  dynamoUsd: number;
  cloudfrontUsd: number;
  logsUsd: number;
  otherUsd: number;
  totalUsd: number;
  initMs: number;
}

/** How much slower our CPU-bound work runs at `memoryMb` than on one full vCPU. */
export const cpuSlowdown = (memoryMb: number): number => Math.max(1, ASSUMPTIONS.fullVcpuMb / memoryMb);

/** Billed duration of one request at `memoryMb`, ms: upstream + our CPU at that share + DynamoDB waits, rounded up. */
export function billedMs(part: MixPart, memoryMb: number): number {
  return Math.ceil(part.upstreamMs + part.figures.cpuMs * cpuSlowdown(memoryMb) + part.figures.dynamoCalls * ASSUMPTIONS.dynamoCallMs);
}

/** INIT estimate at `memoryMb`: CPU ms from process start to handler ready measured here (one core), slowed to the CPU share. */
export const initMs = (readyMs: number, memoryMb: number): number => readyMs * cpuSlowdown(memoryMb);

/** The cold-start goal: INIT at the chosen memory, ms. */
export const INIT_GOAL_MS = 800;

/**
 * The right size of a function: the least memory (a multiple of 64 MB, 128 at least) whose INIT estimate is
 * within {@link INIT_GOAL_MS}, plus one 64 MB step of margin (the estimate moves ~15% between runs here, and
 * a Graviton core is not this one). Below it cost falls further but a cold start waits longer than the goal.
 */
export function rightSizedMb(readyCpuMs: number): number {
  return Math.max(128, Math.ceil((ASSUMPTIONS.fullVcpuMb * readyCpuMs) / INIT_GOAL_MS / 64) * 64 + 64);
}

/** Options of {@link costRow}: the mix, the architecture, chat's CPU ms from process start to ready (secret reads included), WAF, platform log lines. */
export interface CostInputs {
  mix: MixPart[];
  architecture: 'arm64' | 'x86_64';
  readyMs: number;
  waf: boolean;
  platformLogs?: boolean;
}

/** The lines every compute mode shares: DynamoDB, CloudFront, logs, SQS and WAF, per 1M of the mix. */
function sharedLines(inputs: CostInputs): Pick<CostRow, 'dynamoUsd' | 'cloudfrontUsd' | 'logsUsd' | 'otherUsd'> {
  const sum = (f: (part: MixPart) => number): number => inputs.mix.reduce((total, p) => total + 1e6 * p.share * f(p), 0);
  const platform = inputs.platformLogs !== false ? ASSUMPTIONS.platformLogBytes + ASSUMPTIONS.platformLogEvents * ASSUMPTIONS.logEventOverheadBytes : 0;
  return {
    dynamoUsd: sum((p) => p.figures.writeUnits * PRICES.dynamoWrite.usd + p.figures.readUnits * PRICES.dynamoRead.usd),
    cloudfrontUsd: sum(
      (p) =>
        PRICES.cloudfrontRequest.usd +
        (p.figures.responseBytes / 1e9) * PRICES.cloudfrontOut.usd +
        (p.figures.requestBytes / 1e9) * PRICES.cloudfrontToOrigin.usd,
    ),
    logsUsd: sum((p) => ((p.figures.logBytes + p.figures.logLines * ASSUMPTIONS.logEventOverheadBytes + platform) / 1e9) * PRICES.logsIngest.usd),
    otherUsd: sum((p) => p.figures.sqsCalls * PRICES.sqsRequest.usd + (inputs.waf ? PRICES.wafRequest.usd : 0)),
  };
}

const total = (r: Omit<CostRow, 'totalUsd'>): CostRow => ({ ...r, totalUsd: r.lambdaUsd + r.dynamoUsd + r.cloudfrontUsd + r.logsUsd + r.otherUsd });

/** 1M requests of the mix on per-invocation Lambda, each function at the given memory. */
export function costRow(label: string, memoryMb: Record<'Chat' | 'Embeddings', number>, inputs: CostInputs): CostRow {
  const gbSecondUsd = inputs.architecture === 'arm64' ? PRICES.lambdaGbSecondArm.usd : PRICES.lambdaGbSecondX86.usd;
  const gbS = (p: MixPart): number =>
    ((billedMs(p, memoryMb[p.fn]) + ASSUMPTIONS.coldStartShare * initMs(inputs.readyMs, memoryMb[p.fn])) / 1000) * (memoryMb[p.fn] / 1024);
  const lambdaGbS = inputs.mix.reduce((s, p) => s + 1e6 * p.share * gbS(p), 0);
  return total({
    label,
    lambdaGbS,
    lambdaUsd: lambdaGbS * gbSecondUsd + 1e6 * PRICES.lambdaRequest.usd,
    ...sharedLines(inputs),
    initMs: initMs(inputs.readyMs, memoryMb.Chat),
  });
}

/** Managed Instances for the mix: what one instance serves, and 1M requests at {@link MANAGED}.utilisation. */
export function managedRow(label: string, inputs: CostInputs): CostRow & { perInstanceRps: number; limit: string; floorUsd: number; natUsd: number } {
  const avg = (f: (p: MixPart) => number): number => inputs.mix.reduce((s, p) => s + p.share * f(p), 0);
  const byCpu = (MANAGED.vcpus * 1000) / avg((p) => p.figures.cpuMs);
  const byConcurrency = (MANAGED.vcpus * MANAGED.concurrencyPerVcpu * 1000) / avg((p) => billedMs(p, ASSUMPTIONS.fullVcpuMb));
  const perInstanceRps = Math.min(byCpu, byConcurrency);
  const hourUsd = PRICES.ec2C7gLarge.usd * (1 + PRICES.managedInstancesFee.usd);
  const computeUsd = (hourUsd / (perInstanceRps * MANAGED.utilisation * 3600)) * 1e6;
  const limit =
    byCpu < byConcurrency
      ? `CPU (${Math.round(byCpu)}/s per environment)`
      : `${MANAGED.concurrencyPerVcpu} requests per vCPU (${Math.round(byConcurrency)}/s per environment; CPU would allow ${Math.round(byCpu)}/s)`;
  const floorUsd = (MANAGED.minInstances * hourUsd + MANAGED.natGateways * PRICES.natHour.usd) * MANAGED.hoursPerMonth;
  const natUsd = inputs.mix.reduce((t, p) => t + 1e6 * p.share * ((p.figures.decodedResponseBytes + p.figures.requestBytes) / 1e9) * PRICES.natGb.usd, 0);
  return {
    ...total({ label, lambdaGbS: 0, lambdaUsd: computeUsd + 1e6 * PRICES.managedInstancesRequest.usd + natUsd, ...sharedLines(inputs), initMs: Number.NaN }),
    perInstanceRps,
    limit,
    floorUsd,
    natUsd,
  };
}

/** Requests a month above which Managed Instances' floor costs less than per-invocation Lambda's compute (other lines are alike). */
export function breakEvenPerMonth(lambda: CostRow, managed: ReturnType<typeof managedRow>): number {
  const perRequest = (lambda.lambdaUsd - 1e6 * PRICES.managedInstancesRequest.usd) / 1e6;
  const atFloor = managed.floorUsd / perRequest;
  // Past the floor's capacity Managed Instances pays per request too; break-even only exists while it is cheaper per request.
  return managed.lambdaUsd < lambda.lambdaUsd ? atFloor : Number.POSITIVE_INFINITY;
}

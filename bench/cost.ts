/**
 * The AWS cost of 1M requests of a stated mix, from measured figures: the gateway's CPU per request,
 * the DynamoDB capacity units and AWS calls it issued, the bytes it logged and sent. List prices are
 * us-east-1, each with its source and the date it has applied since.
 */

import type { Kind } from './config';

/** A list price: USD per unit, where it is published, since when it applies. */
export interface Price {
  usd: number;
  unit: string;
  source: string;
  since: string;
}

/** us-east-1 list prices, pay-as-you-go, no free tier (the free tiers are per account, not per request). */
export const PRICES = {
  lambdaGbSecondArm: { usd: 0.0000133334, unit: 'GB-s (arm64, first 7.5 billion GB-s a month)', source: 'https://aws.amazon.com/lambda/pricing/', since: '2021-09-29 (Graviton2 launch)' },
  lambdaGbSecondX86: { usd: 0.0000166667, unit: 'GB-s (x86_64, first 6 billion GB-s a month)', source: 'https://aws.amazon.com/lambda/pricing/', since: '2020-12-01 (1 ms billing)' },
  lambdaRequest: { usd: 0.2 / 1e6, unit: 'request', source: 'https://aws.amazon.com/lambda/pricing/', since: '2014 (launch)' },
  dynamoWrite: { usd: 0.625 / 1e6, unit: 'write request unit (on-demand)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/', since: '2024-11-01 (on-demand price cut)' },
  dynamoRead: { usd: 0.125 / 1e6, unit: 'read request unit (on-demand)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/', since: '2024-11-01' },
  dynamoStorage: { usd: 0.25 + 0.2, unit: 'GB-month stored (0.25) + point-in-time recovery (0.20)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/', since: '2024-11-01' },
  cloudfrontRequest: { usd: 0.01 / 1e4, unit: 'HTTPS request (United States)', source: 'https://aws.amazon.com/cloudfront/pricing/ (pay-as-you-go)', since: 'as listed 2025-11' },
  cloudfrontOut: { usd: 0.085, unit: 'GB to the internet (United States, first 10 TB)', source: 'https://aws.amazon.com/cloudfront/pricing/ (pay-as-you-go)', since: 'as listed 2025-11' },
  cloudfrontToOrigin: { usd: 0.02, unit: 'GB to the origin (request bodies, United States)', source: 'https://aws.amazon.com/cloudfront/pricing/', since: 'as listed 2025-11' },
  logsIngest: { usd: 0.5, unit: 'GB of Lambda logs ingested (Standard class, first tier)', source: 'https://aws.amazon.com/cloudwatch/pricing/ (Lambda logs tiers)', since: '2025-05-01' },
  wafRequest: { usd: 0.6 / 1e6, unit: 'request inspected by a web ACL', source: 'https://aws.amazon.com/waf/pricing/', since: 'as listed 2025-11' },
  sqsRequest: { usd: 0.4 / 1e6, unit: 'request (standard queue, 64 KB chunks)', source: 'https://aws.amazon.com/sqs/pricing/', since: 'as listed 2025-11' },
} satisfies Record<string, Price>;

/**
 * CloudFront's flat-rate plans (launched 2025-11-18; https://aws.amazon.com/cloudfront/pricing/): Pro $15 a
 * month for 10M requests and 50 TB, Business $200 for 125M requests and 50 TB, no overage charges. At
 * full use that is $1.50 or $1.60 per 1M requests, data transfer included.
 */
export const CLOUDFRONT_FLAT_RATE_PER_1M = { usd: 1.6, plan: 'Business: $200 / 125M requests / 50 TB a month' };

/** Stated assumptions, with where they come from. */
export const ASSUMPTIONS = {
  /** Lambda gives one full vCPU at 1,769 MB and a proportional share below (Lambda Developer Guide, "Configure Lambda function memory"). */
  fullVcpuMb: 1769,
  /** Wall time of one DynamoDB call in the same region, ms, added to the billed duration (DynamoDB Local's own times are not representative). */
  dynamoCallMs: 5,
  /** Share of invocations that are cold starts (AWS, "Lambda standardizes billing for INIT phase", 2025: "typically under 1%"); INIT is billed since 2025-08-01. */
  coldStartShare: 0.01,
  /** CloudWatch Logs counts each event's message plus 26 bytes (CloudWatch Logs API Reference, PutLogEvents). */
  logEventOverheadBytes: 26,
  /** Lambda's own START, END and REPORT lines per invocation (text log format, as the stack uses), bytes. */
  platformLogBytes:
    'START RequestId: 00000000-0000-0000-0000-000000000000 Version: $LATEST\n'.length +
    'END RequestId: 00000000-0000-0000-0000-000000000000\n'.length +
    'REPORT RequestId: 00000000-0000-0000-0000-000000000000\tDuration: 2000.00 ms\tBilled Duration: 2000 ms\tMemory Size: 1024 MB\tMax Memory Used: 100 MB\t\n'.length,
  platformLogEvents: 3,
};

/** What one request of a kind costs the platform, measured. */
export interface RequestFigures {
  /** Gateway CPU of the handler path (the stand-in's own cost taken out), ms. */
  cpuMs: number;
  dynamoCalls: number;
  writeUnits: number;
  readUnits: number;
  sqsCalls: number;
  logBytes: number;
  logLines: number;
  /** Answer bytes on the wire (gzip when the client asked for it, as the SDK does): CloudFront's bytes out. */
  responseBytes: number;
  /** The same answer decoded (shown beside it, not billed). */
  decodedResponseBytes: number;
  requestBytes: number;
}

/** One part of the mix. */
export interface MixPart {
  label: string;
  share: number;
  /** Time the upstream takes to answer, ms (the gateway waits, and Lambda bills, all of it). */
  upstreamMs: number;
  /** The function that serves it (its memory applies). */
  fn: 'Chat' | 'Embeddings';
  figures: RequestFigures;
}

/**
 * The mix of issue 14 ("70% streamed chat of 2 s and 500 tokens, 20% buffered chat, 10% embeddings"), each
 * part measured as the request kind named. Buffered chat takes the same 2 s and 500 tokens; embeddings 0.1 s.
 */
export const MIX: Array<Omit<MixPart, 'figures'> & { kind: Kind }> = [
  { kind: 'stream500', label: 'streamed chat: 2 s upstream, 500 tokens in 500 chunks', share: 0.7, upstreamMs: 2000, fn: 'Chat' },
  { kind: 'chat500', label: 'buffered chat: 2 s upstream, 500 tokens', share: 0.2, upstreamMs: 2000, fn: 'Chat' },
  { kind: 'embeddings', label: 'embeddings: 0.1 s upstream, one input', share: 0.1, upstreamMs: 100, fn: 'Embeddings' },
];

/** One row of the cost table: 1M requests of the mix with both functions at `memoryMb` each (or as configured). */
export interface CostRow {
  label: string;
  memoryMb: Record<'Chat' | 'Embeddings', number>;
  lambdaGbS: number;
  lambdaUsd: number;
  dynamoUsd: number;
  cloudfrontUsd: number;
  logsUsd: number;
  otherUsd: number;
  totalUsd: number;
  /** Cold start of the chat function at its memory, ms (estimate, see {@link initMs}). */
  initMs: number;
}

/** How much slower our CPU-bound work runs at `memoryMb` than on one full vCPU. */
export const cpuSlowdown = (memoryMb: number): number => Math.max(1, ASSUMPTIONS.fullVcpuMb / memoryMb);

/** Billed duration of one request at `memoryMb`, ms: upstream + our CPU at that share + DynamoDB waits, rounded up. */
export function billedMs(part: MixPart, memoryMb: number): number {
  return Math.ceil(part.upstreamMs + part.figures.cpuMs * cpuSlowdown(memoryMb) + part.figures.dynamoCalls * ASSUMPTIONS.dynamoCallMs);
}

/** INIT estimate at `memoryMb`: the CPU time from process start to handler ready measured here (one core), slowed to the CPU share. */
export const initMs = (readyMs: number, memoryMb: number): number => readyMs * cpuSlowdown(memoryMb);

/** Cold-start goal of issue 14: INIT at the chosen memory, ms. */
export const INIT_GOAL_MS = 400;

/** Lambda memory is set in 1 MB steps; we right-size in 64 MB steps, so a noisy run does not move it by a few MB. */
const MEMORY_STEP_MB = 64;

/**
 * The right size of a function: the least memory (a multiple of 64 MB, 128 at least) whose INIT estimate
 * is within {@link INIT_GOAL_MS}, plus one 64 MB step of margin (the CPU-time median moves by ~15% from
 * run to run on a shared machine, and a Graviton core is not this machine's core). Below it cost falls
 * further (billed duration is mostly upstream wait, paid per GB-s), but the first request of every
 * container would wait longer than the goal; above it the cost rises for CPU the request path barely
 * uses (the gateway's CPU is well under 1% of a 2 s chat request).
 */
export function rightSizedMb(readyCpuMs: number): number {
  const least = (ASSUMPTIONS.fullVcpuMb * readyCpuMs) / INIT_GOAL_MS;
  return Math.max(128, Math.ceil(least / MEMORY_STEP_MB) * MEMORY_STEP_MB + MEMORY_STEP_MB);
}

/** Options of {@link costRow}. */
export interface CostInputs {
  mix: MixPart[];
  architecture: 'arm64' | 'x86_64';
  /** Chat bundle: CPU time from process start to handler ready, ms (source maps as deployed). */
  readyMs: number;
  /** A WAF web ACL is in front (every request inspected). */
  waf: boolean;
}

/** 1M requests of the mix, with each function at the given memory. */
export function costRow(label: string, memoryMb: Record<'Chat' | 'Embeddings', number>, inputs: CostInputs): CostRow {
  const gbSecondUsd = inputs.architecture === 'arm64' ? PRICES.lambdaGbSecondArm.usd : PRICES.lambdaGbSecondX86.usd;
  const n = (part: MixPart): number => 1e6 * part.share;
  const sum = (f: (part: MixPart) => number): number => inputs.mix.reduce((total, part) => total + n(part) * f(part), 0);
  const gbS = (part: MixPart): number => (billedMs(part, memoryMb[part.fn]) / 1000) * (memoryMb[part.fn] / 1024);
  const initGbS = (part: MixPart): number => ASSUMPTIONS.coldStartShare * (initMs(inputs.readyMs, memoryMb[part.fn]) / 1000) * (memoryMb[part.fn] / 1024);
  const lambdaGbS = sum((p) => gbS(p) + initGbS(p));
  const lambdaUsd = lambdaGbS * gbSecondUsd + 1e6 * PRICES.lambdaRequest.usd;
  const dynamoUsd = sum((p) => p.figures.writeUnits * PRICES.dynamoWrite.usd + p.figures.readUnits * PRICES.dynamoRead.usd);
  const cloudfrontUsd = sum((p) => PRICES.cloudfrontRequest.usd + (p.figures.responseBytes / 1e9) * PRICES.cloudfrontOut.usd + (p.figures.requestBytes / 1e9) * PRICES.cloudfrontToOrigin.usd);
  const logBytes = (p: MixPart): number =>
    p.figures.logBytes + p.figures.logLines * ASSUMPTIONS.logEventOverheadBytes + ASSUMPTIONS.platformLogBytes + ASSUMPTIONS.platformLogEvents * ASSUMPTIONS.logEventOverheadBytes;
  const logsUsd = sum((p) => (logBytes(p) / 1e9) * PRICES.logsIngest.usd);
  const otherUsd = sum((p) => p.figures.sqsCalls * PRICES.sqsRequest.usd + (inputs.waf ? PRICES.wafRequest.usd : 0));
  return {
    label,
    memoryMb,
    lambdaGbS,
    lambdaUsd,
    dynamoUsd,
    cloudfrontUsd,
    logsUsd,
    otherUsd,
    totalUsd: lambdaUsd + dynamoUsd + cloudfrontUsd + logsUsd + otherUsd,
    initMs: initMs(inputs.readyMs, memoryMb.Chat),
  };
}

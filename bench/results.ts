/**
 * From raw runs to the figures the report shows: pooled percentiles, throughput, modelmux − direct,
 * spread across rounds, CPU per request by process.
 */
import type { RunRecord, ScenarioRuns } from './buffered-phase';
import { OTHER_PROCESSES } from './process-cpu';
import { median, range, summarize, type LatencySummary } from './stats';
import { summarizeStreams, type StreamSummary } from './stream-stats';
import type { StreamRuns } from './stream-phase';
import type { TargetName } from './targets';

/** One target's figures for one buffered scenario. */
export interface BufferedFigures {
  latency: LatencySummary;
  /** Responses per second seen by the client (load wall time only). */
  reqPerSec: number;
  /** Requests per second including the time the gateway still needed for their ledger writes. */
  sustainedReqPerSec: number;
  /** min / max over rounds of each round's p50, ms. */
  roundP50: { min: number; max: number };
  /** min / max over rounds of each round's sustained req/s. */
  roundReqPerSec: { min: number; max: number };
  /** CPU ms per request by process group (and `other`: everything else on the machine). */
  cpuMsPerRequest: Record<string, number>;
  failures: number;
  capped: boolean;
  /** CPU other processes on the machine used meanwhile, in cores (0..cores). */
  otherCores: number;
}

/** A buffered scenario, both targets and the difference. */
export interface BufferedRow {
  label: string;
  /** Requests waited for the previous ledger write: latency is meaningful, req/s is not. */
  latencyOnly: boolean;
  concurrency: number;
  requestsPerTarget: number;
  direct: BufferedFigures;
  modelmux: BufferedFigures;
  /** modelmux − direct, ms. */
  addedP50: number;
  addedP99: number;
  /** modelmux sustained req/s ÷ direct req/s. */
  throughputRatio: number;
}

function figures(runs: RunRecord[]): BufferedFigures {
  const all = runs.flatMap((r) => r.latenciesMs);
  const elapsed = runs.reduce((a, r) => a + r.elapsedMs, 0);
  const drained = runs.reduce((a, r) => a + r.elapsedMs + r.drainMs, 0);
  const cpu: Record<string, number> = {};
  for (const r of runs) for (const [name, ms] of Object.entries(r.cpuMs)) cpu[name] = (cpu[name] ?? 0) + ms;
  return {
    latency: summarize(all),
    reqPerSec: (all.length * 1000) / elapsed,
    sustainedReqPerSec: (all.length * 1000) / drained,
    roundP50: range(runs.map((r) => median(r.latenciesMs))),
    roundReqPerSec: range(runs.map((r) => (r.latenciesMs.length * 1000) / (r.elapsedMs + r.drainMs))),
    cpuMsPerRequest: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, v / Math.max(1, all.length)])),
    failures: runs.reduce((a, r) => a + Object.values(r.failures).reduce((x, y) => x + y, 0), 0),
    capped: runs.some((r) => r.capped),
    otherCores: (cpu[OTHER_PROCESSES] ?? 0) / drained,
  };
}

/** Rows of the buffered table. */
export function bufferedRows(scenarios: ScenarioRuns[]): BufferedRow[] {
  return scenarios.map(({ scenario, runs }) => {
    const direct = figures(runs.direct);
    const modelmux = figures(runs.modelmux);
    return {
      label: scenario.label,
      latencyOnly: scenario.oneInvocationAtATime === true,
      concurrency: scenario.concurrency,
      requestsPerTarget: runs.modelmux.reduce((a, r) => a + r.latenciesMs.length, 0),
      direct,
      modelmux,
      addedP50: modelmux.latency.p50 - direct.latency.p50,
      addedP99: modelmux.latency.p99 - direct.latency.p99,
      throughputRatio: modelmux.sustainedReqPerSec / direct.sustainedReqPerSec,
    };
  });
}

/** One streaming scenario, both targets and the difference. */
export interface StreamRow {
  label: string;
  concurrency: number;
  direct: StreamSummary;
  modelmux: StreamSummary;
  roundFirstTokenP50: Record<TargetName, { min: number; max: number }>;
  /** CPU other processes used meanwhile, cores. */
  otherCores: Record<TargetName, number>;
  /** modelmux − direct, ms. */
  addedFirstByteP50: number;
  addedFirstTokenP50: number;
  addedFirstTokenP99: number;
}

/** Rows of the streaming table; `nominalGapMs` is the simulator's chunk delay. */
export function streamRows(runs: StreamRuns[], nominalGapMs: number): StreamRow[] {
  return runs.map((r) => {
    const direct = summarizeStreams(r.timings.direct, nominalGapMs);
    const modelmux = summarizeStreams(r.timings.modelmux, nominalGapMs);
    return {
      label: r.scenario.label,
      concurrency: r.scenario.concurrency,
      direct,
      modelmux,
      roundFirstTokenP50: { direct: range(r.roundFirstTokenP50.direct), modelmux: range(r.roundFirstTokenP50.modelmux) },
      otherCores: r.otherCores,
      addedFirstByteP50: modelmux.firstByte.p50 - direct.firstByte.p50,
      addedFirstTokenP50: modelmux.firstToken.p50 - direct.firstToken.p50,
      addedFirstTokenP99: modelmux.firstToken.p99 - direct.firstToken.p99,
    };
  });
}

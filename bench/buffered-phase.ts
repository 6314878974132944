/**
 * Buffered load, interleaved: in each round every scenario runs against both targets back to back
 * (which target goes first alternates by round), so drift over time (JIT, DynamoDB Local's growing
 * tables, thermal) hits both alike. Per run: latencies, throughput, the time the gateway still needed
 * afterwards for ledger writes, and CPU time per process.
 */
import type { BenchContext } from './bench-context';
import { BENCH_CONFIG, type BufferedScenario } from './config';
import { resetStoreCalls, storeCalls, waitForStoreIdle } from './gateway-control';
import { runClosedLoop } from './load';
import { cpuDelta, sampleCpu } from './process-cpu';
import type { StoreCallSnapshot } from './store-call-counter';
import { checkChatCompletion, checkEmbeddings, type Target, type TargetName } from './targets';

/** One load run of one scenario against one target. */
export interface RunRecord {
  round: number;
  /** Successful request latencies, ms. */
  latenciesMs: number[];
  /** Wall time of the load, ms. */
  elapsedMs: number;
  /** Time after the last response until the gateway's DynamoDB calls were done, ms (0 for direct). */
  drainMs: number;
  failures: Record<string, number>;
  /** CPU ms per process group during load + drain. */
  cpuMs: Record<string, number>;
  capped: boolean;
}

/** All runs of one scenario. */
export interface ScenarioRuns {
  scenario: BufferedScenario;
  runs: Record<TargetName, RunRecord[]>;
}

/** Result of the buffered phase. */
export interface BufferedPhaseResult {
  scenarios: ScenarioRuns[];
  /** The gateway's DynamoDB calls over all measured rounds. */
  storeCalls: StoreCallSnapshot;
  /** Gateway requests in those rounds (for calls per request). */
  gatewayRequests: number;
}

/** Largest share of failed requests tolerated in a run before the bench stops (results would lie). */
const MAX_FAILURE_SHARE = 0.01;

/** Runs `scenario` once against `target` and records it. */
export async function runScenario(ctx: BenchContext, target: Target, scenario: BufferedScenario, requests: number, round: number): Promise<RunRecord> {
  const spec = scenario.request === 'chat' ? target.chat : target.embeddings;
  const check = scenario.request === 'chat' ? checkChatCompletion : checkEmbeddings;
  const pool = ctx.pools.get(target.origin, scenario.concurrency);
  const before = sampleCpu(ctx.processes);
  // Both targets wait alike (one IPC round trip at least), so the comparison stays fair.
  const beforeEach = scenario.oneInvocationAtATime === true ? async () => void (await waitForStoreIdle(ctx.sut.gateway)) : undefined;
  const result = await runClosedLoop(pool, spec, { concurrency: scenario.concurrency, requests, timeCapMs: BENCH_CONFIG.runTimeCapMs, beforeEach }, check);
  const drainMs = target.name === 'modelmux' ? await waitForStoreIdle(ctx.sut.gateway) : 0;
  const cpuMs = cpuDelta(before, sampleCpu(ctx.processes));
  await ctx.sut.simulator.call('reset'); // keeps the simulator's request log (and its memory) flat
  const failed = Object.values(result.failures).reduce((a, b) => a + b, 0);
  if (failed > MAX_FAILURE_SHARE * requests) {
    throw new Error(`${scenario.label} → ${target.name}: ${failed} of ${requests} requests failed: ${JSON.stringify(result.failures)}`);
  }
  return { round, latenciesMs: result.latenciesMs, elapsedMs: result.elapsedMs, drainMs, failures: result.failures, cpuMs, capped: result.capped };
}

/** Unmeasured load on both targets: JIT, DynamoDB Local's JVM, and every pool's connections. */
export async function warmUp(ctx: BenchContext): Promise<void> {
  const { warmup } = BENCH_CONFIG;
  for (const target of Object.values(ctx.targets)) {
    const chat: BufferedScenario = { id: 'warmup', label: 'warm-up chat', request: 'chat', concurrency: warmup.concurrency, requests: warmup.chatRequests };
    await runScenario(ctx, target, chat, warmup.chatRequests, 0);
    const emb: BufferedScenario = { ...chat, label: 'warm-up embeddings', request: 'embeddings', requests: warmup.embeddingsRequests };
    await runScenario(ctx, target, emb, warmup.embeddingsRequests, 0);
    for (const scenario of BENCH_CONFIG.buffered) await runScenario(ctx, target, scenario, scenario.concurrency * 4, 0);
  }
}

/** The measured rounds (after {@link warmUp}). */
export async function runBufferedRounds(ctx: BenchContext): Promise<BufferedPhaseResult> {
  const scenarios: ScenarioRuns[] = BENCH_CONFIG.buffered.map((scenario) => ({ scenario, runs: { direct: [], modelmux: [] } }));
  await resetStoreCalls(ctx.sut.gateway);
  let gatewayRequests = 0;
  for (let round = 1; round <= BENCH_CONFIG.rounds; round++) {
    const order: TargetName[] = round % 2 === 1 ? ['direct', 'modelmux'] : ['modelmux', 'direct'];
    for (const entry of scenarios) {
      for (const name of order) {
        const record = await runScenario(ctx, ctx.targets[name], entry.scenario, entry.scenario.requests, round);
        entry.runs[name].push(record);
        if (name === 'modelmux') gatewayRequests += record.latenciesMs.length;
      }
    }
    ctx.log(`  round ${round}/${BENCH_CONFIG.rounds} done`);
  }
  return { scenarios, storeCalls: await storeCalls(ctx.sut.gateway), gatewayRequests };
}

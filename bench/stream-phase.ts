/**
 * Streaming, interleaved like the buffered rounds, with the simulator pacing its events
 * `chunkDelayMs` apart: every stream is timed at the client (first byte, first token, each content
 * event's arrival), to see what modelmux adds before the first token and whether it keeps the pacing.
 */
import type { Pool } from 'undici';
import type { BenchContext } from './bench-context';
import { BENCH_CONFIG, type StreamScenario } from './config';
import { waitForStoreIdle } from './gateway-control';
import type { RequestSpec } from './load';
import { cpuDelta, OTHER_PROCESSES, sampleCpu } from './process-cpu';
import { median } from './stats';
import { streamOnce, type StreamTiming } from './stream-client';
import type { TargetName } from './targets';

/** All streams of one scenario, by target, with each round's median first-token time (ms). */
export interface StreamRuns {
  scenario: StreamScenario;
  timings: Record<TargetName, StreamTiming[]>;
  roundFirstTokenP50: Record<TargetName, number[]>;
  /** CPU other processes on the machine used meanwhile, in cores. */
  otherCores: Record<TargetName, number>;
}

/** `count` streams, `concurrency` at a time; `beforeEach` is awaited before each one, outside its timing. */
async function streams(pool: Pool, spec: RequestSpec, count: number, concurrency: number, beforeEach?: () => Promise<void>): Promise<StreamTiming[]> {
  const out: StreamTiming[] = [];
  let issued = 0;
  const deadline = performance.now() + BENCH_CONFIG.runTimeCapMs;
  const worker = async (): Promise<void> => {
    while (issued < count && performance.now() < deadline) {
      issued++;
      await beforeEach?.();
      out.push(await streamOnce(pool, spec));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return out;
}

/** Sets the simulator's chunk delay, runs warm-up and rounds, and puts the delay back to 0. */
export async function runStreamRounds(ctx: BenchContext): Promise<StreamRuns[]> {
  const results: StreamRuns[] = BENCH_CONFIG.streaming.map((scenario) => ({
    scenario,
    timings: { direct: [], modelmux: [] },
    roundFirstTokenP50: { direct: [], modelmux: [] },
    otherCores: { direct: 0, modelmux: 0 },
  }));
  const otherMs = results.map(() => ({ direct: 0, modelmux: 0 }));
  const wallMs = results.map(() => ({ direct: 0, modelmux: 0 }));
  await ctx.sut.simulator.call('chunk-delay', BENCH_CONFIG.chunkDelayMs);
  try {
    for (const target of Object.values(ctx.targets)) {
      for (const { scenario } of results) {
        await streams(ctx.pools.get(target.origin, scenario.concurrency), target.stream, Math.max(BENCH_CONFIG.warmup.streams, scenario.concurrency), scenario.concurrency);
      }
    }
    for (let round = 1; round <= BENCH_CONFIG.streamRounds; round++) {
      const order: TargetName[] = round % 2 === 1 ? ['direct', 'modelmux'] : ['modelmux', 'direct'];
      for (const [i, entry] of results.entries()) {
        for (const name of order) {
          const target = ctx.targets[name];
          const before = sampleCpu(ctx.processes);
          const started = performance.now();
          const beforeEach = entry.scenario.oneInvocationAtATime === true ? async () => void (await waitForStoreIdle(ctx.sut.gateway)) : undefined;
          const timed = await streams(ctx.pools.get(target.origin, entry.scenario.concurrency), target.stream, entry.scenario.streams, entry.scenario.concurrency, beforeEach);
          if (name === 'modelmux') await waitForStoreIdle(ctx.sut.gateway);
          const spent = otherMs[i];
          const wall = wallMs[i];
          if (spent && wall) {
            spent[name] += cpuDelta(before, sampleCpu(ctx.processes))[OTHER_PROCESSES] ?? 0;
            wall[name] += performance.now() - started;
          }
          await ctx.sut.simulator.call('reset');
          entry.timings[name].push(...timed);
          entry.roundFirstTokenP50[name].push(median(timed.map((t) => t.firstTokenMs)));
        }
      }
      ctx.log(`  stream round ${round}/${BENCH_CONFIG.streamRounds} done`);
    }
  } finally {
    await ctx.sut.simulator.call('chunk-delay', 0);
  }
  results.forEach((entry, i) => {
    for (const name of ['direct', 'modelmux'] as const) entry.otherCores[name] = (otherMs[i]?.[name] ?? 0) / Math.max(1, wallMs[i]?.[name] ?? 0);
  });
  return results;
}

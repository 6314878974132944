/**
 * The hot-path profile: the gateway child samples its CPU during one buffered-chat load (not one of
 * the measured runs: sampling slows it), writes a `.cpuprofile` mapped to the TypeScript sources,
 * and the bench summarises it.
 */
import { join } from 'node:path';
import type { BenchContext } from './bench-context';
import { BENCH_CONFIG, type BufferedScenario } from './config';
import { runScenario, type RunRecord } from './buffered-phase';
import { summarizeProfile, type ProfileSummary } from './profile-summary';

/** The profile summary and the file it came from. */
export interface HotPathProfile {
  file: string;
  requests: number;
  summary: ProfileSummary;
}

/** Profiles buffered chat at the configured concurrency; the profile goes to `outDir`. */
export async function profileHotPath(ctx: BenchContext, outDir: string, root: string): Promise<HotPathProfile> {
  const { concurrency, requests, samplingIntervalUs } = BENCH_CONFIG.profile;
  const scenario: BufferedScenario = { id: 'profile', label: `profiled chat c=${concurrency}`, request: 'chat', concurrency, requests };
  const file = join(outDir, `gateway-chat-c${concurrency}.cpuprofile`);
  await ctx.sut.gateway.call('profile-start', samplingIntervalUs);
  let record: RunRecord;
  try {
    record = await runScenario(ctx, ctx.targets.modelmux, scenario, requests, 0);
  } finally {
    await ctx.sut.gateway.call('profile-stop', file);
  }
  return { file, requests: record.latenciesMs.length, summary: summarizeProfile(file, root, 10) };
}

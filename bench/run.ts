/**
 * `npm run bench`: bundle sizes and cold starts, then modelmux against the upstream simulator directly
 * (buffered, streaming, embeddings), DynamoDB calls per request, and a hot-path profile. Prints the
 * report and writes BENCHMARKS.md. Everything it starts (DynamoDB Local, simulator, gateway) is
 * stopped on exit, error or Ctrl-C; its temporary files (cdk.out, logs) are removed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './bench-context';
import { runBufferedRounds, warmUp } from './buffered-phase';
import { readBundles, synth } from './bundle';
import { logTail } from './child-process';
import { measureColdStarts, writeEmptyModule, type ColdStart } from './cold-start';
import { profileColdStart } from './cold-start-profile';
import { BENCH_CONFIG } from './config';
import { checkGoals } from './goals';
import { describeMachine } from './machine';
import { Pools } from './pools';
import { childrenNamed, cpuTimeMs, machineBusyMs } from './process-cpu';
import { profileHotPath } from './profile-phase';
import { renderReport } from './report';
import type { ColdStartFigures } from './report-types';
import { bufferedRows, streamRows } from './results';
import { countStoreCallsPerRequest } from './store-calls-phase';
import { measureHolds, renderHolds } from './hold-phase';
import { runStreamRounds } from './stream-phase';
import { startSystemUnderTest, type SystemUnderTest } from './system-under-test';
import { directTarget, gatewayTarget } from './targets';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const started = performance.now();
const log = (message: string): void => void process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

const work = mkdtempSync(join(tmpdir(), 'modelmux-bench-'));
const outDir = join(ROOT, 'bench', 'out');
mkdirSync(outDir, { recursive: true });
const pools = new Pools();
let sut: SystemUnderTest | undefined;
let cleaned: Promise<void> | undefined;
const cleanup = (): Promise<void> =>
  (cleaned ??= (async () => {
    await pools.closeAll();
    await sut?.close();
    rmSync(work, { recursive: true, force: true });
  })());

// `on`, not `once`: Ctrl-C reaches this process both from the terminal and relayed by the tsx CLI, and a
// second signal with no listener would kill it before the cleanup is done.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping everything`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function coldStarts(bundleFiles: Array<{ name: string; file: string }>): Promise<ColdStartFigures> {
  const empty = writeEmptyModule(work);
  const files = [empty, ...bundleFiles.map((b) => b.file)];
  // The loads run in child processes of this one: its CPU "with children" covers them once they exited.
  const machineBefore = machineBusyMs() ?? Number.NaN;
  const oursBefore = cpuTimeMs(process.pid, true) ?? Number.NaN;
  const wallBefore = performance.now();
  const all = await measureColdStarts([...files.map((file) => ({ file, sourceMaps: true })), ...files.slice(1).map((file) => ({ file, sourceMaps: false }))], BENCH_CONFIG.coldStartRuns);
  const withMaps = all.slice(0, files.length);
  const plain = [all[0] as ColdStart, ...all.slice(files.length)];
  const other = (machineBusyMs() ?? Number.NaN) - machineBefore - ((cpuTimeMs(process.pid, true) ?? Number.NaN) - oursBefore);
  const byName = (list: ColdStart[]): Record<string, ColdStart> => Object.fromEntries(bundleFiles.map((b, i) => [b.name, list[i + 1] as ColdStart]));
  return {
    empty: withMaps[0] as ColdStart,
    sourceMaps: byName(withMaps),
    plain: byName(plain),
    otherCores: Number.isFinite(other) ? Math.max(0, other) / (performance.now() - wallBefore) : Number.NaN,
  };
}

async function main(): Promise<void> {
  log('bundles: cdk synth --quiet (temporary cdk.out)');
  const cdkOut = join(work, 'cdk.out');
  await synth(ROOT, cdkOut);
  const bundles = readBundles(cdkOut);
  if (bundles.length === 0) throw new Error('cdk synth produced no Lambda bundle');

  log(`cold starts: ${BENCH_CONFIG.coldStartRuns} fresh processes per bundle, source maps on and off`);
  const cold = await coldStarts(bundles.map((b) => ({ name: b.name, file: join(b.dir, 'index.mjs') })));
  const chatBundle = bundles.find((b) => b.name === 'Chat');
  const profileDir = join(work, 'load-profile');
  mkdirSync(profileDir);
  const loadProfile = chatBundle ? await profileColdStart(chatBundle.dir, profileDir, ROOT) : undefined;

  log('starting DynamoDB Local, the simulator and the gateway (3 processes)');
  sut = await startSystemUnderTest(work, BENCH_CONFIG.replyWords);
  const ctx: BenchContext = {
    sut,
    targets: { direct: directTarget(sut.simulatorInfo), modelmux: gatewayTarget(sut.gatewayInfo) },
    pools,
    processes: { client: [process.pid], gateway: [sut.gateway.pid], simulator: [sut.simulator.pid], dynamodb: childrenNamed(process.pid, 'java') },
    log,
  };

  log('warm-up');
  await warmUp(ctx);
  log(`buffered: ${BENCH_CONFIG.rounds} interleaved rounds`);
  const buffered = await runBufferedRounds(ctx);
  log(`streaming: ${BENCH_CONFIG.streamRounds} rounds, chunk delay ${BENCH_CONFIG.chunkDelayMs} ms`);
  const streams = await runStreamRounds(ctx);
  log('DynamoDB calls per warm request');
  const storeCalls = await countStoreCallsPerRequest(ctx);
  log('hot-path profile (unmeasured run)');
  const hotProfile = await profileHotPath(ctx, outDir, ROOT);
  log('what a hold adds: hold + settle pairs on DynamoDB Local');
  const holds = await measureHolds(sut.dynamodbEndpoint);
  await pools.closeAll();
  await sut.close();

  const bufferedTable = bufferedRows(buffered.scenarios);
  const streamTable = streamRows(streams, BENCH_CONFIG.chunkDelayMs);
  const report = `${renderReport({
    machine: describeMachine(),
    runtimeMs: performance.now() - started,
    goals: checkGoals({ buffered: bufferedTable, streams: streamTable, bundles, coldStarts: cold.sourceMaps, storeCalls, chunkDelayMs: BENCH_CONFIG.chunkDelayMs }),
    buffered: bufferedTable,
    streams: streamTable,
    storeCalls,
    amortizedStoreCalls: { snapshot: buffered.storeCalls, requests: buffered.gatewayRequests },
    bundles,
    coldStarts: cold,
    loadProfile,
    hotProfile,
  })}\n${renderHolds(holds)}`;
  // A scaled-down smoke run must not overwrite the real figures.
  const target = BENCH_CONFIG.scale === 1 || process.env.BENCH_WRITE === '1' ? join(ROOT, 'BENCHMARKS.md') : join(outDir, 'BENCHMARKS.scaled.md');
  writeFileSync(target, report);
  process.stdout.write(`${report}\n`);
  log(`wrote ${target}`);
}

try {
  await main();
} catch (err) {
  process.exitCode = 1;
  if (!stopping) {
    process.stderr.write(`\nbench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    if (sut) process.stderr.write(`\n--- gateway log (tail) ---\n${logTail(sut.gatewayLogFile)}\n`);
  }
} finally {
  await cleanup();
}

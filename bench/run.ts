/**
 * `npm run bench [-- --quick]`: synthesizes the stack, times the bundles' cold start, then runs the
 * deployed bundles against the upstream simulator with billing on (DynamoDB Local) and reports CPU
 * per request by phase, latency, AWS calls and capacity units, and the AWS cost of 1M requests.
 * Prints the report; a full run writes BENCHMARKS.md, `--quick` writes bench/out/BENCHMARKS.quick.md.
 * Everything it starts is stopped on exit, error or Ctrl-C; temporary files are removed.
 */
import { readDashboardSection } from './dashboard-section';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { closePools } from './client';
import { emptyModule, profileImport, timeImports, type ImportVariant } from './cold-start';
import { benchConfig, KINDS, type Kind } from './config';
import { measureConcurrentStreams, measureKind, measureLoad, profileKinds, type KindResult } from './measure';
import { measureGzipLevels, renderGzipLevels } from './gzip-levels';
import { measureHolds, renderHolds } from './hold-phase';
import { renderReport } from './report';
import { stackFunction, synthStack } from './stack';
import { measureStoredResponses } from './stored-responses';
import { CAP_MS, measureValidationCpu, renderValidationCpu } from './validation-cpu';
import { cpuMs, machineBusyMs, startSystem, type System } from './system';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// Lambda runs Node 24; the SDK's notice about Node 20 is noise here (and in the children, which inherit it).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const cfg = benchConfig(process.argv.includes('--quick'));
const started = performance.now();
const log = (message: string): void => void process.stderr.write(`[bench ${String(Math.round((performance.now() - started) / 1000)).padStart(3)} s] ${message}\n`);
const work = mkdtempSync(join(tmpdir(), 'modelmux-bench-'));
let system: System | undefined;

const cleanup = async (): Promise<void> => {
  await closePools();
  await system?.stop();
  rmSync(work, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

async function main(): Promise<void> {
  log(`cdk synth${cfg.quick ? ' (quick run)' : ''}`);
  const stack = await synthStack(ROOT, join(work, 'cdk.out'));
  const chat = stackFunction(stack, 'Chat');
  const embeddings = stackFunction(stack, 'Embeddings');

  log(`cold start: ${cfg.coldStartRuns} fresh processes per bundle, source maps on and off`);
  const variants: ImportVariant[] = [{ label: 'empty', file: emptyModule(work), sourceMaps: false, env: chat.env }];
  for (const fn of [chat, embeddings]) {
    // As deployed (the template's NODE_OPTIONS), and the other way, to show what runtime source maps cost.
    const deployedMaps = (fn.env.NODE_OPTIONS ?? '').includes('--enable-source-maps');
    variants.push({ label: fn.name, file: join(fn.dir, 'index.mjs'), sourceMaps: deployedMaps, env: fn.env });
    variants.push({ label: `${fn.name}, ${deployedMaps ? 'no' : 'with'} source maps`, file: join(fn.dir, 'index.mjs'), sourceMaps: !deployedMaps, env: fn.env });
  }
  const imports = await timeImports(variants, cfg.coldStartRuns);
  const loadProfile = await profileImport({ label: 'Chat', file: join(chat.dir, 'index.mjs'), sourceMaps: false, env: chat.env });

  log('starting DynamoDB Local, the simulator and the gateway');
  const logDir = join(ROOT, 'bench', 'out');
  mkdirSync(logDir, { recursive: true });
  system = await startSystem(chat, embeddings, logDir);
  const gateway = await system.startGateway();

  // Machine busy time that none of the bench's processes account for: other work on the same cores.
  const pids = [gateway.pid, system.dynamodb.pid, system.simulator.pid, process.pid];
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  const [machineBefore, oursBefore, wallBefore] = [machineBusyMs(), sum(await cpuMs(pids)), performance.now()];
  const kinds = {} as Record<Kind, KindResult>;
  for (const kind of Object.keys(KINDS) as Kind[]) {
    log(`one invocation at a time: ${KINDS[kind].label}`);
    kinds[kind] = await measureKind(system, gateway, cfg, kind);
  }
  log(`load: autocannon, ${cfg.loadSeconds} s per run`);
  const load = await measureLoad(system, gateway, cfg);
  log('concurrent streams');
  const concurrentStreams = await measureConcurrentStreams(system, gateway, cfg.concurrentStreams);
  const otherCores = (machineBusyMs() - machineBefore - (sum(await cpuMs(pids)) - oursBefore)) / (performance.now() - wallBefore);
  log('stored responses: what store true adds per Responses request');
  const storedResponses = await measureStoredResponses(system, gateway, cfg.quick ? 3 : 10);
  await gateway.exit();

  log('CPU profile of the request path (a second gateway under node --cpu-prof)');
  const profileDir = join(work, 'profile');
  mkdirSync(profileDir);
  const phases = await profileKinds(system, cfg, [join(chat.dir, 'index.mjs'), join(embeddings.dir, 'index.mjs')], profileDir);

  const { documentClient } = await import('../functions/shared/store/dynamo');
  const ledger = (await documentClient().send(new DescribeTableCommand({ TableName: process.env.LEDGER_TABLE }))).Table;
  log('what a hold adds: hold + settle pairs on DynamoDB Local');
  const holds = await measureHolds(process.env.DYNAMODB_ENDPOINT ?? '', cfg.quick ? 50 : 200);
  log('gzip settings on a 500-chunk stream of this run');
  const streamEvents = kinds.stream500.streams.modelmux?.[0]?.events ?? [];
  const gzip = await measureGzipLevels(streamEvents, cfg.quick ? 5 : 20);
  log('validation CPU of 1 MB adversarial bodies (issue 21)');
  const validation = await measureValidationCpu();
  const report = `${renderReport({
    cfg,
    startedAt: new Date(Date.now() - (performance.now() - started)),
    seconds: (performance.now() - started) / 1000,
    machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average ${loadavg()[0]?.toFixed(1)} at the end`,
    otherCores: Math.max(0, otherCores),
    stack,
    imports,
    loadProfile,
    kinds,
    load,
    concurrentStreams,
    phases,
    ledgerBytesPerItem: (ledger?.TableSizeBytes ?? 0) / Math.max(1, ledger?.ItemCount ?? 0),
    storedResponses,
  })}\n\n${renderHolds(holds)}\n\n${renderGzipLevels(gzip, streamEvents.length)}\n\n## Validation CPU of 1 MB adversarial bodies\n\nCPU of \`parseJsonBody\` (bounds scan, JSON.parse, schema) per route; the quadratic scan of issue 21 ran past the bench's ${CAP_MS / 1000}-s cap on long arrays and many messages.\n\n${renderValidationCpu(validation)}`;
  const target = cfg.quick ? join(logDir, 'BENCHMARKS.quick.md') : join(ROOT, 'BENCHMARKS.md');
  // The dashboard's figures come from `npm run bench:dashboard` and are kept as they are.
  const dashboard = readDashboardSection(join(ROOT, 'BENCHMARKS.md'));
  writeFileSync(target, dashboard === '' ? `${report}\n` : `${report}\n\n${dashboard}\n`);
  process.stdout.write(`${report}\n`);
  log(`wrote ${target}`);
}

try {
  await main();
} catch (err) {
  process.exitCode = 1;
  process.stderr.write(`\nbench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n(logs of the children: bench/out/*.log)\n`);
} finally {
  await cleanup();
}

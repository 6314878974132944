/**
 * `npm run bench [-- --quick]`: synthesizes the stack, times the bundles' cold start on Node 24, then runs
 * the deployed bundles on Node 24 against the upstream simulator with billing on (DynamoDB Local), beside
 * Portkey, and reports the goals (BENCHMARKS.md), the AWS cost of 1M requests, write units, CPU by phase, latency.
 * A full run writes BENCHMARKS.md, `--quick` bench/out/BENCHMARKS.quick.md. Everything it starts is
 * stopped on exit, error or Ctrl-C; temporary files are removed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { ACCOUNT_KINDS, measureAccountKinds, renderAccountKinds } from './account-kinds';
import { closePools } from './client';
import { emptyModule, timeImports } from './cold-start';
import { benchConfig, KINDS, measureKind, measureLoad, measureWru, profileKinds, type Kind, type KindResult } from './measure';
import { renderTopFrames } from './profile';
import { renderReport } from './report';
import { stackFunction, synthStack } from './stack';
import { cpuMs, lambdaNode, machineBusyMs, startSystem, type System } from './system';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const cfg = benchConfig(process.argv.includes('--quick'));
const started = performance.now();
const log = (message: string): void =>
  void process.stderr.write(`[bench ${String(Math.round((performance.now() - started) / 1000)).padStart(3)} s] ${message}\n`);
const work = mkdtempSync(join(tmpdir(), 'modelmux-bench-'));
let system: System | undefined;

/** The billing modes, set explicitly whatever the defaults: holds per request, or credit leases. */
const MODES = { holds: { CREDIT_LEASE_VALIDITY_MS: '0' }, leases: { CREDIT_LEASE_VALIDITY_MS: '30000', CREDIT_LEASE_IDLE_MS: '2000' } };

const cleanup = async (): Promise<void> => {
  await closePools();
  await system?.stop();
  rmSync(work, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

async function main(): Promise<void> {
  const node24 = lambdaNode();
  log(`cdk synth${cfg.quick ? ' (quick run)' : ''}`);
  const stack = await synthStack(ROOT, join(work, 'cdk.out'));
  const chat = stackFunction(stack, 'Chat');
  const embeddings = stackFunction(stack, 'Embeddings');

  log(`cold start on Node 24: ${cfg.coldStartRuns} fresh processes per bundle`);
  const variants = [
    { label: 'empty', file: emptyModule(work), env: chat.env },
    ...[chat, embeddings].map((fn) => ({ label: fn.name, file: join(fn.dir, 'index.mjs'), env: fn.env })),
  ];
  const imports = await timeImports(node24, variants, cfg.coldStartRuns);

  log('starting DynamoDB Local, the simulator and the gateway (Node 24, leases)');
  const logDir = join(ROOT, 'bench', 'out');
  mkdirSync(logDir, { recursive: true });
  system = await startSystem(chat, embeddings, logDir, 750);
  const [key] = await system.account(1);
  if (key === undefined) throw new Error('no API key');
  const gateway = await system.startGateway(MODES.leases);

  const pids = [gateway.pid, system.dynamodb.pid, system.simulator.pid, process.pid];
  const [machineBefore, oursBefore, wallBefore] = [machineBusyMs(), (await cpuMs(pids)).reduce((a, b) => a + b, 0), performance.now()];
  const kinds = {} as Record<Kind, KindResult>;
  for (const kind of Object.keys(KINDS) as Kind[]) {
    log(`one invocation at a time: ${KINDS[kind].label}`);
    kinds[kind] = await measureKind(system, gateway, cfg, kind, key);
  }
  const otherCores = (machineBusyMs() - machineBefore - ((await cpuMs(pids)).reduce((a, b) => a + b, 0) - oursBefore)) / (performance.now() - wallBefore);
  log('every kind of account: the dev key, free tokens only, credit only, $0.05, a key with a spend limit');
  const accountKinds = await measureAccountKinds(system, gateway, cfg);
  log('load: buffered chat at c=16, direct, modelmux, Portkey');
  const portkey = await system.startPortkey();
  const [devKey] = await system.account(1, undefined, ACCOUNT_KINDS.dev?.funds);
  const load = await measureLoad(system, gateway, portkey, key, devKey ?? '', cfg.loadSeconds);
  await gateway.exit();

  log('write units on a dashboard account: holds and leases at 1, 10, 50 in flight');
  const wru = await measureWru(system, MODES, cfg.wruRequests);

  log('CPU profile of the request path (a gateway under node --cpu-prof)');
  const profileDir = join(work, 'profile');
  mkdirSync(profileDir);
  const { phases, frames } = await profileKinds(system, MODES.leases, key, cfg, [join(chat.dir, 'index.mjs'), join(embeddings.dir, 'index.mjs')], profileDir);

  const seconds = Math.round((performance.now() - started) / 1000);
  const node = execFileSync(node24, ['--version'], { encoding: 'utf8' }).trim();
  const header = `_Generated by \`npm run bench\`${cfg.quick ? ' --quick' : ''} on ${new Date().toISOString().slice(0, 16)}Z in ${seconds} s; ${cpus().length} cores (${cpus()[0]?.model.trim()}); gateway, Portkey and cold starts on Node ${node} (the bench itself ${process.version}); load average ${loadavg()[0]?.toFixed(1)} at the end. While the gateway was measured one at a time, other processes kept ${Math.max(0, otherCores).toFixed(2)} of the cores busy${otherCores > 0.2 ? ' (a busy machine: the figures are inflated, rerun on a quiet one)' : ''}. The main gateway runs with leases (${Object.entries(
    MODES.leases,
  )
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}), rate limits off, on an account with credit._`;
  const report = renderReport({ cfg, header, stack, imports, kinds, load, wru, phases, leaseEnv: MODES.leases });
  const target = cfg.quick ? join(logDir, 'BENCHMARKS.quick.md') : join(ROOT, 'BENCHMARKS.md');
  const topFramesOf = (kind: Kind, chunks?: number) => ({ label: KINDS[kind].label, frames: frames[kind], ...(chunks === undefined ? {} : { chunks }) });
  const full = `${report}\n\n${renderAccountKinds(accountKinds)}\n\n${renderTopFrames([topFramesOf('chat'), topFramesOf('stream', 12), topFramesOf('stream500', 500)])}`;
  writeFileSync(target, `${full}\n`);
  process.stdout.write(`${full}\n`);
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

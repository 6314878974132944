/**
 * The parts of BENCHMARKS.md below the goals and the cost: CPU per request by phase, latency and
 * streams, load, AWS calls, bundles and cold start; and the formatting and per-request figures that
 * report.ts shares.
 */
import { isRead, isWrite, type AwsCalls } from './aws-calls';
import type { StreamTiming } from './client';
import type { ImportTiming } from './cold-start';
import { KINDS, type BenchConfig, type Kind } from './config';
import { cpuSlowdown, initMs, type RequestFigures } from './cost';
import { percentile, type KindResult, type LoadResult, type PhaseProfile } from './measure';
import type { StoredResponseFigures } from './stored-responses';
import { BENCH_COUNTER_PHASE } from './profile';
import type { StackFunction, StackInfo } from './stack';

/** Everything one run measured (run.ts fills it). */
export interface Results {
  cfg: BenchConfig;
  startedAt: Date;
  seconds: number;
  machine: string;
  /** Cores other processes on the machine kept busy while the gateway was measured (the noise floor). */
  otherCores: number;
  stack: StackInfo;
  /** Labels: `empty`, `<Function>`, `<Function>, no source maps`. */
  imports: ImportTiming[];
  /** One load of the chat bundle under --cpu-prof: ms by category. */
  loadProfile: Map<string, number>;
  kinds: Record<Kind, KindResult>;
  load: LoadResult[];
  concurrentStreams: Record<'direct' | 'modelmux', StreamTiming[]>;
  phases: PhaseProfile;
  /** Average size of a ledger item after the run (DescribeTable), bytes. */
  ledgerBytesPerItem: number;
  /** What storing Responses API responses adds per request (bench/stored-responses.ts). */
  storedResponses?: StoredResponseFigures[];
}

export const num = (x: number, digits?: number): string =>
  !Number.isFinite(x) ? '—' : x.toLocaleString('en-US', { maximumFractionDigits: digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2) });
export const ms = (x: number): string => num(x);
export const signed = (x: number): string => `${x >= 0 ? '+' : ''}${num(x)}`;
export const usd = (x: number): string => `$${x.toFixed(x < 0.1 ? 3 : 2)}`;
export const kb = (bytes: number): string => `${num(bytes / 1024, 1)} KB`;
export const pct = (x: number): string => `${num(100 * x, 1)}%`;
export const table = (head: string[], rows: string[][]): string => [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
export const met = (ok: boolean): string => (ok ? '**met**' : '**not met**');

/**
 * Gateway CPU of the handler path per request: modelmux, minus the stand-in replaying the same answer,
 * minus the bench's own call counter (its profile share).
 */
export function handlerCpu(r: Results, k: Kind): number {
  const kr = r.kinds[k];
  const phases = r.phases[k].phases;
  const busy = [...phases.values()].reduce((a, b) => a + b, 0);
  return kr.cpuPerRequest.modelmux * (1 - (phases.get(BENCH_COUNTER_PHASE) ?? 0) / Math.max(1e-9, busy)) - kr.cpuPerRequest.replay;
}
export const added = (k: KindResult, p: number): number => percentile(k.latencyMs.modelmux ?? [], p) - percentile(k.latencyMs.direct ?? [], p);
export const per = (k: KindResult, x: number): number => x / Math.max(1, k.requests);

/** One request of `kind` as the cost model needs it, per request. */
export function figures(r: Results, kind: Kind): RequestFigures {
  const k = r.kinds[kind];
  const sumOf = (pick: (op: string) => boolean, f: (c: AwsCalls[string]) => number): number => Object.entries(k.calls).filter(([op]) => pick(op)).reduce((s, [, c]) => s + f(c), 0);
  return {
    cpuMs: handlerCpu(r, kind),
    dynamoCalls: per(k, sumOf((op) => op.startsWith('DynamoDB.'), (c) => c.calls)),
    writeUnits: per(k, sumOf(isWrite, (c) => c.capacityUnits)),
    readUnits: per(k, sumOf(isRead, (c) => c.capacityUnits)),
    sqsCalls: per(k, sumOf((op) => op.startsWith('SQS.'), (c) => c.calls)),
    logBytes: per(k, k.logBytes),
    logLines: per(k, k.logLines),
    responseBytes: k.responseBytes,
    decodedResponseBytes: k.decodedResponseBytes,
    requestBytes: k.requestBytes,
  };
}


export function phaseSection(r: Results): string {
  const kinds: Kind[] = ['chat', 'stream', 'embeddings', 'chat500', 'stream500'];
  const names = new Set<string>();
  for (const k of kinds) for (const name of r.phases[k].phases.keys()) names.add(name);
  const busy = (k: Kind): number => [...r.phases[k].phases.values()].reduce((a, b) => a + b, 0);
  const share = (k: Kind, name: string): number => (r.phases[k].phases.get(name) ?? 0) / Math.max(1e-9, busy(k));
  const ordered = [...names].sort((a, b) => share('chat', b) + share('stream', b) - share('chat', a) - share('stream', a));
  const rows = ordered.map((name) => [name, ...kinds.map((k) => `${ms(share(k, name) * r.kinds[k].cpuPerRequest.modelmux)} (${pct(share(k, name))})`)]);
  rows.push(['**total, gateway process** (pidusage, unprofiled run)', ...kinds.map((k) => `**${ms(r.kinds[k].cpuPerRequest.modelmux)}**`)]);
  rows.push(['the stand-in alone: the same answer replayed, no gateway work', ...kinds.map((k) => ms(r.kinds[k].cpuPerRequest.replay))]);
  rows.push(['**handler path** = total − stand-in alone − the bench\'s call counter', ...kinds.map((k) => `**${ms(handlerCpu(r, k))}**`)]);
  rows.push(['profile: busy ms per request while sampled', ...kinds.map((k) => ms(busy(k) / r.phases[k].requests))]);
  return [
    'CPU ms per request (share of the profile). Shares come from a separate gateway process under `node --cpu-prof` (250 µs sampling,',
    'frames mapped to the sources through the bundles\' source maps); each sample goes to the first frame of its stack a phase names,',
    'leaf first (so JSON.parse under our request parser counts as request parse, and zod under it as zod). The stand-in\'s frames',
    '(local/function-url) are its own row; its socket and HTTP-parsing work has no frame of its own and falls in "Node runtime,',
    'unattributed" with ours, so the goal figure instead subtracts the stand-in measured alone: it replays the recorded answer (same',
    'bytes, same pacing) through the same Function URL path.',
    '',
    table(['phase', ...kinds.map((k) => KINDS[k].label)], rows),
  ].join('\n');
}

function gapStats(streams: StreamTiming[], gapMs: number): { p50: number; p99: number; max: number; batched: number; events: number } {
  const gaps = streams.flatMap((s) => s.contentAt.slice(1).map((t, i) => t - (s.contentAt[i] ?? t)));
  const off = gaps.map((g) => Math.abs(g - gapMs));
  return { p50: percentile(gaps, 50), p99: percentile(off, 99), max: Math.max(0, ...off), batched: streams.reduce((n, s) => n + s.batched, 0), events: streams.reduce((n, s) => n + s.contentAt.length, 0) };
}

export function latencySection(r: Results): string {
  const rows = (['chat', 'embeddings', 'stream'] as Kind[]).map((k) => {
    const kr = r.kinds[k];
    const d = kr.latencyMs.direct ?? [];
    const m = kr.latencyMs.modelmux ?? [];
    const rounds = (kr.roundMedians.modelmux ?? []).map((x, i) => x - (kr.roundMedians.direct?.[i] ?? Number.NaN));
    return [`${KINDS[k].label}${KINDS[k].stream ? ' (TTFT)' : ''}`, String(m.length), `${ms(percentile(d, 50))} / ${ms(percentile(d, 99))}`, `${ms(percentile(m, 50))} / ${ms(percentile(m, 99))}`, `${signed(added(kr, 50))} / ${signed(added(kr, 99))}`, `${signed(Math.min(...rounds))} … ${signed(Math.max(...rounds))}`];
  });
  const streamRow = (label: string, s: StreamTiming[]): string[] => {
    const g = gapStats(s, KINDS.stream.gapMs);
    return [label, String(s.length), ms(percentile(s.map((x) => x.firstByteMs), 50)), `${ms(percentile(s.map((x) => x.firstTokenMs), 50))} / ${ms(percentile(s.map((x) => x.firstTokenMs), 99))}`, ms(g.p50), `${ms(g.p99)} / ${ms(g.max)}`, `${g.batched} / ${g.events}`];
  };
  const one = r.kinds.stream.streams;
  return [
    `One invocation at a time: each request waits until the gateway's previous invocation (settle included) has ended, as a Lambda`,
    `container takes its next invocation; "direct" is the same request to the simulator. Send → last byte (buffered) or → first content`,
    `event (streams), ms; nearest-rank percentiles over ${r.cfg.rounds} interleaved rounds.`,
    '',
    table(['request', 'n', 'direct p50 / p99', 'modelmux p50 / p99', 'added p50 / p99', 'added p50, per round'], rows),
    '',
    `Streams, ${KINDS.stream.gapMs} ms between the simulator's events; "batched" = content events that arrived in one socket read with another.`,
    '',
    table(['streams', 'n', 'first byte p50', 'TTFT p50 / p99', 'gap p50', `|gap − ${KINDS.stream.gapMs}| p99 / max`, 'batched / content events'], [
      streamRow('c=1 direct', one.direct ?? []),
      streamRow('c=1 modelmux', one.modelmux ?? []),
      streamRow('c=16 direct', r.concurrentStreams.direct),
      streamRow('c=16 modelmux', r.concurrentStreams.modelmux),
    ]),
  ].join('\n');
}

export function loadSection(r: Results): string {
  const rows = r.load.map((l) => [l.label, l.target, num(l.reqPerSec, 0), `${ms(percentile(l.latencies, 50))} / ${ms(percentile(l.latencies, 99))}`, ms(l.cpuPerRequest.gateway), ms(l.cpuPerRequest.dynamodb), ms(l.cpuPerRequest.simulator), ms(l.cpuPerRequest.client), String(l.failures)]);
  return [
    `autocannon, ${r.cfg.loadSeconds} s per run, closed loop. One gateway process takes every connection (Lambda would give each its own`,
    'container), and client, gateway, simulator and DynamoDB Local share 2 cores: these rows show how one process copes, not how Lambda scales.',
    '',
    table(['run', 'target', 'req/s', 'p50 / p99 ms', 'CPU ms/req: gateway', 'DynamoDB Local', 'simulator', 'client', 'failures'], rows),
  ].join('\n');
}

export function callsSection(r: Results): string {
  const rows = (Object.keys(KINDS) as Kind[]).map((k) => {
    const kr = r.kinds[k];
    const f = figures(r, k);
    const ops = Object.entries(kr.calls).map(([op, c]) => `${op} ×${num(per(kr, c.calls))} (${ms(c.totalMs / Math.max(1, c.calls))} ms${c.errors ? `, ${c.errors} errors` : ''})`).join(', ');
    return [KINDS[k].label, String(kr.requests), ops || 'none', num(f.writeUnits), num(f.readUnits), num(f.logLines), num(f.logBytes, 0), `${num(kr.responseBytes, 0)} / ${num(kr.decodedResponseBytes, 0)}`];
  });
  return [
    'Counted at an SDK middleware in the gateway process (every AWS client the store makes; `ReturnConsumedCapacity` on each DynamoDB',
    'call, so the units are those DynamoDB Local charged: 1 KB writes, 4 KB reads, ×2 in transactions). Caches expire on their own TTLs',
    'during the run, so their refresh reads are included. Log bytes are what the handlers wrote to stdout/stderr.',
    '',
    table(['request (one at a time)', 'n', 'calls per request (avg wall time here)', 'write units / req', 'read units / req', 'log lines / req', 'log bytes / req', 'response bytes: wire / decoded'], rows),
  ].join('\n');
}

export function coldStartSection(r: Results, chatFn: StackFunction, chatImport: ImportTiming | undefined): string {
  const bundles = r.stack.functions.map((f) => [f.name, `${f.memoryMb} MB ${f.architecture}`, kb(f.indexBytes), kb(f.indexGzipBytes), kb(f.mapBytes), kb(f.lazyBytes)]);
  const packages = chatFn.packages.slice(0, 10).map((p) => [p.name, kb(p.bytes), pct(p.bytes / chatFn.indexBytes)]);
  const empty = r.imports.find((i) => i.label === 'empty');
  const imports = r.imports.map((i) => [i.label, `${ms(i.importMs)} (${ms(i.importMinMs)})`, ms(i.readyMs), ms(i.readyCpuMs), i.label === 'empty' ? '—' : signed(i.readyCpuMs - (empty?.readyCpuMs ?? Number.NaN))]);
  const loadBusy = [...r.loadProfile.values()].reduce((a, b) => a + b, 0);
  const load = [...r.loadProfile].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([name, t]) => [name, ms(t), pct(t / loadBusy)]);
  const init = [128, 256, 512, 1024, 1769].map((m) => [`${m} MB`, `×${num(cpuSlowdown(m))}`, ms(initMs(chatImport?.readyCpuMs ?? Number.NaN, m)), ms((chatImport?.importMs ?? Number.NaN) * cpuSlowdown(m))]);
  return [
    'Bundles as `cdk synth` builds them (the construct\'s esbuild options); memory and architecture from the template.',
    '',
    table(['function', 'configured', 'index.mjs', 'gzip -9', 'index.mjs.map', 'lazily imported files'], bundles),
    '',
    table(['package in the chat index.mjs', 'bytes', 'share'], packages),
    '',
    `A fresh \`node\` (${process.version}, this machine) imports the bundle with the function's env and reaches \`handler\`; median (fastest) of ${r.cfg.coldStartRuns} runs, round-robin, ms.`,
    '',
    table(['module', 'import() median (fastest)', 'process start → handler', 'the same, CPU ms', 'CPU over an empty module'], imports),
    '',
    `One profiled load of the chat bundle (\`--cpu-prof\`, 100 µs; sampling slows it, read the shares), busy ${ms(loadBusy)} ms:`,
    '',
    table(['category', 'ms', 'share'], load),
    '',
    'INIT estimated at each memory: this machine\'s CPU time from process start to handler ready (one core; median) slowed to the CPU share.',
    'CPU time, not wall time: on a shared machine the wall time mostly measures the wait for a core. Observations that',
    'INIT runs unthrottled at any memory (bitesizedserverless.com, "When is the Lambda Init Phase Free") would make it an upper bound;',
    'the upstream-key fetch during INIT (network, up to 2 s cap) is not included.',
    '',
    table(['memory', 'CPU slowdown', 'INIT estimate (process start → ready, CPU)', 'import alone (wall)'], init),
  ].join('\n');
}


/**
 * The measured phases. One invocation at a time (as a Lambda container serves them): each request
 * kind goes to the simulator directly, through modelmux, and to the stand-in's replay of the same
 * answer, in interleaved rounds. Then buffered load (autocannon) and concurrent streams against one
 * gateway process, and a profiled run in a second gateway process under `node --cpu-prof`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AwsCalls } from './aws-calls';
import { load, SDK_ACCEPT_ENCODING, sendBuffered, sendStream, type RequestSpec, type StreamTiming } from './client';
import { KINDS, type BenchConfig, type Kind } from './config';
import { hotPathPhase, loadProfile, timeByCategory } from './profile';
import { cpuMs, type Gateway, type System } from './system';

/** Where a request goes: the simulator itself, modelmux, or the stand-in replaying modelmux's answer. */
export type Target = 'direct' | 'modelmux' | 'replay';

/** p in 0..100, nearest rank; NaN for no values. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number);
}

/** The request of `kind` to `target`. */
export function requestSpec(system: System, gateway: Gateway, kind: Kind, target: Target): RequestSpec {
  const spec = KINDS[kind];
  const body = JSON.stringify(spec.body);
  if (target === 'direct') {
    const url = new URL(system.simulator.openaiBaseUrl);
    return { origin: url.origin, path: `${url.pathname.replace(/\/$/, '')}/${spec.path}`, headers: { authorization: 'Bearer sim-key', 'content-type': 'application/json', 'accept-encoding': SDK_ACCEPT_ENCODING }, body };
  }
  const path = target === 'modelmux' ? `/v1/${spec.path}` : `/bench/${spec.path === 'embeddings' ? 'replay-buffered' : 'replay'}/${kind}`;
  return { origin: gateway.origin, path, headers: { authorization: `Bearer ${system.apiKey}`, 'content-type': 'application/json', 'accept-encoding': SDK_ACCEPT_ENCODING }, body };
}

/** One kind, one invocation at a time. */
export interface KindResult {
  kind: Kind;
  /** Buffered: send → last byte; streams: TTFT. Per target, ms, all rounds. */
  latencyMs: Partial<Record<Target, number[]>>;
  /** Per-round medians of `latencyMs` (the noise between rounds). */
  roundMedians: Partial<Record<Target, number[]>>;
  streams: Partial<Record<Target, StreamTiming[]>>;
  /** Gateway CPU per request, ms (pidusage; modelmux and its replay). */
  cpuPerRequest: Record<'modelmux' | 'replay', number>;
  /** AWS calls of the modelmux requests, and what the handlers logged. */
  calls: AwsCalls;
  logBytes: number;
  logLines: number;
  /** Modelmux requests these totals cover. */
  requests: number;
  /** Average bytes of one modelmux answer (headers + body) on the wire (gzip when encoded), the same decoded, and of its request. */
  responseBytes: number;
  decodedResponseBytes: number;
  requestBytes: number;
  /** SSE data events per stream (modelmux); 0 for buffered kinds. */
  chunks: number;
}

const HOP_BY_HOP = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function addCalls(into: AwsCalls, from: AwsCalls): void {
  for (const [op, c] of Object.entries(from)) {
    const e = (into[op] ??= { calls: 0, errors: 0, totalMs: 0, capacityUnits: 0 });
    e.calls += c.calls;
    e.errors += c.errors;
    e.totalMs += c.totalMs;
    e.capacityUnits += c.capacityUnits;
  }
}

/** Sends `n` requests one after the other; gateway targets wait until the previous invocation has ended. */
async function sequence(gateway: Gateway, spec: RequestSpec, kind: Kind, target: Target, n: number): Promise<{ ms: number[]; streams: StreamTiming[]; bytes: number; decodedBytes: number }> {
  const ms: number[] = [];
  const streams: StreamTiming[] = [];
  let bytes = 0;
  let decodedBytes = 0;
  for (let i = 0; i < n; i++) {
    if (target !== 'direct') await gateway.idle();
    if (KINDS[kind].stream) {
      const s = await sendStream(spec);
      streams.push(s);
      ms.push(s.firstTokenMs);
      bytes += s.bytes;
      decodedBytes += s.decodedBytes;
    } else {
      const b = await sendBuffered(spec);
      ms.push(b.ms);
      bytes += b.bytes;
      decodedBytes += b.decodedBytes;
    }
  }
  if (target !== 'direct') await gateway.idle();
  return { ms, streams, bytes, decodedBytes };
}

/** Records one modelmux answer of `kind` for the replay route (headers, and the body as written: gzip reads as base64). */
async function recordReplay(system: System, gateway: Gateway, kind: Kind): Promise<number> {
  const spec = requestSpec(system, gateway, kind, 'modelmux');
  const answer = KINDS[kind].stream ? await sendStream(spec) : await sendBuffered(spec);
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !HOP_BY_HOP.has(k)));
  const base64 = headers['content-encoding'] === 'gzip';
  const frames = base64 ? answer.wire.map((b) => b.toString('base64')) : 'events' in answer ? answer.events : [answer.body];
  await gateway.replay(kind, { headers, frames, base64, gapMs: KINDS[kind].gapMs });
  return 'events' in answer ? answer.events.filter((e) => e.startsWith('data: {')).length : 0;
}

/** Measures `kind` in `cfg.rounds` interleaved rounds (after a short unmeasured warm-up). */
export async function measureKind(system: System, gateway: Gateway, cfg: BenchConfig, kind: Kind): Promise<KindResult> {
  const spec = KINDS[kind];
  await system.pace(spec.gapMs);
  const targets: Target[] = spec.direct ? ['direct', 'modelmux', 'replay'] : ['modelmux', 'replay'];
  const chunks = await recordReplay(system, gateway, kind);
  for (const target of targets) await sequence(gateway, requestSpec(system, gateway, kind, target), kind, target, Math.max(3, Math.round(spec.perRound / 5)));
  await gateway.take();
  const r: KindResult = { kind, latencyMs: {}, roundMedians: {}, streams: {}, cpuPerRequest: { modelmux: 0, replay: 0 }, calls: {}, logBytes: 0, logLines: 0, requests: 0, responseBytes: 0, decodedResponseBytes: 0, requestBytes: Buffer.byteLength(JSON.stringify(spec.body)), chunks };
  const cpu = { modelmux: { ms: 0, n: 0 }, replay: { ms: 0, n: 0 } };
  let bytes = 0;
  let decodedBytes = 0;
  const n = Math.max(2, Math.round(spec.perRound * cfg.perRoundScale));
  for (let round = 0; round < cfg.rounds; round++) {
    for (const target of [...targets.slice(round % targets.length), ...targets.slice(0, round % targets.length)]) {
      const [before] = await cpuMs([gateway.pid]);
      const run = await sequence(gateway, requestSpec(system, gateway, kind, target), kind, target, n);
      const [after] = await cpuMs([gateway.pid]);
      const taken = await gateway.take();
      (r.latencyMs[target] ??= []).push(...run.ms);
      (r.roundMedians[target] ??= []).push(percentile(run.ms, 50));
      if (spec.stream) (r.streams[target] ??= []).push(...run.streams);
      if (target === 'direct') continue;
      cpu[target].ms += (after ?? 0) - (before ?? 0);
      cpu[target].n += n;
      if (target !== 'modelmux') continue;
      addCalls(r.calls, taken.calls);
      r.logBytes += taken.logBytes;
      r.logLines += taken.logLines;
      r.requests += n;
      bytes += run.bytes;
      decodedBytes += run.decodedBytes;
    }
  }
  r.cpuPerRequest = { modelmux: cpu.modelmux.ms / cpu.modelmux.n, replay: cpu.replay.ms / cpu.replay.n };
  r.responseBytes = bytes / Math.max(1, r.requests);
  r.decodedResponseBytes = decodedBytes / Math.max(1, r.requests);
  return r;
}

/** One autocannon run. */
export interface LoadResult {
  label: string;
  target: Target;
  connections: number;
  latencies: number[];
  reqPerSec: number;
  failures: number;
  /** CPU ms per answered request, by process. */
  cpuPerRequest: { gateway: number; dynamodb: number; simulator: number; client: number };
}

/** Buffered load: chat at each configured concurrency and embeddings at 16, direct and through modelmux. */
export async function measureLoad(system: System, gateway: Gateway, cfg: BenchConfig): Promise<LoadResult[]> {
  await system.pace(0);
  const runs: Array<[Kind, number]> = [...cfg.loadConcurrencies.map((c): [Kind, number] => ['chat', c]), ['embeddings', 16]];
  const out: LoadResult[] = [];
  const pids = [gateway.pid, system.dynamodb.pid, system.simulator.pid, process.pid];
  for (const [kind, connections] of runs) {
    for (const target of ['direct', 'modelmux'] as const) {
      const spec = requestSpec(system, gateway, kind, target);
      await load(spec, connections, 1); // warm: connections, JIT
      await gateway.idle();
      const before = await cpuMs(pids);
      const run = await load(spec, connections, cfg.loadSeconds);
      await gateway.idle();
      const after = await cpuMs(pids);
      await system.pace(0); // clears the simulator's request log
      const per = (i: number): number => ((after[i] ?? 0) - (before[i] ?? 0)) / Math.max(1, run.latencies.length);
      out.push({ label: `${KINDS[kind].path === 'embeddings' ? 'embeddings' : 'chat'} c=${connections}`, target, connections, latencies: run.latencies, reqPerSec: (run.latencies.length * 1000) / run.elapsedMs, failures: run.failures, cpuPerRequest: { gateway: per(0), dynamodb: per(1), simulator: per(2), client: per(3) } });
    }
  }
  await gateway.take();
  return out;
}

/** `n` paced 12-chunk streams, 16 at a time, direct and through modelmux: event batching and TTFT under load. */
export async function measureConcurrentStreams(system: System, gateway: Gateway, n: number): Promise<Record<'direct' | 'modelmux', StreamTiming[]>> {
  await system.pace(KINDS.stream.gapMs);
  const out = { direct: [] as StreamTiming[], modelmux: [] as StreamTiming[] };
  for (const target of ['direct', 'modelmux'] as const) {
    const spec = requestSpec(system, gateway, 'stream', target);
    let left = n;
    const worker = async (): Promise<void> => {
      while (left-- > 0) out[target].push(await sendStream(spec, 16));
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  }
  await gateway.idle();
  await gateway.take();
  return out;
}

/** CPU ms per request by phase, for each profiled kind, and the profile's own busy ms per request. */
export type PhaseProfile = Record<Kind, { phases: Map<string, number>; requests: number }>;

/**
 * A second gateway process under `node --cpu-prof` (sampling every 250 µs): each kind one invocation at
 * a time, its window marked by the clock the profile uses (hrtime µs, shared by all processes on Linux).
 */
export async function profileKinds(system: System, cfg: BenchConfig, bundles: string[], dir: string): Promise<PhaseProfile> {
  const gateway = await system.startGateway(['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=250']);
  const windows = new Map<Kind, [number, number]>();
  const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);
  for (const kind of Object.keys(KINDS) as Kind[]) {
    await system.pace(KINDS[kind].gapMs);
    const spec = requestSpec(system, gateway, kind, 'modelmux');
    await sequence(gateway, spec, kind, 'modelmux', Math.max(5, Math.round(cfg.profileRequests[kind] / 5)));
    const from = nowUs();
    await sequence(gateway, spec, kind, 'modelmux', cfg.profileRequests[kind]);
    windows.set(kind, [from, nowUs()]);
  }
  await gateway.exit();
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('the profiled gateway wrote no .cpuprofile');
  const profile = loadProfile(join(dir, file), bundles);
  const out = {} as PhaseProfile;
  for (const [kind, [from, to]] of windows) out[kind] = { phases: timeByCategory(profile, hotPathPhase, from, to), requests: cfg.profileRequests[kind] };
  return out;
}

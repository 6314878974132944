/**
 * The measured phases. One invocation at a time (as a Lambda container serves them): each request kind
 * goes to the simulator directly, through modelmux, and to the stand-in's replay of the same answer, in
 * interleaved rounds. Then buffered load at c=16 (autocannon) beside Portkey, write units on a dashboard
 * account at 1 / 10 / 50 in flight in both billing modes, and a profiled run under `node --cpu-prof`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isWrite, type AwsCalls } from './aws-calls';
import { load, SDK_ACCEPT_ENCODING, sendBuffered, sendStream, type RequestSpec } from './client';
import { loadProfile, timeByPhase, topFrames, type FrameTime } from './profile';
import { cpuMs, type Gateway, type Peer, type System } from './system';

/** The request kinds measured one invocation at a time. */
export type Kind = 'chat' | 'stream' | 'embeddings' | 'chat500' | 'stream500';

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the benchmark, briefly.' }] };

/**
 * Each kind: body, path, pacing (ms between the simulator's stream events), whether it also goes to the
 * simulator directly, and requests per round. The simulator cuts its reply into events of alternately one
 * and two words: 15 words make 10 content events, with role and finish chunks a 12-chunk stream; 750 words
 * make 500 content events (OpenAI's one token per chunk for a 500-token answer).
 */
export const KINDS: Record<
  Kind,
  { label: string; path: 'chat/completions' | 'embeddings'; body: object; stream: boolean; gapMs: number; direct: boolean; perRound: number }
> = {
  chat: {
    label: 'buffered chat, 15 tokens',
    path: 'chat/completions',
    body: { ...CHAT, max_tokens: 15 },
    stream: false,
    gapMs: 0,
    direct: true,
    perRound: 100,
  },
  stream: {
    label: '12-chunk stream, 20 ms apart',
    path: 'chat/completions',
    body: { ...CHAT, max_tokens: 15, stream: true },
    stream: true,
    gapMs: 20,
    direct: true,
    perRound: 10,
  },
  // What the openai SDK sends for `embeddings.create` by default: base64-encoded float32.
  embeddings: {
    label: 'embeddings, 1 input',
    path: 'embeddings',
    body: { model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog', encoding_format: 'base64' },
    stream: false,
    gapMs: 0,
    direct: true,
    perRound: 100,
  },
  chat500: {
    label: 'buffered chat, 500 tokens',
    path: 'chat/completions',
    body: { ...CHAT, max_tokens: 500 },
    stream: false,
    gapMs: 0,
    direct: false,
    perRound: 12,
  },
  stream500: {
    label: '500-chunk stream, unpaced',
    path: 'chat/completions',
    body: { ...CHAT, max_tokens: 750, stream: true },
    stream: true,
    gapMs: 0,
    direct: false,
    perRound: 4,
  },
};

/** How much a run does (rounds of `perRound × perRoundScale`, profiled requests per kind, requests per write-unit level): the full run, or `--quick`. */
export type BenchConfig = ReturnType<typeof benchConfig>;

export function benchConfig(quick: boolean) {
  return quick
    ? {
        quick,
        rounds: 2,
        perRoundScale: 0.3,
        loadSeconds: 2,
        profileRequests: { chat: 150, stream: 12, embeddings: 100, chat500: 10, stream500: 4 },
        coldStartRuns: 3,
        wruRequests: 100,
      }
    : {
        quick,
        rounds: 4,
        perRoundScale: 0.8,
        loadSeconds: 4,
        profileRequests: { chat: 300, stream: 30, embeddings: 200, chat500: 30, stream500: 10 },
        coldStartRuns: 7,
        wruRequests: 300,
      };
}

/** Where a request goes: the simulator itself, modelmux, or the stand-in replaying modelmux's answer. */
export type Target = 'direct' | 'modelmux' | 'replay';

/** p in 0..100, nearest rank; NaN for no values. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number);
}

const headers = (key: string): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  'accept-encoding': SDK_ACCEPT_ENCODING,
});

/** The request of `kind` to `target` with API key `key`. */
export function requestSpec(system: System, gateway: Gateway, kind: Kind, target: Target, key: string): RequestSpec {
  const spec = KINDS[kind];
  const body = JSON.stringify(spec.body);
  if (target === 'direct') {
    const url = new URL(system.simulator.openaiBaseUrl);
    return { origin: url.origin, path: `${url.pathname.replace(/\/$/, '')}/${spec.path}`, headers: headers('sim-key'), body };
  }
  const path = target === 'modelmux' ? `/v1/${spec.path}` : `/bench/${spec.path === 'embeddings' ? 'replay-buffered' : 'replay'}/${kind}`;
  return { origin: gateway.origin, path, headers: headers(key), body };
}

/**
 * One kind, one invocation at a time: latency per target (buffered: send → last byte; streams: TTFT; ms),
 * gateway CPU per request (pidusage, ms), the modelmux requests' AWS calls and log output in all, and the
 * average bytes of one answer (wire and decoded) and of its request.
 */
export interface KindResult {
  latencyMs: Partial<Record<Target, number[]>>;
  cpuPerRequest: Record<'modelmux' | 'replay', number>;
  calls: AwsCalls;
  logBytes: number;
  logLines: number;
  requests: number;
  responseBytes: number;
  decodedResponseBytes: number;
  requestBytes: number;
}

export function addCalls(into: AwsCalls, from: AwsCalls): void {
  for (const [op, c] of Object.entries(from)) {
    const e = (into[op] ??= { calls: 0, errors: 0, totalMs: 0, capacityUnits: 0 });
    e.calls += c.calls;
    e.errors += c.errors;
    e.totalMs += c.totalMs;
    e.capacityUnits += c.capacityUnits;
    for (const [t, u] of Object.entries(c.byTable ?? {})) (e.byTable ??= {})[t] = (e.byTable[t] ?? 0) + u;
  }
}

/** Sends `n` requests one after the other; gateway targets wait until the previous invocation has ended. */
export async function sequence(
  gateway: Gateway,
  spec: RequestSpec,
  kind: Kind,
  target: Target,
  n: number,
): Promise<{ ms: number[]; bytes: number; decodedBytes: number }> {
  const out = { ms: [] as number[], bytes: 0, decodedBytes: 0 };
  for (let i = 0; i < n; i++) {
    if (target !== 'direct') await gateway.idle();
    const answer = await (KINDS[kind].stream ? sendStream : sendBuffered)(spec);
    out.ms.push(answer.ms);
    out.bytes += answer.bytes;
    out.decodedBytes += answer.decodedBytes;
  }
  if (target !== 'direct') await gateway.idle();
  return out;
}

/** Records one modelmux answer of `kind` for the replay route (headers, and the body as written: gzip as base64). */
async function recordReplay(spec: RequestSpec, gateway: Gateway, kind: Kind): Promise<void> {
  const answer = await (KINDS[kind].stream ? sendStream : sendBuffered)(spec);
  const kept = Object.fromEntries(
    Object.entries(answer.headers).filter(([k]) => !['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(k)),
  );
  const base64 = kept['content-encoding'] === 'gzip';
  await gateway.replay(kind, { headers: kept, frames: base64 ? answer.wire.map((b) => b.toString('base64')) : answer.parts, base64, gapMs: KINDS[kind].gapMs });
}

/** Measures `kind` in `cfg.rounds` interleaved rounds (after a short unmeasured warm-up). */
export async function measureKind(system: System, gateway: Gateway, cfg: BenchConfig, kind: Kind, key: string): Promise<KindResult> {
  const spec = KINDS[kind];
  await system.pace(spec.gapMs);
  const targets: Target[] = spec.direct ? ['direct', 'modelmux', 'replay'] : ['modelmux', 'replay'];
  const specOf = (t: Target): RequestSpec => requestSpec(system, gateway, kind, t, key);
  await recordReplay(specOf('modelmux'), gateway, kind);
  for (const target of targets) await sequence(gateway, specOf(target), kind, target, Math.max(3, Math.round(spec.perRound / 5)));
  await gateway.take();
  const r: KindResult = {
    latencyMs: {},
    cpuPerRequest: { modelmux: 0, replay: 0 },
    calls: {},
    logBytes: 0,
    logLines: 0,
    requests: 0,
    responseBytes: 0,
    decodedResponseBytes: 0,
    requestBytes: Buffer.byteLength(JSON.stringify(spec.body)),
  };
  const cpu = { modelmux: 0, replay: 0 };
  const n = Math.max(2, Math.round(spec.perRound * cfg.perRoundScale));
  for (let round = 0; round < cfg.rounds; round++) {
    for (const target of [...targets.slice(round % targets.length), ...targets.slice(0, round % targets.length)]) {
      const [before] = await cpuMs([gateway.pid]);
      const run = await sequence(gateway, specOf(target), kind, target, n);
      const [after] = await cpuMs([gateway.pid]);
      const taken = await gateway.take();
      (r.latencyMs[target] ??= []).push(...run.ms);
      if (target === 'direct') continue;
      cpu[target] += (after ?? 0) - (before ?? 0);
      if (target !== 'modelmux') continue;
      addCalls(r.calls, taken.calls);
      r.logBytes += taken.logBytes;
      r.logLines += taken.logLines;
      r.requests += n;
      r.responseBytes += run.bytes;
      r.decodedResponseBytes += run.decodedBytes;
    }
  }
  const perTarget = n * cfg.rounds;
  return {
    ...r,
    cpuPerRequest: { modelmux: cpu.modelmux / perTarget, replay: cpu.replay / perTarget },
    responseBytes: r.responseBytes / r.requests,
    decodedResponseBytes: r.decodedResponseBytes / r.requests,
  };
}

/** The load row of the dev key. */
export const DEV_KEY_LOAD = 'modelmux, the dev key (200,000 free tokens and $100)';

/** One autocannon run of buffered chat at c=16; `gatewayCpuMs` is the CPU ms per answer of the gateway under test (0 direct). */
export interface LoadResult {
  target: string;
  reqPerSec: number;
  latencies: number[];
  failures: number;
  gatewayCpuMs: number;
  error?: string;
}

/**
 * Buffered chat at c=16 for `seconds`: the simulator directly, modelmux on a credit-only account's key
 * (`key`) and on the dev key (`devKey`: free tokens and credit, as `npm start` makes it), and Portkey in
 * front of the same simulator.
 */
export async function measureLoad(system: System, gateway: Gateway, portkey: Peer, key: string, devKey: string, seconds: number): Promise<LoadResult[]> {
  await system.pace(0);
  const direct = requestSpec(system, gateway, 'chat', 'direct', key);
  const targets: Array<[string, RequestSpec | string, number]> = [
    ['simulator, direct', direct, 0],
    ['modelmux', requestSpec(system, gateway, 'chat', 'modelmux', key), gateway.pid],
    [DEV_KEY_LOAD, requestSpec(system, gateway, 'chat', 'modelmux', devKey), gateway.pid],
    'error' in portkey
      ? [`Portkey`, portkey.error, 0]
      : [
          `Portkey ${portkey.version}`,
          {
            ...direct,
            origin: portkey.origin,
            path: '/v1/chat/completions',
            headers: { ...direct.headers, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': system.simulator.openaiBaseUrl.replace(/\/$/, '') },
          },
          portkey.pid,
        ],
  ];
  const out: LoadResult[] = [];
  for (const [target, spec, pid] of targets) {
    if (typeof spec === 'string') {
      out.push({ target, reqPerSec: Number.NaN, latencies: [], failures: 0, gatewayCpuMs: Number.NaN, error: spec });
      continue;
    }
    await sendBuffered(spec); // a wrong answer stops the bench here, not as a row of errors
    await load(spec, 16, 1); // warm: connections, JIT, leases
    await gateway.idle();
    const [before] = await cpuMs([pid]);
    const run = await load(spec, 16, seconds);
    await gateway.idle();
    const [after] = await cpuMs([pid]);
    const n = Math.max(1, run.latencies.length);
    out.push({
      target,
      reqPerSec: (run.latencies.length * 1000) / run.elapsedMs,
      latencies: run.latencies,
      failures: run.failures,
      gatewayCpuMs: pid === 0 ? 0 : ((after ?? 0) - (before ?? 0)) / n,
    });
  }
  await gateway.take();
  return out;
}

/** Write units per request at one in-flight level, amortized, in all and by table / index; DynamoDB calls per request; TTFT p50 ms. */
export interface WruRow {
  mode: 'holds' | 'leases';
  inFlight: number;
  requests: number;
  wru: number;
  byTable: Record<string, number>;
  callsPerRequest: number;
  ttftP50: number;
}

/**
 * Write units on a dashboard account (an email, 5 keys; a fresh one per level) at 1, 10 and 50 requests in
 * flight: 12-chunk streams 10 ms apart (each ~120 ms long, so the level holds), one gateway per mode. Each
 * level ends after the gateway is idle and CREDIT_LEASE_IDLE_MS has passed, so the lease returns are counted.
 */
export async function measureWru(system: System, modes: Record<'holds' | 'leases', Record<string, string>>, requests: number): Promise<WruRow[]> {
  await system.pace(10);
  const rows: WruRow[] = [];
  for (const [mode, env] of Object.entries(modes) as Array<['holds' | 'leases', Record<string, string>]>) {
    const gateway = await system.startGateway(env);
    const idleMs = Number(env.CREDIT_LEASE_IDLE_MS ?? 2_000) + 500;
    for (const inFlight of [1, 10, 50]) {
      const keys = await system.account(5, `bench-${mode}-${inFlight}-${Date.now()}@example.com`);
      const specs = keys.map((k) => requestSpec(system, gateway, 'stream', 'modelmux', k));
      const n = inFlight === 1 ? Math.ceil(requests / 4) : requests;
      let left = n;
      const ttft: number[] = [];
      await gateway.take();
      const worker = async (): Promise<void> => {
        while (left-- > 0) ttft.push((await sendStream(specs[left % specs.length] as RequestSpec, 50)).ms);
      };
      await Promise.all(Array.from({ length: inFlight }, worker));
      await gateway.idle();
      await new Promise((r) => setTimeout(r, idleMs));
      const calls = (await gateway.take()).calls;
      const writes = Object.entries(calls).filter(([op]) => isWrite(op));
      const byTable: Record<string, number> = {};
      for (const [, c] of writes) for (const [t, u] of Object.entries(c.byTable ?? {})) byTable[t] = (byTable[t] ?? 0) + u / n;
      const callCount = Object.values(calls).reduce((s, c) => s + c.calls, 0);
      rows.push({
        mode,
        inFlight,
        requests: n,
        wru: writes.reduce((s, [, c]) => s + c.capacityUnits, 0) / n,
        byTable,
        callsPerRequest: callCount / n,
        ttftP50: percentile(ttft, 50),
      });
    }
    await gateway.exit();
  }
  return rows;
}

/** CPU ms per request by phase, for each profiled kind. */
export type PhaseProfile = Record<Kind, Map<string, number>>;

/** The profile of each kind: CPU ms per request by phase, and its top frames by self time (ms per request). */
export interface KindProfiles {
  phases: PhaseProfile;
  frames: Record<Kind, FrameTime[]>;
}

/** Frames kept per kind in {@link KindProfiles}. */
const TOP_FRAMES = 15;

/**
 * A second gateway process under `node --cpu-prof` (every 250 µs): each kind one invocation at a time,
 * its window marked by the clock the profile uses (hrtime µs, shared by all processes on Linux).
 */
export async function profileKinds(
  system: System,
  env: Record<string, string>,
  key: string,
  cfg: BenchConfig,
  bundles: string[],
  dir: string,
): Promise<KindProfiles> {
  const gateway = await system.startGateway(env, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=250']);
  const windows = new Map<Kind, [number, number]>();
  const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);
  for (const kind of Object.keys(KINDS) as Kind[]) {
    await system.pace(KINDS[kind].gapMs);
    const spec = requestSpec(system, gateway, kind, 'modelmux', key);
    await sequence(gateway, spec, kind, 'modelmux', Math.max(5, Math.round(cfg.profileRequests[kind] / 5)));
    const from = nowUs();
    await sequence(gateway, spec, kind, 'modelmux', cfg.profileRequests[kind]);
    windows.set(kind, [from, nowUs()]);
  }
  await gateway.exit();
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('the profiled gateway wrote no .cpuprofile');
  const profile = loadProfile(join(dir, file), bundles);
  const phases = {} as PhaseProfile;
  const frames = {} as Record<Kind, FrameTime[]>;
  for (const [kind, [from, to]] of windows) {
    phases[kind] = timeByPhase(profile, from, to);
    frames[kind] = topFrames(profile, from, to, TOP_FRAMES).map((f) => ({ ...f, ms: f.ms / cfg.profileRequests[kind] }));
  }
  return { phases, frames };
}

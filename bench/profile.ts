/**
 * Reading `node --cpu-prof` profiles: frames of a bundle are mapped back to their sources with the
 * bundle's own source map, and each sample's time goes to a category chosen from its stack.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import type { Profiler, Runtime } from 'node:inspector';
import { pathToFileURL } from 'node:url';

/** A profile whose frames carry source paths (`functions/…`, `node_modules/zod/…`, `node:…`), with each node's parent. */
export interface SourceProfile {
  profile: Profiler.Profile;
  parent: Map<number, number>;
  byId: Map<number, Profiler.ProfileNode>;
}

/** `../../node_modules/zod/x.js` → `node_modules/zod/x.js`; `…/functions/a.ts` → `functions/a.ts`. */
function sourcePath(original: string): string {
  const nm = original.lastIndexOf('node_modules/');
  if (nm >= 0) return original.slice(nm);
  return /(?:^|\/)((?:functions|local|lib|bench)\/.*)$/.exec(original)?.[1] ?? original;
}

/**
 * Loads `file` and rewrites every frame of each bundle in `bundles` (paths of `index.mjs`, whose
 * `.map` sits beside it) to its source path, line and name. Frames with no source position (the
 * module body, esbuild's glue) become `bundle:top-level`.
 */
export function loadProfile(file: string, bundles: string[]): SourceProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profiler.Profile;
  const maps = new Map(bundles.map((b) => [pathToFileURL(b).href, new SourceMap(JSON.parse(readFileSync(`${b}.map`, 'utf8')) as SourceMapPayload)]));
  for (const node of profile.nodes) {
    const frame: Runtime.CallFrame = node.callFrame;
    const map = maps.get(frame.url);
    if (map === undefined) {
      if (frame.url.startsWith('file://')) frame.url = sourcePath(frame.url);
      continue;
    }
    const entry = map.findEntry(Math.max(0, frame.lineNumber), Math.max(0, frame.columnNumber));
    if (!('originalSource' in entry) || typeof entry.originalSource !== 'string') {
      frame.url = 'bundle:top-level';
      continue;
    }
    frame.url = sourcePath(entry.originalSource);
    frame.lineNumber = entry.originalLine;
    if ('name' in entry && typeof entry.name === 'string' && entry.name !== '') frame.functionName = entry.name;
  }
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { profile, parent, byId: new Map(profile.nodes.map((n) => [n.id, n])) };
}

/**
 * CPU time (ms) per category of the samples taken in `[fromUs, toUs]` (the profile's clock, which is
 * `process.hrtime` in µs on Linux); idle time left out. Each sample is charged the time until the next.
 */
export function timeByPhase(p: SourceProfile, fromUs: number, toUs: number): Map<string, number> {
  const samples = p.profile.samples ?? [];
  const deltas = p.profile.timeDeltas ?? [];
  const memo = new Map<number, string>();
  const out = new Map<string, number>();
  let at = p.profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    const id = samples[i] ?? -1;
    if (at < fromUs || at > toUs || p.byId.get(id)?.callFrame.functionName === '(idle)') continue;
    let category = memo.get(id);
    if (category === undefined) {
      const stack: Runtime.CallFrame[] = [];
      for (let n: number | undefined = id; n !== undefined; n = p.parent.get(n)) {
        const node = p.byId.get(n);
        if (node) stack.push(node.callFrame);
      }
      category = hotPathPhase(stack);
      memo.set(id, category);
    }
    out.set(category, (out.get(category) ?? 0) + Math.max(0, deltas[i + 1] ?? 0) / 1000);
  }
  return out;
}

/** Phase of the bench's AWS call counter: in the gateway's samples, but not the gateway's cost. */
export const BENCH_COUNTER_PHASE = 'bench: AWS call counter (middleware)';

/**
 * The request path's phases, matched leaf first: a sample belongs to the first frame of its stack that
 * one of these names (so JSON.parse called by our parser counts as "request parse", zod called by it
 * as "zod"). The order puts libraries before the code of ours that calls them.
 */
const PHASES: Array<[string, RegExp]> = [
  [BENCH_COUNTER_PHASE, /^bench\/aws-calls/],
  ['bench: IPC with the bench, replay route', /^bench\//],
  ['Function URL stand-in (local only)', /^local\/function-url\//],
  ['logging (Powertools)', /@aws-lambda-powertools\/|^functions\/shared\/observability\//],
  ['AWS SDK calls (DynamoDB: serialize, sign, HTTP, parse)', /node_modules\/(@aws-sdk|@smithy|@aws-crypto)\//],
  ['zod validation', /node_modules\/zod\//],
  ['upstream HTTP client (fetch)', /^node:internal\/deps\/undici|node_modules\/undici\//],
  ['SSE decode + encode', /node_modules\/eventsource-parser\/|^functions\/shared\/sse\//],
  ['provider adapter (request, response, chunks)', /^functions\/shared\/providers\//],
  ['routing (attempts, upstream call)', /^functions\/shared\/routing\//],
  ['auth (key hash, cached lookup)', /^functions\/shared\/accounts\//],
  ['billing (admit, hold, price, settle)', /^functions\/shared\/(billing|store)\/|^functions\/shared\/app\/settle/],
  ['request parse (JSON, checks)', /^functions\/shared\/openai\//],
  ['edge + route core (event, dispatch, response writes)', /^functions\/|^bundle:top-level/],
];

/** Phase of a hot-path sample ({@link PHASES}; else GC, V8, or the Node runtime no frame of ours claims). */
const hotPathPhase = (stack: Runtime.CallFrame[]): string => {
  for (const frame of stack) for (const [phase, pattern] of PHASES) if (pattern.test(frame.url)) return phase;
  const leaf = stack[0]?.functionName ?? '';
  if (leaf === '(garbage collector)') return 'GC';
  if (leaf === '(program)') return 'V8 (program)';
  return 'Node runtime, unattributed (sockets, HTTP parsing, timers, microtasks)';
};

/** One frame's self time: where a CPU sample's leaf was (`name url:line`, source-mapped), ms. */
export interface FrameTime {
  frame: string;
  ms: number;
}

/**
 * The `n` frames with the most self time among the samples in `[fromUs, toUs]` (idle left out), ms
 * summed over the window; each sample is charged the time until the next, as in {@link timeByPhase}.
 */
export function topFrames(p: SourceProfile, fromUs: number, toUs: number, n: number): FrameTime[] {
  const samples = p.profile.samples ?? [];
  const deltas = p.profile.timeDeltas ?? [];
  const self = new Map<string, number>();
  let at = p.profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    const f = p.byId.get(samples[i] ?? -1)?.callFrame;
    if (at < fromUs || at > toUs || f === undefined || f.functionName === '(idle)') continue;
    // A lazily loaded file beside a bundle (the tokenizer) has no source map: named by its file.
    const url = f.url.replace(/^file:\/\/.*\/asset\.[0-9a-f]+\//, 'asset:');
    const frame = `${f.functionName || '(anonymous)'} ${url || '(native)'}${url ? `:${f.lineNumber + 1}` : ''}`;
    self.set(frame, (self.get(frame) ?? 0) + Math.max(0, deltas[i + 1] ?? 0) / 1000);
  }
  return [...self]
    .map(([frame, ms]) => ({ frame, ms }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, n);
}

/**
 * "Top frames" section of BENCHMARKS.md: for each profiled kind, its frames with the most self time,
 * in ms per request, and in µs per chunk for a kind that streams `chunks` chunks.
 */
export function renderTopFrames(kinds: Array<{ label: string; frames: FrameTime[]; chunks?: number }>): string {
  const out = [
    '## Top frames by self time',
    '',
    "The profile above (`node --cpu-prof`), by frame: the function a sample's leaf was in, mapped through the bundles' source maps (`node:` frames are Node's own, `(native)` V8's or libuv's). Self time only: a frame's callees are theirs.",
  ];
  for (const k of kinds) {
    const chunked = k.chunks !== undefined;
    out.push(
      '',
      `**${k.label}**`,
      '',
      chunked ? '| # | frame | ms per request | µs per chunk |' : '| # | frame | ms per request |',
      chunked ? '|---|---|---|---|' : '|---|---|---|',
    );
    k.frames.forEach((f, i) => {
      const cells = [
        String(i + 1),
        `\`${f.frame.replace(/\|/g, '\\|')}\``,
        f.ms.toFixed(3),
        ...(chunked ? [((f.ms * 1000) / (k.chunks ?? 1)).toFixed(1)] : []),
      ];
      out.push(`| ${cells.join(' | ')} |`);
    });
  }
  return out.join('\n');
}

/**
 * Reads a `.cpuprofile` (Chrome DevTools / V8 format) and says where the CPU went: self time by
 * function, by category (our code, AWS SDK, zod, Node internals, GC…), and self time charged to the
 * nearest frame in our own code (functions/** or local/**), which is the actionable view: "this line
 * of ours causes that much SDK or JSON work".
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Profiler, Runtime } from 'node:inspector';

/** One row of a ranking, ms of CPU. */
export interface Hotspot {
  /** `functionName file:line` (file relative to the repository, line 1-based). */
  where: string;
  selfMs: number;
  /** Share of busy (non-idle) time, 0..1. */
  share: number;
}

/** What a profile shows. */
export interface ProfileSummary {
  /** Wall time covered, ms. */
  durationMs: number;
  /** Sampled time not idle, ms. */
  busyMs: number;
  /** Category → self ms. */
  categories: Record<string, number>;
  /** Functions by self time, any code. */
  topSelf: Hotspot[];
  /** Our frames (functions/**, local/**) with the self time of everything they call outside our code. */
  topOwn: Hotspot[];
}

/** Pseudo-URL for bundle code without a source position (its module body, esbuild's wrappers). */
export const BUNDLE_TOP_LEVEL = 'bundle:top-level';

function fileOf(url: string, root: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith('/') ? relative(root, path) : path;
}

/** Which bucket a frame's self time goes to. */
export function categoryOf(frame: Runtime.CallFrame, root: string): string {
  const name = frame.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'V8/native (program)';
  if (name === '(root)') return 'root';
  if (name === 'compileSourceTextModule' || name === 'compileFunction') return 'V8 parse + compile of module source';
  if (name === 'compileForInternalLoader') return 'Node built-in modules (load)';
  if (frame.url.startsWith(BUNDLE_TOP_LEVEL)) return 'bundle module body + esbuild glue (no source position)';
  const file = fileOf(frame.url, root);
  if (file === '') return 'native / builtins';
  if (file.startsWith('node:')) return 'Node internals (http, streams, net)';
  if (/node_modules\/(@aws-sdk|@smithy|@aws-crypto)\//.test(file)) return 'AWS SDK (DynamoDB client)';
  if (file.includes('node_modules/@aws-lambda-powertools/')) return 'Powertools logger';
  if (file.includes('node_modules/zod/')) return 'zod';
  if (file.includes('node_modules/')) return 'other dependencies';
  if (file.startsWith('functions/')) return 'functions/** (our code)';
  if (file.startsWith('local/')) return 'local/** (stand-in)';
  if (file.startsWith('bench/')) return 'bench (call counter, profiler)';
  return 'other';
}

function isOwn(frame: Runtime.CallFrame, root: string): boolean {
  const file = fileOf(frame.url, root);
  return file.startsWith('functions/') || file.startsWith('local/');
}

function label(frame: Runtime.CallFrame, root: string): string {
  const file = fileOf(frame.url, root);
  const name = frame.functionName || '(anonymous)';
  return file === '' ? name : `${name} ${file}:${frame.lineNumber + 1}`;
}

/** Rewrites a call frame (e.g. bundle position → original source); returns it unchanged when unknown. */
export type FrameRemap = (frame: Runtime.CallFrame) => Runtime.CallFrame;

/**
 * Summarises a profile file; `root` is the repository root (for relative paths); `top` rows per
 * ranking; `remap` maps frames of bundled code back to their sources.
 */
export function summarizeProfile(file: string, root: string, top = 10, remap?: FrameRemap): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profiler.Profile;
  if (remap !== undefined) for (const node of profile.nodes) node.callFrame = remap(node.callFrame);
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; charge it to sample i-1's node (what ran meanwhile).
  for (let i = 1; i < samples.length; i++) {
    const id = samples[i - 1] ?? -1;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, deltas[i] ?? 0));
  }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const categories: Record<string, number> = {};
  const self = new Map<string, number>();
  const own = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const category = categoryOf(node.callFrame, root);
    categories[category] = (categories[category] ?? 0) + us / 1000;
    if (category === 'idle' || category === 'root') continue;
    busyUs += us;
    const key = label(node.callFrame, root);
    self.set(key, (self.get(key) ?? 0) + us);
    let at: number | undefined = id;
    while (at !== undefined && !isOwn(byId.get(at)?.callFrame ?? node.callFrame, root)) at = parent.get(at);
    const owner = at === undefined ? undefined : byId.get(at);
    const ownKey = owner === undefined ? '(not under our code: Node/SDK callbacks, GC)' : label(owner.callFrame, root);
    own.set(ownKey, (own.get(ownKey) ?? 0) + us);
  }
  const rank = (m: Map<string, number>): Hotspot[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([where, us]) => ({ where, selfMs: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }));
  return {
    durationMs: (profile.endTime - profile.startTime) / 1000,
    busyMs: busyUs / 1000,
    categories,
    topSelf: rank(self),
    topOwn: rank(own),
  };
}

/**
 * Inclusive CPU time of chosen code in a `.cpuprofile`: a sample counts for a matcher when any frame
 * of its stack matches. Async continuations start new stacks, so this is a lower bound for code that
 * awaits (e.g. an SDK call's response handling is not under the caller's frame).
 */
import { readFileSync } from 'node:fs';
import type { Profiler, Runtime } from 'node:inspector';

/** A named predicate on call frames. */
export interface FrameMatcher {
  label: string;
  test(frame: Runtime.CallFrame): boolean;
}

/** Inclusive time of one matcher. */
export interface InclusiveTime {
  label: string;
  ms: number;
  /** Share of busy (non-idle) time, 0..1. */
  share: number;
}

/** Inclusive ms and share of busy time for each matcher. */
export function inclusiveTimes(file: string, matchers: FrameMatcher[]): InclusiveTime[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profiler.Profile;
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const totals = matchers.map(() => 0);
  const hit = new Map<number, boolean[]>(); // node id → which matchers its stack contains (memo)
  const stackHits = (id: number): boolean[] => {
    const known = hit.get(id);
    if (known) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const above = up === undefined ? matchers.map(() => false) : stackHits(up);
    const mine = node === undefined ? above : above.map((h, i) => h || (matchers[i]?.test(node.callFrame) ?? false));
    hit.set(id, mine);
    return mine;
  };
  let busy = 0;
  for (let i = 1; i < samples.length; i++) {
    const id = samples[i - 1] ?? -1;
    const us = Math.max(0, deltas[i] ?? 0);
    if (byId.get(id)?.callFrame.functionName === '(idle)') continue;
    busy += us;
    stackHits(id).forEach((h, m) => {
      if (h) totals[m] = (totals[m] ?? 0) + us;
    });
  }
  return matchers.map((m, i) => ({ label: m.label, ms: (totals[i] ?? 0) / 1000, share: busy > 0 ? (totals[i] ?? 0) / busy : 0 }));
}

/** Matchers for the gateway's known cost centres. */
export const HOT_PATH_MATCHERS: FrameMatcher[] = [
  { label: 'AWS SDK, any frame (DynamoDB client: middleware, serde, signing, node-http-handler)', test: (f) => /node_modules\/(@aws-sdk|@smithy)\//.test(f.url) },
  { label: '— SigV4 signing (@smithy/signature-v4 signRequest)', test: (f) => f.functionName === 'signRequest' && f.url.includes('signature-v4') },
  { label: '— SDK log filtering with no logger (loggerMiddleware → schemaLogFilter)', test: (f) => f.functionName === 'schemaLogFilter' },
  { label: '— SDK middleware stack resolved per call (resolveMiddleware)', test: (f) => f.functionName === 'resolveMiddleware' && /node_modules\/(@smithy\/core|@aws-sdk\/lib-dynamodb)\//.test(f.url) },
  { label: '— SDK endpoint resolution per call (endpointMiddleware)', test: (f) => f.url.includes('@smithy/core/dist-cjs/submodules/endpoints') },
  { label: 'Powertools logger (request log lines)', test: (f) => f.url.includes('@aws-lambda-powertools/logger') },
  { label: 'zod (request validation, upstream response parsing)', test: (f) => f.url.includes('node_modules/zod/') },
  { label: 'Upstream HTTP attempt (functions/shared/routing/upstream-call.ts)', test: (f) => f.url.endsWith('functions/shared/routing/upstream-call.ts') },
  { label: 'Function URL stand-in (local/function-url/**)', test: (f) => f.url.includes('/local/function-url/') },
  { label: 'API key SHA-256 (hashApiKey)', test: (f) => f.functionName === 'hashApiKey' },
  { label: 'Garbage collector', test: (f) => f.functionName === '(garbage collector)' },
];

/**
 * Where a bundle's load time goes: one fresh process loads it under `--cpu-prof`, and the profile's
 * bundle positions are mapped back to sources with the bundle's own source map (`index.mjs.map`).
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Runtime } from 'node:inspector';
import { lambdaEnv, runnerSource } from './cold-start';
import { BUNDLE_TOP_LEVEL, summarizeProfile, type ProfileSummary } from './profile-summary';

/** `../../node_modules/zod/x.js` → `node_modules/zod/x.js`; `…/functions/a.ts` → `functions/a.ts`. */
function sourcePath(original: string): string {
  const nm = original.lastIndexOf('node_modules/');
  if (nm >= 0) return original.slice(nm);
  const own = /(?:^|\/)((?:functions|local|lib)\/.*)$/.exec(original);
  return own?.[1] ?? original;
}

/**
 * Profiles one load of `bundleDir/index.mjs` (sampling every `intervalUs` µs; profiling slows the
 * load, so read shares, not absolute ms) into `outDir` and summarises it against `root`.
 */
export async function profileColdStart(bundleDir: string, outDir: string, root: string, intervalUs = 100): Promise<ProfileSummary> {
  const bundle = join(bundleDir, 'index.mjs');
  await new Promise<void>((resolve, reject) => {
    const args = ['--cpu-prof', `--cpu-prof-dir=${outDir}`, `--cpu-prof-interval=${intervalUs}`, '--input-type=module', '-e', runnerSource(pathToFileURL(bundle).href)];
    execFile(process.execPath, args, { env: lambdaEnv(false), timeout: 30_000 }, (err, _stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve()));
  });
  const file = readdirSync(outDir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('node --cpu-prof wrote no profile');
  const map = new SourceMap(JSON.parse(readFileSync(join(bundle + '.map'), 'utf8')) as SourceMapPayload);
  const bundleUrl = pathToFileURL(bundle).href;
  const remap = (frame: Runtime.CallFrame): Runtime.CallFrame => {
    if (frame.url !== bundleUrl || frame.lineNumber < 0) return frame;
    const entry = map.findEntry(frame.lineNumber, Math.max(0, frame.columnNumber));
    // No source: the bundle's own module body and esbuild's glue (lazy-init wrappers).
    if (!('originalSource' in entry) || typeof entry.originalSource !== 'string') return { ...frame, url: BUNDLE_TOP_LEVEL };
    // Minified identifiers (`y5`) → the source's name where the map records one.
    const name = 'name' in entry && typeof entry.name === 'string' && entry.name !== '' ? entry.name : frame.functionName;
    return { ...frame, functionName: name, url: join(root, sourcePath(entry.originalSource)), lineNumber: entry.originalLine, columnNumber: entry.originalColumn };
  };
  return summarizeProfile(join(outDir, file), root, 10, remap);
}

/**
 * Cold start of a bundle: a fresh `node` imports it and reaches its `handler`, as Lambda's INIT does
 * (minus the runtime's own bootstrap), with `--enable-source-maps` as deployed and without. The
 * handlers read their env at load, so the process gets the function's literal env from the template.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { loadCategory, loadProfile, timeByCategory } from './profile';

const run = promisify(execFile);

/** One module to load. */
export interface ImportVariant {
  label: string;
  /** Absolute path of the module (an `index.mjs`). */
  file: string;
  sourceMaps: boolean;
  env: Record<string, string>;
}

/** Medians over the runs of one variant, ms. */
export interface ImportTiming {
  label: string;
  runs: number;
  /** `await import()` of the module until `handler` is in hand. */
  importMs: number;
  /** The fastest import: the run least disturbed by anything else on the machine. */
  importMinMs: number;
  /** Process start (Node bootstrap) → handler in hand. */
  readyMs: number;
  /**
   * CPU time of the process from its start until the handler is in hand (user + system). On a shared
   * machine it is far steadier than the wall time (waiting for a core is not counted), and it is what
   * Lambda's CPU share slows down: the INIT estimates and the right-sizing use it.
   */
  readyCpuMs: number;
}

/** `node -e` source: the `awslambda` global the chat bundle needs at load, a timed import, one JSON line. */
function runner(file: string): string {
  return [
    'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };',
    'const t0 = performance.now();',
    `const mod = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    "if (typeof mod.handler !== 'function') throw new Error('no handler export');",
    'const cpu = process.cpuUsage();',
    'process.stdout.write(JSON.stringify({ importMs: performance.now() - t0, readyMs: performance.now(), readyCpuMs: (cpu.user + cpu.system) / 1000 }));',
  ].join('\n');
}

/** The process env of a load: the function's env, dummy credentials, and nothing of ours. */
function loadEnv(v: ImportVariant): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', ...v.env };
  // The stack leaves NODE_OPTIONS unset (no runtime source maps); the other variant adds --enable-source-maps.
  if (v.sourceMaps) env.NODE_OPTIONS = '--enable-source-maps';
  else delete env.NODE_OPTIONS;
  // No secret to read at INIT (the handlers then skip the prefetch, as locally).
  delete env.UPSTREAM_SECRET_ARN;
  return env;
}

type Sample = { importMs: number; readyMs: number; readyCpuMs: number };

async function loadOnce(v: ImportVariant, extraArgs: string[] = []): Promise<Sample> {
  const { stdout } = await run(process.execPath, [...extraArgs, '--input-type=module', '-e', runner(v.file)], { env: loadEnv(v), timeout: 60_000 });
  return JSON.parse(stdout) as Sample;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

/**
 * Loads every variant `runs` times, round-robin (so drift and other load hit all alike), after one
 * unmeasured load each (the page cache warm, as on a Lambda host).
 */
export async function timeImports(variants: ImportVariant[], runs: number): Promise<ImportTiming[]> {
  const samples = variants.map(() => [] as Sample[]);
  for (const v of variants) await loadOnce(v);
  for (let r = 0; r < runs; r++) for (const [i, v] of variants.entries()) samples[i]?.push(await loadOnce(v));
  return variants.map((v, i) => {
    const list = samples[i] ?? [];
    return { label: v.label, runs: list.length, importMs: median(list.map((s) => s.importMs)), importMinMs: Math.min(...list.map((s) => s.importMs)), readyMs: median(list.map((s) => s.readyMs)), readyCpuMs: median(list.map((s) => s.readyCpuMs)) };
  });
}

/** A module with only a handler: the floor of a Node process start. */
export function emptyModule(dir: string): string {
  const file = join(dir, 'empty-handler.mjs');
  writeFileSync(file, 'export const handler = async () => ({ statusCode: 200 });\n');
  return file;
}

/**
 * Where one load's CPU goes (`node --cpu-prof`, sampling every 100 µs, frames mapped to sources with the
 * bundle's map), ms by category. Sampling slows the load: read the shares.
 */
export async function profileImport(v: ImportVariant): Promise<Map<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'modelmux-load-profile-'));
  try {
    await loadOnce({ ...v, sourceMaps: false }, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100']);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error('node --cpu-prof wrote no profile');
    return timeByCategory(loadProfile(join(dir, file), [v.file]), loadCategory);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

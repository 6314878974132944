/**
 * Cold start of a bundle: a fresh `node` process imports it and reaches its `handler`, as Lambda's
 * INIT does (minus the runtime's own bootstrap). `globalThis.awslambda` is shimmed first, because
 * the chat bundle calls `awslambda.streamifyResponse` at load; the environment carries what the
 * handlers read at load (table names, region, dummy credentials, Powertools settings).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pick } from './json-pick';
import { median, range } from './stats';

/** One process start, ms since the process's time origin (performance.now()). */
interface LoadSample {
  /** The `import()` of the bundle alone. */
  importMs: number;
  /** Process start → handler in hand (Node bootstrap + import). */
  readyMs: number;
}

/** Medians (and the fastest import) over the runs of one bundle, ms. */
export interface ColdStart {
  runs: number;
  importMs: number;
  /** Fastest import: the least disturbed by other work on the machine, ms. */
  importMinMs: number;
  readyMs: number;
  /** readyMs minus the same for an empty module: what the bundle itself adds. */
  addedMs: number;
}

/** Code run by `node --input-type=module -e`: shim, timed import, one JSON line. */
export function runnerSource(moduleUrl: string): string {
  return [
    "globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };",
    'const t0 = performance.now();',
    `const mod = await import(${JSON.stringify(moduleUrl)});`,
    'const t1 = performance.now();',
    "if (typeof mod.handler !== 'function') throw new Error('no handler export');",
    'process.stdout.write(JSON.stringify({ importMs: t1 - t0, readyMs: t1 }));',
  ].join('\n');
}

/** What the handlers read at load in Lambda (values are placeholders; nothing is called at load). */
export function lambdaEnv(sourceMaps: boolean): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    KEYS_TABLE: 'bench-keys',
    ACCOUNTS_TABLE: 'bench-accounts',
    LEDGER_TABLE: 'bench-ledger',
    POWERTOOLS_SERVICE_NAME: 'modelmux',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
  };
}

function loadOnce(moduleUrl: string, sourceMaps: boolean): Promise<LoadSample> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', runnerSource(moduleUrl)], { env: lambdaEnv(sourceMaps), timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`loading ${moduleUrl} failed: ${stderr || err.message}`));
      const parsed: unknown = JSON.parse(stdout);
      const importMs = pick(parsed, 'importMs');
      const readyMs = pick(parsed, 'readyMs');
      if (typeof importMs !== 'number' || typeof readyMs !== 'number') return reject(new Error(`bad runner output: ${stdout}`));
      resolve({ importMs, readyMs });
    });
  });
}

/** A module with nothing but a handler, for the baseline (written to `dir`). */
export function writeEmptyModule(dir: string): string {
  const file = join(dir, 'empty-handler.mjs');
  writeFileSync(file, 'export const handler = async () => ({ statusCode: 200 });\n');
  return file;
}

/** One module to load, with or without `--enable-source-maps`. */
export interface LoadVariant {
  file: string;
  sourceMaps: boolean;
}

/**
 * Loads each variant `runs` times in fresh processes, round-robin (so drift and other load on the
 * machine hit all alike), and returns medians in the order given. The first variant should be the
 * empty module; `addedMs` is relative to it.
 */
export async function measureColdStarts(variants: LoadVariant[], runs: number): Promise<ColdStart[]> {
  const samples: LoadSample[][] = variants.map(() => []);
  const urls = variants.map((v) => pathToFileURL(v.file).href);
  for (const [i, v] of variants.entries()) await loadOnce(urls[i] ?? '', v.sourceMaps); // page cache warm, as on a Lambda host
  for (let r = 0; r < runs; r++) {
    for (const [i, v] of variants.entries()) samples[i]?.push(await loadOnce(urls[i] ?? '', v.sourceMaps));
  }
  const baseline = median((samples[0] ?? []).map((s) => s.readyMs));
  return samples.map((list) => {
    const readyMs = median(list.map((s) => s.readyMs));
    const imports = list.map((s) => s.importMs);
    return { runs: list.length, importMs: median(imports), importMinMs: range(imports).min, readyMs, addedMs: readyMs - baseline };
  });
}

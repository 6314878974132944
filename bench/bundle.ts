/**
 * The deployed bundles, built by `cdk synth` exactly as the GatewayFunction construct builds them
 * (ESM, minified, tokenizer in its own file, esbuild metafile), into a temporary cdk.out: their sizes
 * and what fills them (esbuild metafile, `bytesInOutput` per package).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pick } from './json-pick';

/** One Lambda function's bundle. */
export interface FunctionBundle {
  /** `Chat`, `Embeddings` (the construct path under the stack). */
  name: string;
  /** Directory of the asset (index.mjs, index.mjs.map, tokenizer). */
  dir: string;
  /** Minified `index.mjs`, bytes. */
  indexBytes: number;
  /** `index.mjs` gzip -9, bytes (close to its share of the deployment zip). */
  indexGzipBytes: number;
  /** `index.mjs.map`, bytes (read by Node at load when --enable-source-maps is on). */
  mapBytes: number;
  /** The lazily imported tokenizer file, bytes (0 if absent). */
  tokenizerBytes: number;
  /** Packages by bytes in `index.mjs`, largest first (own sources as `functions/**`). */
  packages: Array<{ name: string; bytes: number }>;
}

/** Name of the lazily loaded tokenizer file (lib/constructs/gateway-function.ts TOKENIZER_FILE). */
const TOKENIZER_FILE = 'tokenizer-o200k.mjs';

/** `…/node_modules/@scope/pkg/x.js` → `@scope/pkg`; own sources → their top folder + `/**`. */
export function packageOf(inputPath: string): string {
  const at = inputPath.lastIndexOf('node_modules/');
  if (at < 0) {
    const top = inputPath.replace(/^(\.\.\/)+/, '').split('/')[0] ?? inputPath;
    return `${top}/** (own code)`;
  }
  const parts = inputPath.slice(at + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? inputPath);
}

/** Bytes per package of the output file named `index.mjs` in an esbuild metafile. */
function packagesOf(metafile: string): Array<{ name: string; bytes: number }> {
  const meta: unknown = JSON.parse(readFileSync(metafile, 'utf8'));
  const outputs = pick(meta, 'outputs');
  if (typeof outputs !== 'object' || outputs === null) return [];
  const key = Object.keys(outputs).find((k) => k === 'index.mjs' || k.endsWith('/index.mjs'));
  const inputs = key === undefined ? undefined : pick(outputs, key, 'inputs');
  if (typeof inputs !== 'object' || inputs === null) return [];
  const totals = new Map<string, number>();
  for (const [path, info] of Object.entries(inputs)) {
    const bytes = pick(info, 'bytesInOutput');
    if (typeof bytes === 'number') totals.set(packageOf(path), (totals.get(packageOf(path)) ?? 0) + bytes);
  }
  return [...totals.entries()].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/**
 * Runs `cdk synth --quiet -o outDir` (offline: no version check, no telemetry) in `root`.
 * @throws Error with cdk's output when it fails.
 */
export function synth(root: string, outDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', outDir], {
      cwd: root,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1', CDK_DISABLE_CLI_TELEMETRY: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output = (output + b.toString()).slice(-4_000)));
    child.stderr.on('data', (b: Buffer) => (output = (output + b.toString()).slice(-4_000)));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`cdk synth exited with ${code}:\n${output}`))));
  });
}

/** The Lambda functions of a synthesised stack `stack` in `outDir`, with their bundles measured. */
export function readBundles(outDir: string, stack = 'Modelmux'): FunctionBundle[] {
  const template: unknown = JSON.parse(readFileSync(join(outDir, `${stack}.template.json`), 'utf8'));
  const resources = pick(template, 'Resources');
  if (typeof resources !== 'object' || resources === null) throw new Error('template has no Resources');
  const bundles: FunctionBundle[] = [];
  for (const resource of Object.values(resources)) {
    if (pick(resource, 'Type') !== 'AWS::Lambda::Function') continue;
    const asset = pick(resource, 'Metadata', 'aws:asset:path');
    const cdkPath = pick(resource, 'Metadata', 'aws:cdk:path');
    if (typeof asset !== 'string' || typeof cdkPath !== 'string') continue;
    const dir = join(outDir, asset);
    const index = join(dir, 'index.mjs');
    if (!existsSync(index)) continue;
    const size = (file: string): number => (existsSync(file) ? statSync(file).size : 0);
    bundles.push({
      name: cdkPath.split('/')[1] ?? cdkPath,
      dir,
      indexBytes: size(index),
      indexGzipBytes: gzipSync(readFileSync(index), { level: 9 }).length,
      mapBytes: size(join(dir, 'index.mjs.map')),
      tokenizerBytes: size(join(dir, TOKENIZER_FILE)),
      packages: existsSync(join(dir, 'index.meta.json')) ? packagesOf(join(dir, 'index.meta.json')) : [],
    });
  }
  return bundles.sort((a, b) => a.name.localeCompare(b.name));
}

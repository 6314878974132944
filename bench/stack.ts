/**
 * The stack as deployed: `cdk synth` into a temporary cdk.out, then each Lambda function's settings
 * (memory, architecture, timeout, literal env) from the template and its bundle from the asset folder,
 * sized and broken down by package with the esbuild metafile the construct writes beside it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

/**
 * One Lambda function of the synthesized stack: construct id (`Chat`, …), asset folder, settings, the env
 * vars with literal values, whether Lambda's START/END/REPORT lines reach the logs (system log level), the
 * bytes of index.mjs (minified, gzip -9) and of the lazily imported .mjs beside it, and index.mjs's bytes
 * per package (own code as `functions/**`), largest first.
 */
export interface StackFunction {
  name: string;
  dir: string;
  memoryMb: number;
  architecture: 'arm64' | 'x86_64';
  timeoutSeconds: number;
  env: Record<string, string>;
  platformLogs: boolean;
  indexBytes: number;
  indexGzipBytes: number;
  lazyBytes: number;
  packages: Array<{ name: string; bytes: number }>;
}

/** The functions, and CloudFormation resource type → count (e.g. whether a WAF is deployed). */
export interface StackInfo {
  functions: StackFunction[];
  resourceTypes: Record<string, number>;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

/** `…/node_modules/@scope/pkg/x.js` → `@scope/pkg`; own sources → `functions/**`. */
function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return `${input.replace(/^(\.\.\/)+/, '').split('/')[0]}/** (own code)`;
  const [first = '', second = ''] = input.slice(at + 'node_modules/'.length).split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

function packagesOf(metafile: string): Array<{ name: string; bytes: number }> {
  const outputs = obj(obj(JSON.parse(readFileSync(metafile, 'utf8'))).outputs);
  const index = Object.entries(outputs).find(([key]) => key.endsWith('index.mjs'))?.[1];
  const totals = new Map<string, number>();
  for (const [path, info] of Object.entries(obj(obj(index).inputs))) {
    const bytes = Number(obj(info).bytesInOutput ?? 0);
    totals.set(packageOf(path), (totals.get(packageOf(path)) ?? 0) + bytes);
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

function readFunction(outDir: string, resource: Json): StackFunction | undefined {
  const meta = obj(resource.Metadata);
  const props = obj(resource.Properties);
  const asset = meta['aws:asset:path'];
  const dir = typeof asset === 'string' ? join(outDir, asset) : '';
  const index = join(dir, 'index.mjs');
  if (!existsSync(index)) return undefined;
  const size = (file: string): number => (existsSync(file) ? statSync(file).size : 0);
  const env = Object.fromEntries(Object.entries(obj(obj(props.Environment).Variables)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const arch = Array.isArray(props.Architectures) ? props.Architectures[0] : 'x86_64';
  return {
    name: String(meta['aws:cdk:path']).split('/')[1] ?? '?',
    dir,
    memoryMb: Number(props.MemorySize ?? 128), // CloudFormation's default when absent
    architecture: arch === 'arm64' ? 'arm64' : 'x86_64',
    timeoutSeconds: Number(props.Timeout ?? 3),
    env,
    platformLogs: !['WARN', 'ERROR'].includes(String(obj(props.LoggingConfig).SystemLogLevel)),
    indexBytes: size(index),
    indexGzipBytes: gzipSync(readFileSync(index), { level: 9 }).length,
    lazyBytes: readdirSync(dir)
      .filter((f) => f.endsWith('.mjs') && f !== 'index.mjs')
      .reduce((sum, f) => sum + size(join(dir, f)), 0),
    packages: existsSync(join(dir, 'index.meta.json')) ? packagesOf(join(dir, 'index.meta.json')) : [],
  };
}

/**
 * Runs `cdk synth` (offline) in `root` into `outDir` and reads stack `stack` from it.
 * @throws Error with cdk's output when the synth fails, or when the stack has no bundled function.
 */
export async function synthStack(root: string, outDir: string, stack = 'Modelmux'): Promise<StackInfo> {
  const env = { ...process.env, CDK_DISABLE_VERSION_CHECK: '1', CDK_DISABLE_CLI_TELEMETRY: 'true' };
  await promisify(execFile)(join(root, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', outDir], { cwd: root, env, maxBuffer: 64 << 20 }).catch(
    (err: Error & { stderr?: string }) => {
      throw new Error(`cdk synth failed: ${err.stderr?.slice(-4_000) ?? err.message}`);
    },
  );
  const resources = Object.values(obj(obj(JSON.parse(readFileSync(join(outDir, `${stack}.template.json`), 'utf8'))).Resources)).map(obj);
  const resourceTypes: Record<string, number> = {};
  for (const r of resources) resourceTypes[String(r.Type)] = (resourceTypes[String(r.Type)] ?? 0) + 1;
  const functions = resources.filter((r) => r.Type === 'AWS::Lambda::Function').flatMap((r) => readFunction(outDir, r) ?? []);
  if (functions.length === 0) throw new Error('cdk synth produced no bundled Lambda function');
  return { functions: functions.sort((a, b) => a.name.localeCompare(b.name)), resourceTypes };
}

/** The function named `name`. @throws Error when the stack has none. */
export function stackFunction(info: StackInfo, name: string): StackFunction {
  const fn = info.functions.find((f) => f.name === name);
  if (fn === undefined) throw new Error(`the stack has no ${name} function (has ${info.functions.map((f) => f.name).join(', ')})`);
  return fn;
}

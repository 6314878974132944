/**
 * Cold start of a bundle: a fresh Node 24 (Lambda's nodejs24.x) imports it and reaches its `handler`, as
 * Lambda's INIT does (minus the runtime's own bootstrap), with the function's literal env from the
 * template. INIT reads the upstream keys and the origin secret from Secrets Manager (the handlers await
 * both at module load): here a local stand-in answers them (`AWS_ENDPOINT_URL_SECRETS_MANAGER`, the SDK's
 * own endpoint setting), so their SDK work and round trips are in the figures, and the reads are counted.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ORIGIN_SECRET_ARN_ENV, UPSTREAM_SECRET_ARN_ENV } from '../functions/shared/config/stack-contract';
import { percentile } from './measure';

const run = promisify(execFile);

/** One module to load (an `index.mjs`, absolute) with its env. */
export interface ImportVariant {
  label: string;
  file: string;
  env: Record<string, string>;
}

/**
 * Medians over the runs of one variant, ms: `import()` until `handler` is in hand (the secret reads
 * included), process start → handler (wall), and the process's CPU time until then (user + system: steadier
 * than the wall time on a shared machine, and what Lambda's CPU share slows down); GetSecretValue calls per load.
 */
export interface ImportTiming {
  label: string;
  importMs: number;
  readyMs: number;
  readyCpuMs: number;
  secretReads: number;
}

/** `node -e` source: the `awslambda` global the chat bundle needs at load, a timed import, one JSON line. */
const runner = (file: string): string =>
  [
    'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };',
    'const t0 = performance.now();',
    `const mod = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    "if (typeof mod.handler !== 'function') throw new Error('no handler export');",
    'const cpu = process.cpuUsage();',
    'process.stdout.write(JSON.stringify({ importMs: performance.now() - t0, readyMs: performance.now(), readyCpuMs: (cpu.user + cpu.system) / 1000 }));',
  ].join('\n');

/** A Secrets Manager stand-in: every GetSecretValue gets a JSON secret; counts the calls. */
async function secretsStandIn(): Promise<{ endpoint: string; reads: () => number; close: () => void }> {
  let reads = 0;
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      reads++;
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(
        JSON.stringify({
          ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
          Name: 'bench',
          SecretString: JSON.stringify({ OPENAI_API_KEY: 'sk-bench', current: 'bench-origin' }),
          VersionId: 'v1',
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, reads: () => reads, close: () => server.close() };
}

type Sample = { importMs: number; readyMs: number; readyCpuMs: number };

async function loadOnce(node: string, v: ImportVariant, secrets: string): Promise<Sample> {
  // The function's env (NODE_OPTIONS as the template sets it, or none), dummy credentials, nothing of ours.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    ...v.env,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets,
  };
  for (const name of [UPSTREAM_SECRET_ARN_ENV, ORIGIN_SECRET_ARN_ENV]) env[name] = `arn:aws:secretsmanager:us-east-1:000000000000:secret:${name.toLowerCase()}`;
  const { stdout } = await run(node, ['--input-type=module', '-e', runner(v.file)], { env, timeout: 60_000 });
  return JSON.parse(stdout) as Sample;
}

const median = (xs: number[]): number => percentile(xs, 50);

/** Loads every variant `runs` times on `node`, round-robin, after one unmeasured load each (the page cache warm, as on a Lambda host). */
export async function timeImports(node: string, variants: ImportVariant[], runs: number): Promise<ImportTiming[]> {
  const stand = await secretsStandIn();
  try {
    const samples = variants.map(() => [] as Sample[]);
    const reads = variants.map(() => 0);
    for (const v of variants) await loadOnce(node, v, stand.endpoint);
    for (let r = 0; r < runs; r++) {
      for (const [i, v] of variants.entries()) {
        const before = stand.reads();
        samples[i]?.push(await loadOnce(node, v, stand.endpoint));
        reads[i] = (reads[i] ?? 0) + stand.reads() - before;
      }
    }
    return variants.map((v, i) => {
      const list = samples[i] ?? [];
      return {
        label: v.label,
        importMs: median(list.map((s) => s.importMs)),
        readyMs: median(list.map((s) => s.readyMs)),
        readyCpuMs: median(list.map((s) => s.readyCpuMs)),
        secretReads: (reads[i] ?? 0) / runs,
      };
    });
  } finally {
    stand.close();
  }
}

/** A module with only a handler: the floor of a Node process start. */
export function emptyModule(dir: string): string {
  const file = join(dir, 'empty-handler.mjs');
  writeFileSync(file, 'export const handler = async () => ({ statusCode: 200 });\n');
  return file;
}

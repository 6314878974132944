/**
 * CPU of request validation for each 1 MB adversarial body (bench/adversarial-bodies.ts): the time
 * `parseJsonBody` takes to accept or refuse it with each route's schema (median of {@link RUNS}, in a
 * worker thread; process CPU, so it includes the garbage collector's threads). A body that
 * still runs after {@link CAP_MS} is stopped (reported as "> cap"): the quadratic scan of issue 21 ran
 * for minutes. `tsx bench/validation-cpu.ts` prints the table alone.
 */
import { Worker } from 'node:worker_threads';
import { ADVERSARIAL_BYTES, BODY_ROUTES, SHAPES, type BodyRoute, type Shape } from './adversarial-bodies';

/** Longest a single validation may run before the bench gives up on it, ms. */
export const CAP_MS = 20_000;

/** Validations per body; the median is reported (the first pays for JIT compilation). */
export const RUNS = 5;

/** One measurement: median CPU ms (undefined past the cap) and the outcome (`accepted` or the 400's code). */
export interface ValidationCpu {
  route: BodyRoute;
  shape: Shape;
  cpuMs: number | undefined;
  outcome: string;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { tsImport } = await import('tsx/esm/api');
  const bodies = await tsImport(workerData.bodies, workerData.base);
  const parse = await tsImport(workerData.parse, workerData.base);
  const schemas = await tsImport(workerData.schemas, workerData.base);
  const body = bodies.adversarialBody(workerData.route, workerData.shape);
  const schema = schemas.schemaOf(workerData.route);
  try { parse.parseJsonBody('{"model":"m"}', schema); } catch {}
  const runs = [];
  let outcome = 'accepted';
  for (let k = 0; k < workerData.runs; k++) {
    const t0 = process.cpuUsage();
    try { parse.parseJsonBody(body, schema); } catch (e) { outcome = String(e && e.code || e && e.message); }
    const d = process.cpuUsage(t0);
    runs.push((d.user + d.system) / 1000);
  }
  runs.sort((a, b) => a - b);
  parentPort.postMessage({ cpuMs: runs[Math.floor(runs.length / 2)], outcome });
})().catch((e) => parentPort.postMessage({ cpuMs: undefined, outcome: 'error: ' + e.message }));
`;

/** Times one route × shape in a worker thread (so a runaway scan can be stopped at the cap). */
function measureOne(route: BodyRoute, shape: Shape): Promise<ValidationCpu> {
  const base = import.meta.url;
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { route, shape, base, runs: RUNS, bodies: './adversarial-bodies.ts', parse: '../functions/shared/openai/parse-body.ts', schemas: './validation-schemas.ts' },
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ route, shape, cpuMs: undefined, outcome: `> ${CAP_MS / 1000} s, stopped` });
    }, CAP_MS);
    worker.once('message', (m: { cpuMs: number | undefined; outcome: string }) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve({ route, shape, ...m });
    });
  });
}

/** Every route × shape, one at a time. */
export async function measureValidationCpu(routes: readonly BodyRoute[] = BODY_ROUTES): Promise<ValidationCpu[]> {
  const out: ValidationCpu[] = [];
  for (const route of routes) for (const shape of SHAPES) out.push(await measureOne(route, shape));
  return out;
}

/** A Markdown table: one row per shape, one column per route, cell = CPU ms and outcome. */
export function renderValidationCpu(rows: readonly ValidationCpu[]): string {
  const routes = [...new Set(rows.map((r) => r.route))];
  const head = `| ${(ADVERSARIAL_BYTES / 1e6).toFixed(0)} MB body | ${routes.join(' | ')} |\n|---|${routes.map(() => '---:').join('|')}|`;
  const lines = SHAPES.map((shape) => {
    const cells = routes.map((route) => {
      const r = rows.find((x) => x.route === route && x.shape === shape);
      if (r === undefined) return '';
      return r.cpuMs === undefined ? r.outcome : `${r.cpuMs.toFixed(1)} ms (${r.outcome})`;
    });
    return `| ${shape} | ${cells.join(' | ')} |`;
  });
  return [head, ...lines].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await measureValidationCpu();
  process.stdout.write(`${renderValidationCpu(rows)}\n`);
}

/** Cells of BENCHMARKS.md: number formats, a markdown table, goal verdicts (bench/report.ts). */
import type { LoadResult } from './measure';

/** `x` to `digits` significant digits, with thousands separators; '–' when not finite. */
export const round = (x: number, digits = 3): string =>
  Number.isFinite(x) ? Number(x.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 2 }) : '–';
/** USD with cents; '–' when not finite. */
export const usd = (x: number): string => (Number.isFinite(x) ? `$${x.toFixed(2)}` : '–');
/** Bytes as KB (1,024). */
export const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
/** A share (0–1) as a percentage. */
export const pct = (x: number): string => `${round(100 * x)}%`;
/** A markdown table. */
export const table = (head: string[], rows: string[][]): string => [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
/** A goal's verdict. */
export const met = (ok: boolean): string => (ok ? 'met' : '**not met**');
/** Σ xs. */
export const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

/** A goal row: `row`'s req/s beside Portkey's in the same run (≥ 1×), and what limits it when not met. */
export function loadGoal(figure: string, row: LoadResult | undefined, pk: LoadResult | undefined, limits: (row: LoadResult) => string): string[] {
  const ratio = (row?.reqPerSec ?? Number.NaN) / (pk?.reqPerSec ?? Number.NaN);
  const peer = pk?.error === undefined ? `${round(pk?.reqPerSec ?? Number.NaN)} (${round(ratio)}×)` : `Portkey not run: ${pk.error}`;
  return [figure, '≥ 1× Portkey', `${round(row?.reqPerSec ?? Number.NaN)} vs ${peer}`, met(ratio >= 1), ratio >= 1 || row === undefined ? '' : limits(row)];
}

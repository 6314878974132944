/** Number formatting and Markdown tables for the report. */

/** Milliseconds with 2 decimals below 10, 1 below 100, none above. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  return value.toFixed(abs < 10 ? 2 : abs < 100 ? 1 : 0);
}

/** Signed milliseconds, e.g. `+0.42`. */
export function signedMs(value: number): string {
  return Number.isFinite(value) ? `${value >= 0 ? '+' : '−'}${ms(Math.abs(value))}` : 'n/a';
}

/** Whole number with thousands separators. */
export function int(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a';
}

/** Bytes as KB (1 KB = 1,024 bytes), one decimal. */
export function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** A 0..1 share as a percentage. */
export function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** A Markdown table. Cells must not contain `|` (escaped if they do). */
export function table(header: string[], rows: string[][]): string {
  const esc = (cell: string): string => cell.replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

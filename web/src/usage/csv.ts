import type { ActivityRow } from '../api/types';
import { exactUsd } from '../format/money';

/**
 * The activity rows as CSV (RFC 4180: comma-separated, CRLF line ends, fields with a comma, quote or
 * line break quoted, quotes doubled). Costs are exact decimal USD (9 decimals) with the nano-USD
 * integer beside them, like the API.
 *
 * Key names are user input: a cell starting with `=`, `+`, `-`, `@`, tab or CR would be read as a
 * formula by spreadsheet programs (OWASP "CSV Injection"), so such text cells get a leading `'`.
 */
export const CSV_COLUMNS = [
  'date',
  'model',
  'provider',
  'key_name',
  'key_hash',
  'requests',
  'prompt_tokens',
  'completion_tokens',
  'cost_usd',
  'cost_nano_usd',
  'byok_requests',
  'cached_tokens',
  'cache_write_tokens',
  'cache_discount_usd',
  'cache_discount_nano_usd',
] as const;

/** The CSV text: a header line, then one line per row, oldest day first. */
export function activityCsv(rows: readonly ActivityRow[]): string {
  const sorted = [...rows].sort((a, b) => a.date.localeCompare(b.date) || a.model.localeCompare(b.model) || a.key_name.localeCompare(b.key_name));
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of sorted) {
    lines.push(
      [
        text(r.date),
        text(r.model),
        text(r.provider_name),
        text(r.key_name),
        text(r.key_hash),
        String(r.requests),
        String(r.prompt_tokens),
        String(r.completion_tokens),
        exactUsd(r.usage_nano_usd),
        String(r.usage_nano_usd),
        String(r.byok_requests),
        String(r.cached_tokens),
        String(r.cache_write_tokens),
        exactUsd(r.cache_discount_nano_usd),
        String(r.cache_discount_nano_usd),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** A text cell: neutralised against formula injection, then quoted when it must be. */
export function text(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

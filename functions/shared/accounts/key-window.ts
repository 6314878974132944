/**
 * Spend-limit windows of API keys (DATA-MODEL §2 `keys.<h16>.window`): `daily` resets at 00:00 UTC,
 * `weekly` on Monday 00:00 UTC, `monthly` on the 1st 00:00 UTC, none = one window forever (`all`).
 * Window ids of one kind sort in time order as strings (`2026-11-24`, `2026-W48`, `2026-11`), so a
 * condition `window < :current` rolls a window forward and never back.
 */

import type { LimitReset } from './key-item';

/** How often a key's spend limit resets (OpenRouter's `limit_reset` values; accounts/key-item.ts). */
export type { LimitReset };

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The id of the window that contains `ms` (epoch ms) for a reset kind; `all` when it never resets. */
export function windowId(reset: LimitReset | undefined, ms: number): string {
  const d = new Date(ms);
  switch (reset) {
    case 'daily':
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    case 'monthly':
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
    case 'weekly': {
      const { year, week } = isoWeek(d);
      return `${year}-W${pad(week)}`;
    }
    default:
      return 'all';
  }
}

/** When the window that contains `ms` ends (epoch ms); undefined when it never resets. */
export function windowEnd(reset: LimitReset | undefined, ms: number): number | undefined {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (reset) {
    case 'daily':
      return Date.UTC(y, m, d.getUTCDate() + 1);
    case 'monthly':
      return Date.UTC(y, m + 1, 1);
    case 'weekly': {
      const daysSinceMonday = (d.getUTCDay() + 6) % 7;
      return Date.UTC(y, m, d.getUTCDate() - daysSinceMonday + 7);
    }
    default:
      return undefined;
  }
}

/** ISO 8601 week of a date (weeks start on Monday; week 1 holds the year's first Thursday). */
function isoWeek(d: Date): { year: number; week: number } {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = (t.getUTCDay() + 6) % 7; // Monday = 0
  t.setUTCDate(t.getUTCDate() - day + 3); // the Thursday of this week
  const firstThursday = new Date(Date.UTC(t.getUTCFullYear(), 0, 4));
  const week = 1 + Math.round(((t.getTime() - firstThursday.getTime()) / 86_400_000 - 3 + ((firstThursday.getUTCDay() + 6) % 7)) / 7);
  return { year: t.getUTCFullYear(), week };
}

import type { ActivityRow } from '../api/types';

/**
 * Shapes of the usage page, computed from `GET /v1/activity` rows (one UTC day × model × key).
 * Pure functions over integers: money stays nano-USD.
 */

/** What the chart plots. */
export type UsageMetric = 'cost' | 'tokens' | 'requests';

/** Value of one row for a metric (nano-USD, tokens, or requests). */
export function metricOf(row: ActivityRow, metric: UsageMetric): number {
  switch (metric) {
    case 'cost':
      return row.usage_nano_usd;
    case 'tokens':
      return row.prompt_tokens + row.completion_tokens;
    case 'requests':
      return row.requests;
    default:
      return 0;
  }
}

/** One stacked series of the chart: a model (or "Other models"), its value per day. */
export interface DailySeries {
  name: string;
  /** Same order as {@link DailyChart.dates}. */
  values: number[];
  total: number;
}

/** The chart's data: one column per UTC day, one stacked series per model. */
export interface DailyChart {
  dates: string[];
  series: DailySeries[];
  /** Largest stacked day total. */
  max: number;
  total: number;
}

/** How many models get their own series; the rest are summed into "Other models". */
export const MAX_CHART_SERIES = 6;

/** Label of the series that sums the models past {@link MAX_CHART_SERIES}. */
export const OTHER_MODELS = 'Other models';

/**
 * Daily totals by model over `dates` (oldest first): the models with the largest totals first, at
 * most {@link MAX_CHART_SERIES} series, the rest in "Other models". Rows outside `dates` are ignored;
 * models with a zero total are left out.
 */
export function dailyByModel(rows: readonly ActivityRow[], dates: readonly string[], metric: UsageMetric): DailyChart {
  const index = new Map(dates.map((d, i) => [d, i]));
  const byModel = new Map<string, number[]>();
  for (const row of rows) {
    const i = index.get(row.date);
    if (i === undefined) continue;
    let values = byModel.get(row.model);
    if (values === undefined) byModel.set(row.model, (values = new Array<number>(dates.length).fill(0)));
    values[i] = (values[i] ?? 0) + metricOf(row, metric);
  }
  const all = [...byModel.entries()]
    .map(([name, values]) => ({ name, values, total: sum(values) }))
    .filter((s) => s.total > 0)
    .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  let series = all;
  if (all.length > MAX_CHART_SERIES) {
    const rest = all.slice(MAX_CHART_SERIES - 1);
    const values = dates.map((_, i) => sum(rest.map((s) => s.values[i] ?? 0)));
    series = [...all.slice(0, MAX_CHART_SERIES - 1), { name: OTHER_MODELS, values, total: sum(values) }];
  }
  const dayTotals = dates.map((_, i) => sum(series.map((s) => s.values[i] ?? 0)));
  return { dates: [...dates], series, max: Math.max(0, ...dayTotals), total: sum(dayTotals) };
}

/** One line of the table: a model used through a key, summed over the period. */
export interface ModelKeyUsage {
  model: string;
  provider: string;
  keyHash: string;
  keyName: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costNanoUsd: number;
  byokRequests: number;
}

/** Rows summed by model × key, most expensive first (then most requests, then by name). */
export function byModelAndKey(rows: readonly ActivityRow[]): ModelKeyUsage[] {
  const groups = new Map<string, ModelKeyUsage>();
  for (const row of rows) {
    const id = `${row.model}\u0000${row.key_hash}`;
    let g = groups.get(id);
    if (g === undefined) {
      g = {
        model: row.model,
        provider: row.provider_name,
        keyHash: row.key_hash,
        keyName: row.key_name,
        requests: 0,
        promptTokens: 0,
        completionTokens: 0,
        costNanoUsd: 0,
        byokRequests: 0,
      };
      groups.set(id, g);
    }
    g.requests += row.requests;
    g.promptTokens += row.prompt_tokens;
    g.completionTokens += row.completion_tokens;
    g.costNanoUsd += row.usage_nano_usd;
    g.byokRequests += row.byok_requests;
  }
  return [...groups.values()].sort(
    (a, b) => b.costNanoUsd - a.costNanoUsd || b.requests - a.requests || a.model.localeCompare(b.model) || a.keyName.localeCompare(b.keyName),
  );
}

/** Totals of the period; `cacheDiscountNanoUsd` is what prompt caching saved. */
export function totalsOf(rows: readonly ActivityRow[]): { requests: number; tokens: number; costNanoUsd: number; cacheDiscountNanoUsd: number } {
  let requests = 0;
  let tokens = 0;
  let costNanoUsd = 0;
  let cacheDiscountNanoUsd = 0;
  for (const row of rows) {
    requests += row.requests;
    tokens += row.prompt_tokens + row.completion_tokens;
    costNanoUsd += row.usage_nano_usd;
    cacheDiscountNanoUsd += row.cache_discount_nano_usd;
  }
  return { requests, tokens, costNanoUsd, cacheDiscountNanoUsd };
}

/** One line of the prompt-caching table: a model on one UTC day, summed over keys. */
export interface DailyCaching {
  date: string;
  model: string;
  promptTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  /** What the cache reads saved, nano-USD (the API's `cache_discount_nano_usd`, summed). */
  cacheDiscountNanoUsd: number;
}

/**
 * Prompt caching per UTC day × model, newest day first (then by model): only the days and models
 * where something was read from or written to a provider's cache.
 */
export function cachingByDayAndModel(rows: readonly ActivityRow[]): DailyCaching[] {
  const groups = new Map<string, DailyCaching>();
  for (const row of rows) {
    if (row.cached_tokens === 0 && row.cache_write_tokens === 0) continue;
    const id = `${row.date}\u0000${row.model}`;
    let g = groups.get(id);
    if (g === undefined)
      groups.set(id, (g = { date: row.date, model: row.model, promptTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, cacheDiscountNanoUsd: 0 }));
    g.promptTokens += row.prompt_tokens;
    g.cachedTokens += row.cached_tokens;
    g.cacheWriteTokens += row.cache_write_tokens;
    g.cacheDiscountNanoUsd += row.cache_discount_nano_usd;
  }
  return [...groups.values()].sort((a, b) => b.date.localeCompare(a.date) || a.model.localeCompare(b.model));
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

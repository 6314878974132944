/**
 * Corrections to the maintained price data (price-data.ts, from @pydantic/genai-prices): where a
 * provider's own page is newer than the dataset or says more, or the dataset has no such model. Each
 * entry REPLACES the dataset's rules for its target and says where its figures come from and when
 * they were checked (docs/prices.md "Where each price comes from"). test/catalogue/price-data.test.ts
 * fails when an entry repeats what the dataset already says, so an override dies when the data
 * catches up.
 *
 * Operators put negotiated or self-hosted prices in operator-prices.ts, which wins over both.
 */
import { usdPerMTokToMicro } from '../money/price';
import { WEEKDAYS, type BucketPrices, type DailyWindow, type PriceRule, type RulePrices } from './price-schedule';

/** One target's prices, replacing the dataset's. */
export interface PriceOverride {
  /** Target key `provider:upstreamModel`. */
  key: string;
  rules: readonly PriceRule[];
  /** The context window (tokens), when the dataset lacks the model or is wrong about it. */
  contextWindow?: number;
  /** Where the figures were read (a URL or the document that quotes it). */
  source: string;
  /** When the source was checked, YYYY-MM-DD. */
  checkedOn: string;
  /** Why the dataset is not enough. */
  why: string;
}

type UsdBuckets = { input: number; output: number; cachedInput?: number; cacheWrite5m?: number; cacheWrite1h?: number };

/** USD per 1M tokens → µUSD per 1M tokens, bucket by bucket (exact: money/price.ts). */
export function usdBuckets(p: UsdBuckets): BucketPrices {
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, usdPerMTokToMicro(v)])) as unknown as BucketPrices;
}

function usdPrices(p: UsdBuckets, long?: UsdBuckets & { promptTokensAbove: number }): RulePrices {
  if (long === undefined) return usdBuckets(p);
  const { promptTokensAbove, ...buckets } = long;
  return { ...usdBuckets(p), longContext: { ...usdBuckets(buckets), promptTokensAbove } };
}

/**
 * DeepSeek's peak hours (api-docs.deepseek.com/quick_start/pricing, providers.md §8): 01:00–04:00 and
 * 06:00–10:00 UTC (Beijing 9–12 and 14–18), Monday to Friday; weekends off-peak all day. The hours
 * fall on the same date in UTC and Beijing, so UTC weekdays are Beijing's. Chinese public holidays
 * (off-peak upstream) are billed as ordinary weekdays: at peak, at most the peak price DeepSeek lists.
 */
const DEEPSEEK_PEAK: readonly DailyWindow[] = [
  { startMinute: 60, endMinute: 240, weekdays: WEEKDAYS },
  { startMinute: 360, endMinute: 600, weekdays: WEEKDAYS },
];
/** When peak pricing began: 2026-08-16 16:00 UTC (providers.md §8). */
const DEEPSEEK_PEAK_FROM = Date.parse('2026-08-16T16:00:00Z');
const DEEPSEEK_PAGE = 'https://api-docs.deepseek.com/quick_start/pricing (snapshots of 2026-09 and 2026-10, providers.md §8)';

/** The built-in corrections, one per target key. */
export const PRICE_OVERRIDES: readonly PriceOverride[] = [
  {
    key: 'deepseek:deepseek-flash',
    // DeepSeek-V4.1-Flash from 2026-09-10 04:00 UTC; also serves the legacy deepseek-v4-flash.
    rules: [
      { prices: usdPrices({ input: 0.15, cachedInput: 0.003, output: 0.6 }) },
      { windows: DEEPSEEK_PEAK, prices: usdPrices({ input: 0.3, cachedInput: 0.006, output: 1.2 }) },
    ],
    contextWindow: 1_000_000,
    source: DEEPSEEK_PAGE,
    checkedOn: '2026-12-07',
    why: 'the dataset (2026-09-23) lacks deepseek-flash and its 2026-09-10 prices, and applies the peak hours every day',
  },
  {
    key: 'deepseek:deepseek-v4-pro',
    rules: [
      { prices: usdPrices({ input: 0.435, cachedInput: 0.003625, output: 0.87 }) },
      { fromMs: DEEPSEEK_PEAK_FROM, prices: usdPrices({ input: 0.66, cachedInput: 0.022, output: 1.98 }) },
      { fromMs: DEEPSEEK_PEAK_FROM, windows: DEEPSEEK_PEAK, prices: usdPrices({ input: 1.32, cachedInput: 0.044, output: 3.96 }) },
    ],
    source: DEEPSEEK_PAGE,
    checkedOn: '2026-12-07',
    why: 'the dataset applies the peak hours every day (weekends are off-peak) and from 00:00 UTC of 2026-08-17, not 16:00 UTC of 2026-08-16',
  },
  {
    key: 'anthropic:claude-sonnet-5-5',
    rules: [{ prices: usdPrices({ input: 2, output: 10, cachedInput: 0.1, cacheWrite5m: 2.5, cacheWrite1h: 4 }) }],
    contextWindow: 1_000_000,
    source: 'Anthropic models page; the model catalogue Claude Code 2.1.332 ships (pricing tier_2_10_cache_read_0_10), docs/prices.md',
    checkedOn: '2026-12-07',
    why: 'launched after the dataset (0.1.8, 2026-09-23)',
  },
  {
    key: 'anthropic:claude-haiku-5-5',
    rules: [
      {
        prices: usdPrices(
          { input: 0.1, output: 0.5, cachedInput: 0.01, cacheWrite5m: 0.125, cacheWrite1h: 0.2 },
          { promptTokensAbove: 100_000, input: 0.5, output: 2.5, cachedInput: 0.05, cacheWrite5m: 0.625, cacheWrite1h: 1 },
        ),
      },
    ],
    contextWindow: 1_000_000,
    source: 'Anthropic models page; the model catalogue Claude Code 2.1.332 ships (pricing haiku_55, long prompt above 100K), docs/prices.md',
    checkedOn: '2026-12-07',
    why: 'launched after the dataset (0.1.8, 2026-09-23)',
  },
  {
    key: 'deepinfra:meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo',
    rules: [{ prices: usdPrices({ input: 0.4, output: 0.4 }) }],
    contextWindow: 131_072,
    source: 'deepinfra.com pricing as quoted in providers.md §8 (low confidence)',
    checkedOn: '2026-11-22',
    why: 'the dataset has no DeepInfra provider',
  },
  {
    key: 'deepinfra:meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo',
    rules: [{ prices: usdPrices({ input: 0.02, output: 0.03 }) }],
    contextWindow: 131_072,
    source: 'deepinfra.com pricing as quoted in providers.md §8 (low confidence)',
    checkedOn: '2026-11-22',
    why: 'the dataset has no DeepInfra provider',
  },
];

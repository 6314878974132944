import { describe, expect, it } from 'vitest';
import type { ActivityRow } from '../../web/src/api/types';
import { lastUtcDays } from '../../web/src/format/dates';
import { byModelAndKey, cachingByDayAndModel, dailyByModel, MAX_CHART_SERIES, OTHER_MODELS, totalsOf } from '../../web/src/usage/aggregate';
import { activityCsv, CSV_COLUMNS, text } from '../../web/src/usage/csv';

function row(over: Partial<ActivityRow>): ActivityRow {
  return {
    date: '2026-11-24',
    model: 'gpt-4o-mini',
    provider_name: 'openai',
    key_hash: 'a'.repeat(64),
    key_name: 'laptop',
    requests: 1,
    prompt_tokens: 10,
    completion_tokens: 5,
    usage: 0.000001,
    usage_nano_usd: 1_000,
    byok_requests: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    cache_discount: 0,
    cache_discount_nano_usd: 0,
    ...over,
  };
}

describe('lastUtcDays', () => {
  it('lists the last N UTC dates ending today, oldest first, across a month end', () => {
    expect(lastUtcDays(3, Date.UTC(2026, 11, 1, 23, 59))).toEqual(['2026-11-29', '2026-11-30', '2026-12-01']);
    expect(lastUtcDays(30, Date.now())).toHaveLength(30);
  });
});

describe('dailyByModel', () => {
  const dates = ['2026-11-22', '2026-11-23', '2026-11-24'];

  it('sums each model per day, largest model first, ignoring rows outside the period', () => {
    const chart = dailyByModel(
      [
        row({ date: '2026-11-22', model: 'claude-3-5-sonnet', usage_nano_usd: 300 }),
        row({ date: '2026-11-24', model: 'claude-3-5-sonnet', usage_nano_usd: 200, key_hash: 'b'.repeat(64) }),
        row({ date: '2026-11-24', model: 'claude-3-5-sonnet', usage_nano_usd: 100 }),
        row({ date: '2026-11-23', model: 'gpt-4o-mini', usage_nano_usd: 50 }),
        row({ date: '2026-10-01', model: 'gpt-4o-mini', usage_nano_usd: 999_999 }),
      ],
      dates,
      'cost',
    );
    expect(chart.series).toEqual([
      { name: 'claude-3-5-sonnet', values: [300, 0, 300], total: 600 },
      { name: 'gpt-4o-mini', values: [0, 50, 0], total: 50 },
    ]);
    expect(chart.max).toBe(300);
    expect(chart.total).toBe(650);
  });

  it('plots tokens or requests on demand, and leaves out models with nothing', () => {
    const rows = [row({ prompt_tokens: 7, completion_tokens: 3, requests: 2, usage_nano_usd: 0 })];
    expect(dailyByModel(rows, dates, 'tokens').series[0]?.values).toEqual([0, 0, 10]);
    expect(dailyByModel(rows, dates, 'requests').series[0]?.values).toEqual([0, 0, 2]);
    expect(dailyByModel(rows, dates, 'cost').series).toEqual([]);
  });

  it(`keeps ${MAX_CHART_SERIES} series at most, summing the smallest models into "${OTHER_MODELS}"`, () => {
    const rows = Array.from({ length: 9 }, (_, i) => row({ model: `m${i}`, usage_nano_usd: (i + 1) * 10 }));
    const chart = dailyByModel(rows, dates, 'cost');
    expect(chart.series).toHaveLength(MAX_CHART_SERIES);
    expect(chart.series.map((s) => s.name)).toEqual(['m8', 'm7', 'm6', 'm5', 'm4', OTHER_MODELS]);
    expect(chart.series.at(-1)?.total).toBe(10 + 20 + 30 + 40);
    expect(chart.total).toBe(450);
  });
});

describe('byModelAndKey and totalsOf', () => {
  it('sums over days per model × key, most expensive first', () => {
    const rows = [
      row({ date: '2026-11-23', requests: 2, usage_nano_usd: 10 }),
      row({ date: '2026-11-24', requests: 3, usage_nano_usd: 15, byok_requests: 1 }),
      row({ model: 'claude-3-5-sonnet', provider_name: 'anthropic', usage_nano_usd: 100 }),
      row({ key_hash: 'b'.repeat(64), key_name: 'server', usage_nano_usd: 5 }),
    ];
    const table = byModelAndKey(rows);
    expect(table.map((r) => [r.model, r.keyName, r.requests, r.costNanoUsd, r.byokRequests])).toEqual([
      ['claude-3-5-sonnet', 'laptop', 1, 100, 0],
      ['gpt-4o-mini', 'laptop', 5, 25, 1],
      ['gpt-4o-mini', 'server', 1, 5, 0],
    ]);
    expect(totalsOf(rows)).toEqual({ requests: 7, tokens: 60, costNanoUsd: 130, cacheDiscountNanoUsd: 0 });
  });
});

describe('cachingByDayAndModel', () => {
  it('sums the cache buckets and savings per day × model over keys, newest day first, leaving out rows without caching', () => {
    const rows = [
      row({ date: '2026-11-23', cached_tokens: 1_000, cache_discount_nano_usd: 90 }),
      row({ date: '2026-11-24', cached_tokens: 2_000, cache_discount_nano_usd: 180 }),
      row({ date: '2026-11-24', key_hash: 'b'.repeat(64), cached_tokens: 500, cache_write_tokens: 7, cache_discount_nano_usd: 45 }),
      row({ date: '2026-11-24', model: 'claude-sonnet-4-6', cache_write_tokens: 3_000 }),
      row({ date: '2026-11-24', model: 'deepseek-v3' }),
    ];
    expect(cachingByDayAndModel(rows)).toEqual([
      { date: '2026-11-24', model: 'claude-sonnet-4-6', promptTokens: 10, cachedTokens: 0, cacheWriteTokens: 3_000, cacheDiscountNanoUsd: 0 },
      { date: '2026-11-24', model: 'gpt-4o-mini', promptTokens: 20, cachedTokens: 2_500, cacheWriteTokens: 7, cacheDiscountNanoUsd: 225 },
      { date: '2026-11-23', model: 'gpt-4o-mini', promptTokens: 10, cachedTokens: 1_000, cacheWriteTokens: 0, cacheDiscountNanoUsd: 90 },
    ]);
    expect(totalsOf(rows).cacheDiscountNanoUsd).toBe(315);
  });
});

describe('activityCsv', () => {
  it('writes a header and one CRLF line per row, oldest first, with exact USD and the nano integer', () => {
    const csv = activityCsv([row({ date: '2026-11-24', usage_nano_usd: 1_234_567_891 }), row({ date: '2026-11-23', usage_nano_usd: 7 })]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines[1]).toBe(`2026-11-23,gpt-4o-mini,openai,laptop,${'a'.repeat(64)},1,10,5,0.000000007,7,0,0,0,0.000000000,0`);
    expect(lines[2]).toContain(',1.234567891,1234567891,');
    expect(lines[3]).toBe('');
  });

  it('quotes commas, quotes and line breaks, and defuses spreadsheet formulas in names', () => {
    expect(text('a,b')).toBe('"a,b"');
    expect(text('say "hi"')).toBe('"say ""hi"""');
    expect(text('two\nlines')).toBe('"two\nlines"');
    expect(text('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`);
    expect(text('+1')).toBe("'+1");
    expect(text('@sum')).toBe("'@sum");
    expect(text('plain')).toBe('plain');
  });
});

import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { PRICE_DATA_PATH, generatedPrices, priceDataModule } from '../../bin/price-data';
import { attemptPrices } from '../../functions/shared/billing/hold-demand';
import { CATALOGUE, getModel, priceValidUntil } from '../../functions/shared/catalogue/catalogue';
import { PRICE_OVERRIDES } from '../../functions/shared/catalogue/price-overrides';
import { displayedPrice } from '../../functions/shared/money/price';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { setClock } from '../../functions/shared/time/clock';

/**
 * Prices come from the maintained dataset (price-data.ts, generated from @pydantic/genai-prices) and
 * the override file; a request is priced at its start, DeepSeek's peak hours included (docs/prices.md).
 */

const HOUR = 3_600_000;
/** Monday 2026-12-07 00:00 UTC. */
const MONDAY = Date.parse('2026-12-07T00:00:00Z');
const creds = { DEEPSEEK_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k', GEMINI_API_KEY: 'k' };

afterEach(() => setClock(undefined));

/** The first attempt of a plan made at `atMs`. */
function firstAttemptAt(model: string, atMs: number) {
  setClock(() => atMs);
  const plan = planAttempts(getModel(model, 'chat'), CATALOGUE, creds);
  setClock(undefined);
  const first = plan[0];
  if (first === undefined) throw new Error(`no plan for ${model}`);
  return first;
}

describe('the price data', () => {
  it('is what `npm run prices` writes from the pinned dataset (regenerate it after bumping the package)', async () => {
    expect(await priceDataModule()).toBe(readFileSync(PRICE_DATA_PATH, 'utf8'));
  });

  it('has no override that repeats the dataset (an override dies when the data catches up)', () => {
    const data = generatedPrices();
    for (const o of PRICE_OVERRIDES) {
      const theirs = data[o.key];
      if (theirs !== undefined) expect(JSON.parse(JSON.stringify(o.rules)), o.key).not.toEqual(theirs.rules);
      expect(o.source.length, o.key).toBeGreaterThan(10);
      expect(o.checkedOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('prices every catalogue target, and names where each price comes from', () => {
    for (const e of CATALOGUE.values())
      for (const t of e.targets) {
        expect(t.priceRules.length, t.key).toBeGreaterThan(0);
        expect(t.priceSource, t.key).toMatch(/genai-prices|https?:|\.md|Claude Code/);
      }
  });

  it('lists the models a user of late 2026 names first', () => {
    for (const name of [
      'gpt-5',
      'gpt-5-mini',
      'gpt-5.5',
      'o3',
      'o4-mini',
      'claude-opus-5-5',
      'claude-sonnet-5',
      'claude-haiku-4-5',
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-3.5-flash',
      'deepseek-v4-flash',
      'deepseek-v4-pro',
      'minimax-m2.7',
    ])
      expect(getModel(name, 'chat').targets.length, name).toBeGreaterThan(0);
  });
});

describe('prices in force at the request start', () => {
  it("bills DeepSeek's peak hours (01–04 and 06–10 UTC, Monday to Friday) at double, every hour of a week, × 1.055", () => {
    const off = { input: displayedPrice(150_000), cachedInput: displayedPrice(3_000), output: displayedPrice(600_000) };
    const peak = { input: displayedPrice(300_000), cachedInput: displayedPrice(6_000), output: displayedPrice(1_200_000) };
    for (let h = 0; h < 7 * 24; h++) {
      const at = MONDAY + h * HOUR + 30 * 60_000;
      const weekday = Math.floor(h / 24) < 5;
      const hour = h % 24;
      const expected = weekday && ((hour >= 1 && hour < 4) || (hour >= 6 && hour < 10)) ? peak : off;
      const p = attemptPrices(firstAttemptAt('deepseek-v3', at), 1_000);
      expect({ input: p.input, cachedInput: p.cachedInput, output: p.output }, new Date(at).toISOString()).toEqual(expected);
    }
  });

  it('keeps the price a request started with when it runs past a price change (the hold and the bill use one instant)', () => {
    const attempt = firstAttemptAt('deepseek-v4-pro', MONDAY + HOUR - 1_000);
    setClock(() => MONDAY + 2 * HOUR);
    expect(attemptPrices(attempt, 1_000).input).toBe(displayedPrice(660_000));
    expect(attemptPrices(firstAttemptAt('deepseek-v4-pro', MONDAY + 2 * HOUR), 1_000).input).toBe(displayedPrice(1_320_000));
  });

  it('says when a price next changes: the next peak edge, a dated change, or never', () => {
    const flash = getModel('deepseek-flash', 'chat').targets[0]!;
    expect(priceValidUntil(flash, MONDAY + 30 * 60_000)).toBe(MONDAY + HOUR);
    expect(priceValidUntil(flash, MONDAY + 2 * HOUR)).toBe(MONDAY + 4 * HOUR);
    // Friday 10:30 → Monday 01:00: the weekend is off-peak.
    expect(priceValidUntil(flash, MONDAY + 4 * 24 * HOUR + 10.5 * HOUR)).toBe(MONDAY + 7 * 24 * HOUR + HOUR);
    expect(priceValidUntil(getModel('gemini-3.8-flash', 'chat').targets[0]!, MONDAY)).toBe(Date.parse('2027-01-01T00:00:00Z'));
    expect(priceValidUntil(getModel('gpt-4o', 'chat').targets[0]!, MONDAY)).toBeUndefined();
  });
});

describe('retirements', () => {
  it('serves a retired upstream id by its successor from the retirement date, and says so', () => {
    const before = firstAttemptAt('claude-sonnet-4-5', Date.parse('2026-11-29T23:59:00Z'));
    expect(`${before.publicModel}:${before.target.upstreamModel}`).toBe('claude-sonnet-4-5:claude-sonnet-4-5');
    const after = firstAttemptAt('claude-sonnet-4-5', Date.parse('2026-11-30T00:00:00Z'));
    expect(`${after.publicModel}:${after.target.upstreamModel}`).toBe('claude-sonnet-5-5:claude-sonnet-5-5');
  });
});

describe('equivalence classes', () => {
  it('lets a Claude Opus fall back only within the Opus tier', () => {
    for (const e of CATALOGUE.values()) {
      if (!e.id.startsWith('claude-opus')) continue;
      for (const eq of e.equivalents) expect(eq, e.id).toMatch(/^claude-opus|^gpt-5\.5$|^gemini-3\.1-pro/);
    }
  });
});

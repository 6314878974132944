import { describe, expect, it } from 'vitest';
import { formatNanoUsd, usdToNanoUsd } from '../../functions/shared/money/money';
import { computeCharge, displayedPrice, PLATFORM_FEE_BPS, usdPerMTokToMicro } from '../../functions/shared/money/price';

const charge = (over: Partial<Parameters<typeof computeCharge>[0]> = {}) =>
  computeCharge({ promptTokens: 0, completionTokens: 0, freeTokensAvailable: 0, inputPrice: 0, outputPrice: 0, ...over });

describe('price units', () => {
  it('converts USD per 1M tokens to integer micro-USD exactly', () => {
    expect(usdPerMTokToMicro(2.5)).toBe(2_500_000);
    expect(usdPerMTokToMicro(0.15)).toBe(150_000);
    expect(usdPerMTokToMicro(0.000001)).toBe(1);
    expect(usdPerMTokToMicro(15)).toBe(15_000_000);
    expect(usdPerMTokToMicro(0)).toBe(0);
  });

  it('refuses prices it cannot represent exactly', () => {
    expect(() => usdPerMTokToMicro(0.0000001)).toThrow(RangeError); // 1e-7: exponent form, 7 decimals
    expect(() => usdPerMTokToMicro(0.1 + 0.2)).toThrow(RangeError);
    expect(() => usdPerMTokToMicro(-1)).toThrow(RangeError);
    expect(() => usdPerMTokToMicro(Number.NaN)).toThrow(RangeError);
  });

  it('parses and prints dollars as nano-USD', () => {
    expect(usdToNanoUsd('1')).toBe(1_000_000_000);
    expect(usdToNanoUsd('0.000000001')).toBe(1);
    expect(usdToNanoUsd(12.34)).toBe(12_340_000_000);
    expect(() => usdToNanoUsd('0.0000000001')).toThrow(RangeError);
    expect(() => usdToNanoUsd('-5')).toThrow(RangeError);
    expect(formatNanoUsd(1_500_000_000)).toBe('$1.50');
    expect(formatNanoUsd(1)).toBe('$0.000000001');
    expect(formatNanoUsd(-2_637_500)).toBe('-$0.0026375');
  });
});

describe('displayedPrice', () => {
  it('adds the 5.5 % platform fee: $2.50 → 2,637,500 µUSD/MTok', () => {
    expect(PLATFORM_FEE_BPS).toBe(550);
    expect(displayedPrice(2_500_000)).toBe(2_637_500);
    expect(displayedPrice(usdPerMTokToMicro(10))).toBe(10_550_000);
    expect(displayedPrice(usdPerMTokToMicro(0.001))).toBe(1_055);
  });

  it('is exact for every price with up to 3 dollar decimals', () => {
    for (let thousandths = 0; thousandths <= 100_000; thousandths += 7) {
      const upstream = thousandths * 1_000;
      expect(displayedPrice(upstream) * 10_000).toBe(upstream * 10_550);
    }
  });

  it('rounds a non-exact fee up, by less than 1 µUSD/MTok', () => {
    expect(displayedPrice(1)).toBe(2); // 1.055 → 2
    expect(displayedPrice(100)).toBe(106); // 105.5 → 106
    expect(displayedPrice(200)).toBe(211); // exact
  });

  it('stays exact for very large prices (BigInt inside)', () => {
    expect(displayedPrice(1_000_000_000_000)).toBe(1_055_000_000_000);
    expect(() => displayedPrice(Number.MAX_SAFE_INTEGER)).toThrow(RangeError);
  });
});

describe('computeCharge', () => {
  it('charges ceil((prompt × in + completion × out) / 1000) nano-USD', () => {
    // 1,000 prompt at $2.6375/MTok + 500 completion at $10.55/MTok = 2,637,500 + 5,275,000 nano-USD
    expect(charge({ promptTokens: 1_000, completionTokens: 500, inputPrice: 2_637_500, outputPrice: 10_550_000 })).toEqual({
      freeTokensUsed: 0,
      freePromptTokens: 0,
      freeCompletionTokens: 0,
      costNanoUsd: 7_912_500,
    });
  });

  it('rounds up once per request, by at most 1 nano-USD', () => {
    expect(charge({ promptTokens: 1, inputPrice: 1 }).costNanoUsd).toBe(1); // 0.001 → 1
    expect(charge({ promptTokens: 1, inputPrice: 1_001 }).costNanoUsd).toBe(2); // 1.001 → 2
    expect(charge({ promptTokens: 1, completionTokens: 1, inputPrice: 500, outputPrice: 500 }).costNanoUsd).toBe(1); // one rounding, not two
    for (let p = 0; p < 3_000; p += 37) {
      const exact = (p * 1_234 + 7 * 5_678) / 1000;
      const cost = charge({ promptTokens: p, completionTokens: 7, inputPrice: 1_234, outputPrice: 5_678 }).costNanoUsd;
      expect(cost).toBeGreaterThanOrEqual(exact);
      expect(cost - exact).toBeLessThan(1);
    }
  });

  it('uses free tokens first, prompt before completion', () => {
    expect(charge({ promptTokens: 100, completionTokens: 50, freeTokensAvailable: 120, inputPrice: 1_000, outputPrice: 2_000 })).toEqual({
      freeTokensUsed: 120,
      freePromptTokens: 100,
      freeCompletionTokens: 20,
      costNanoUsd: 60,
    });
    expect(charge({ promptTokens: 100, completionTokens: 50, freeTokensAvailable: 60, inputPrice: 1_000, outputPrice: 2_000 })).toEqual({
      freeTokensUsed: 60,
      freePromptTokens: 60,
      freeCompletionTokens: 0,
      costNanoUsd: 40 + 100,
    });
  });

  it('charges nothing when free tokens cover the request exactly, and ignores a negative allowance', () => {
    expect(charge({ promptTokens: 10, completionTokens: 5, freeTokensAvailable: 15, inputPrice: 9, outputPrice: 9 })).toEqual({
      freeTokensUsed: 15,
      freePromptTokens: 10,
      freeCompletionTokens: 5,
      costNanoUsd: 0,
    });
    expect(charge({ promptTokens: 10, freeTokensAvailable: 1_000_000, inputPrice: 9 }).freeTokensUsed).toBe(10);
    expect(charge({ promptTokens: 10, freeTokensAvailable: -5, inputPrice: 1_000 })).toMatchObject({ freeTokensUsed: 0, costNanoUsd: 10 });
    expect(charge({})).toEqual({ freeTokensUsed: 0, freePromptTokens: 0, freeCompletionTokens: 0, costNanoUsd: 0 });
  });

  it('is exact for large numbers whose intermediates pass 2^53', () => {
    // 2e9 tokens × 75e6 µUSD/MTok = 1.5e17 > MAX_SAFE_INTEGER; the cost itself (1.5e14 nano-USD) is safe.
    expect(charge({ promptTokens: 2_000_000_000, inputPrice: 75_000_000 }).costNanoUsd).toBe(150_000_000_000_000);
    expect(charge({ promptTokens: 2_000_000_001, inputPrice: 75_000_001 }).costNanoUsd).toBe(Number((2_000_000_001n * 75_000_001n + 999n) / 1000n));
    expect(() => charge({ promptTokens: Number.MAX_SAFE_INTEGER, inputPrice: 1_000_000_000 })).toThrow(RangeError);
  });

  it('rejects fractional or negative counts', () => {
    expect(() => charge({ promptTokens: 1.5 })).toThrow(RangeError);
    expect(() => charge({ completionTokens: -1 })).toThrow(RangeError);
    expect(() => charge({ inputPrice: 0.5 })).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { exactUsd, formatCount, formatUsd, usdToNano } from '../../web/src/format/money';

describe('formatUsd (from integer nano-USD)', () => {
  it('shows cents for a dollar or more, with thousands separators', () => {
    expect(formatUsd(5_000_000_000)).toBe('$5.00');
    expect(formatUsd(12_345_678_901)).toBe('$12.35');
    expect(formatUsd(1_234_567_000_000_000)).toBe('$1,234,567.00');
  });

  it('keeps three significant digits below a dollar: 2, 4, 6 or 9 decimals', () => {
    expect(formatUsd(500_000_000)).toBe('$0.50');
    expect(formatUsd(990_000_000)).toBe('$0.99');
    expect(formatUsd(12_345_678)).toBe('$0.0123');
    expect(formatUsd(158_432)).toBe('$0.000158');
    expect(formatUsd(420)).toBe('$0.00000042');
    expect(formatUsd(1)).toBe('$0.000000001');
  });

  it('shows zero and negatives plainly, and refuses non-integers', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(-2_500_000_000)).toBe('-$2.50');
    expect(formatUsd(0.5)).toBe('—');
    expect(formatUsd(Number.NaN)).toBe('—');
  });

  it('rounds half away from zero at the last digit shown', () => {
    expect(formatUsd(1_005_000_000)).toBe('$1.01');
    expect(formatUsd(1_004_999_999)).toBe('$1.00');
  });
});

describe('exactUsd', () => {
  it('writes all 9 decimals, no rounding', () => {
    expect(exactUsd(1)).toBe('0.000000001');
    expect(exactUsd(12_345_678_901)).toBe('12.345678901');
    expect(exactUsd(0)).toBe('0.000000000');
    expect(exactUsd(-5)).toBe('-0.000000005');
  });
});

describe('formatCount and usdToNano', () => {
  it('groups thousands', () => {
    expect(formatCount(200_000)).toBe('200,000');
    expect(formatCount(0)).toBe('0');
  });

  it('turns typed dollars into nano-USD, refusing negatives and non-numbers', () => {
    expect(usdToNano(12.5)).toBe(12_500_000_000);
    expect(usdToNano(0.01)).toBe(10_000_000);
    expect(usdToNano(-1)).toBeUndefined();
    expect(usdToNano(Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});

/**
 * Money units. Integers only, never floats:
 * - Prices are integer **micro-USD per 1M tokens** (µUSD/MTok): $2.50 per 1M tokens = 2,500,000.
 * - Balances and costs are integer **nano-USD** (1e-9 USD): $1 = 1,000,000,000.
 * One token at a price of p µUSD/MTok costs p / 1e6 µUSD = p / 1000 nano-USD, so a price with three
 * dollar decimals ($0.001/MTok = 1,000 µUSD/MTok) costs exactly 1 nano-USD per token. Balances stay
 * below Number.MAX_SAFE_INTEGER nano-USD (about $9 million per account).
 */

/** nano-USD in one US dollar. */
export const NANO_USD_PER_USD = 1_000_000_000;

/**
 * Parses a non-negative decimal (`"2.5"`, `"0.000125"`, or a number whose shortest string form is
 * such a decimal) into an integer count of 10^-`scaleDigits` units, exactly: `("2.5", 6)` → 2,500,000.
 * @throws RangeError when the value is negative, not a plain decimal (exponent, NaN), has more than
 *         `scaleDigits` decimals, or the result passes Number.MAX_SAFE_INTEGER.
 */
export function decimalToScaledInteger(value: string | number, scaleDigits: number): number {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`"${text}" is not a non-negative decimal number.`);
  const whole = match[1] ?? '0';
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > scaleDigits) {
    throw new RangeError(`"${text}" has more than ${scaleDigits} decimals; it cannot be represented exactly.`);
  }
  const scaled = BigInt(whole) * 10n ** BigInt(scaleDigits) + BigInt(fraction.padEnd(scaleDigits, '0') || '0');
  if (scaled > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`"${text}" is too large.`);
  return Number(scaled);
}

/**
 * US dollars (decimal string or number, up to 9 decimals) → integer nano-USD, exactly.
 * @throws RangeError as {@link decimalToScaledInteger}.
 */
export function usdToNanoUsd(usd: string | number): number {
  return decimalToScaledInteger(usd, 9);
}

/** Integer nano-USD → a dollar string with all significant decimals, at least 2: 1_500_000_000 → `"$1.50"`. */
export function formatNanoUsd(nanoUsd: number): string {
  const n = BigInt(nanoUsd);
  const abs = n < 0n ? -n : n;
  const whole = abs / BigInt(NANO_USD_PER_USD);
  const fraction = (abs % BigInt(NANO_USD_PER_USD)).toString().padStart(9, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${n < 0n ? '-' : ''}$${whole}.${fraction}`;
}

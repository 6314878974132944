/**
 * Display of money and counts. Money arrives as integer nano-USD (1 USD = 10^9 nano-USD, DATA-MODEL
 * §1) and is formatted from the integer, so what the page shows is exact to the digit it shows.
 */

const NANO_PER_USD = 1_000_000_000;

/**
 * `nano` nano-USD as dollars with three significant digits at least, and never fewer than 2
 * decimals: $12.35, $0.0123, $0.000158, $0.00000042, $0.00. Decimals are 2, 4, 6 or 9, the fewest that
 * keep 3 significant digits (cents for balances, sub-cent precision for per-request costs). Rounds
 * half away from zero at the last shown digit. Integer input only (Number.isSafeInteger).
 */
export function formatUsd(nano: number): string {
  if (!Number.isSafeInteger(nano)) return '—';
  if (nano === 0) return '$0.00';
  const sign = nano < 0 ? '-' : '';
  const abs = Math.abs(nano);
  let decimals = 9;
  for (const d of [2, 4, 6]) {
    if (Math.round(abs / 10 ** (9 - d)) >= 100 || abs >= NANO_PER_USD) {
      decimals = d;
      break;
    }
  }
  const unit = 10 ** (9 - decimals);
  const rounded = Math.round(abs / unit); // in units of 10^-decimals USD
  const scale = 10 ** decimals;
  const dollars = Math.floor(rounded / scale);
  let fraction = String(rounded % scale).padStart(decimals, '0');
  if (decimals > 2) fraction = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${sign}$${dollars.toLocaleString('en-US')}.${fraction}`;
}

/** Exact decimal USD of `nano` nano-USD, 9 decimals (for CSV: no rounding at all). */
export function exactUsd(nano: number): string {
  const sign = nano < 0 ? '-' : '';
  const abs = Math.abs(nano);
  return `${sign}${Math.floor(abs / NANO_PER_USD)}.${String(abs % NANO_PER_USD).padStart(9, '0')}`;
}

/** An integer count with thousands separators: 200000 → "200,000". */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** USD (a number, as a form field gives it) → nano-USD integer, or undefined when not a valid amount. */
export function usdToNano(usd: number): number | undefined {
  if (!Number.isFinite(usd) || usd < 0) return undefined;
  const nano = Math.round(usd * NANO_PER_USD);
  return Number.isSafeInteger(nano) ? nano : undefined;
}

/**
 * Price math, in integers (units in money.ts): prices in µUSD per 1M tokens, costs in nano-USD.
 *
 * THE rounding rule: a request's cost is computed exactly as a rational number of nano-USD and rounded
 * **up once per request**, to the next whole nano-USD (so it is never undercharged and overcharged by
 * less than 1 nano-USD = $0.000000001). Nothing else in billing rounds; the displayed price is rounded
 * up once, when the catalogue is loaded ({@link displayedPrice}).
 */
import { decimalToScaledInteger } from './money';

/** The platform fee, basis points (spec §1 and §8: 5.5 %, included in the displayed price). */
export const PLATFORM_FEE_BPS = 550;

const BPS_PER_UNIT = 10_000n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * USD per 1M tokens (as the catalogue writes it, e.g. 2.5) → integer µUSD per 1M tokens (2,500,000).
 * Exact for up to 6 decimals.
 * @throws RangeError for a negative price, more than 6 decimals, or a value past Number.MAX_SAFE_INTEGER µUSD.
 */
export function usdPerMTokToMicro(usd: number): number {
  return decimalToScaledInteger(usd, 6);
}

/**
 * The price the client sees and pays, µUSD/MTok: ceil(upstream × (10,000 + 550) / 10,000). Exact for
 * every upstream price with at most 3 dollar decimals (a multiple of 1,000 µUSD, so × 1.055 is whole);
 * otherwise rounded up, by less than 1 µUSD/MTok, so the fee is never undercharged.
 * @throws RangeError when the upstream price is not a non-negative safe integer.
 */
export function displayedPrice(upstreamMicroPerMTok: number): number {
  assertCount('upstream price', upstreamMicroPerMTok);
  const scaled = BigInt(upstreamMicroPerMTok) * (BPS_PER_UNIT + BigInt(PLATFORM_FEE_BPS));
  return toSafeNumber(ceilDiv(scaled, BPS_PER_UNIT), 'displayed price');
}

/** Inputs of {@link computeCharge}: token counts, and displayed prices in µUSD per 1M tokens. */
export interface ChargeInput {
  promptTokens: number;
  completionTokens: number;
  /** The account's free tokens left; ≤ 0 means none. */
  freeTokensAvailable: number;
  /** Displayed input price, µUSD/MTok. */
  inputPrice: number;
  /** Displayed output price, µUSD/MTok. */
  outputPrice: number;
}

/** What one request costs the account. */
export interface Charge {
  /** Free tokens consumed (= freePromptTokens + freeCompletionTokens). */
  freeTokensUsed: number;
  freePromptTokens: number;
  freeCompletionTokens: number;
  /** Charged to credit, nano-USD, rounded up once (THE rounding rule above). */
  costNanoUsd: number;
}

/**
 * Splits a request between free tokens and credit, then prices the rest. Free tokens are consumed first,
 * prompt tokens before completion tokens; the remaining tokens cost
 * ceil((billablePrompt × inputPrice + billableCompletion × outputPrice) / 1000) nano-USD.
 * Computed in BigInt, so no intermediate loses precision.
 * @throws RangeError when a count or price is not a non-negative safe integer, or the cost passes
 *         Number.MAX_SAFE_INTEGER nano-USD.
 */
export function computeCharge(input: ChargeInput): Charge {
  const { promptTokens, completionTokens, inputPrice, outputPrice } = input;
  assertCount('promptTokens', promptTokens);
  assertCount('completionTokens', completionTokens);
  assertCount('inputPrice', inputPrice);
  assertCount('outputPrice', outputPrice);
  if (!Number.isSafeInteger(input.freeTokensAvailable)) throw new RangeError('freeTokensAvailable must be an integer.');
  const free = Math.max(0, input.freeTokensAvailable);
  const freePromptTokens = Math.min(promptTokens, free);
  const freeCompletionTokens = Math.min(completionTokens, free - freePromptTokens);
  const microUsdTimesThousand =
    BigInt(promptTokens - freePromptTokens) * BigInt(inputPrice) +
    BigInt(completionTokens - freeCompletionTokens) * BigInt(outputPrice);
  // tokens × µUSD/MTok = 1e-12 USD = 1/1000 nano-USD; one upward rounding for the whole request.
  const costNanoUsd = toSafeNumber(ceilDiv(microUsdTimesThousand, 1000n), 'cost');
  return { freeTokensUsed: freePromptTokens + freeCompletionTokens, freePromptTokens, freeCompletionTokens, costNanoUsd };
}

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

function toSafeNumber(n: bigint, what: string): number {
  if (n > MAX_SAFE) throw new RangeError(`${what} exceeds Number.MAX_SAFE_INTEGER.`);
  return Number(n);
}

function assertCount(what: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative safe integer, got ${n}.`);
}

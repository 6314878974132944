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

/**
 * The cached share of a prompt and its displayed prices (µUSD per 1M tokens): token counts that are a
 * SUBSET of {@link ChargeInput.promptTokens} (usage/token-usage.ts).
 */
export interface CacheBuckets {
  readTokens: number;
  write5mTokens: number;
  write1hTokens: number;
  readPrice: number;
  write5mPrice: number;
  write1hPrice: number;
}

/** Inputs of {@link computeCharge}: token counts, and displayed prices in µUSD per 1M tokens. */
export interface ChargeInput {
  /** The whole prompt (tokens), cache reads and writes included. */
  promptTokens: number;
  completionTokens: number;
  /** The account's free tokens left; ≤ 0 means none. */
  freeTokensAvailable: number;
  /** Displayed input price (an uncached prompt token), µUSD/MTok. */
  inputPrice: number;
  /** Displayed output price, µUSD/MTok. */
  outputPrice: number;
  /** The prompt's cache reads and writes with their prices; absent: the whole prompt is uncached input. */
  cache?: CacheBuckets | undefined;
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
 * Splits a request between free tokens and credit, then prices the rest, bucket by bucket:
 *
 *   prompt value = uncached × input + reads × cachedInput + writes5m × write5m + writes1h × write1h
 *   cost = ceil((unpaid share of the prompt value + billable completion × output) / 1000) nano-USD
 *
 * Free tokens are consumed first, prompt before completion, and count a prompt token BY VALUE at the
 * input price, never above one token: a cache read consumes cachedInput / input of a free token (0.1 on
 * Claude), an uncached token one, a cache write one (its premium over the input price is not taken from
 * the free tokens). When the free tokens cover only part of the prompt's weight, every prompt bucket is
 * charged the same uncovered share. Without cache buckets this is exactly `(prompt − free) × input`.
 * The whole request is rounded up once; everything is computed in BigInt.
 *
 * Bound (why a hold at the highest prompt price covers it, billing/hold-demand.ts): each prompt token
 * weighs at most one free token and costs at most the highest bucket price, so neither the free tokens
 * nor the credit of a settle exceed those of a hold that priced every prompt token at that price.
 * @throws RangeError when a count or price is not a non-negative safe integer, the buckets exceed the
 *         prompt, or the cost passes Number.MAX_SAFE_INTEGER nano-USD.
 */
export function computeCharge(input: ChargeInput): Charge {
  const { promptTokens, completionTokens, inputPrice, outputPrice } = input;
  const cache = input.cache ?? { readTokens: 0, write5mTokens: 0, write1hTokens: 0, readPrice: 0, write5mPrice: 0, write1hPrice: 0 };
  for (const [what, n] of Object.entries({ promptTokens, completionTokens, inputPrice, outputPrice, ...cache })) assertCount(what, n);
  if (!Number.isSafeInteger(input.freeTokensAvailable)) throw new RangeError('freeTokensAvailable must be an integer.');
  const uncached = promptTokens - cache.readTokens - cache.write5mTokens - cache.write1hTokens;
  if (uncached < 0) throw new RangeError('cache buckets exceed promptTokens.');
  const free = BigInt(Math.max(0, input.freeTokensAvailable));
  const buckets: Array<[tokens: number, price: number]> = [
    [uncached, inputPrice],
    [cache.readTokens, cache.readPrice],
    [cache.write5mTokens, cache.write5mPrice],
    [cache.write1hTokens, cache.write1hPrice],
  ];
  // Value of one free token, and each bucket's weight against it (≤ one token each).
  const unit = BigInt(inputPrice > 0 ? inputPrice : 1);
  let value = 0n; // tokens × µUSD/MTok
  let weight = 0n; // in units of `unit`
  for (const [tokens, price] of buckets) {
    value += BigInt(tokens) * BigInt(price);
    weight += BigInt(tokens) * (inputPrice > 0 ? BigInt(Math.min(price, inputPrice)) : 1n);
  }
  const covered = free * unit < weight ? free * unit : weight;
  const freePrompt = ceilDiv(covered, unit);
  const freeCompletion = BigInt(completionTokens) < free - freePrompt ? BigInt(completionTokens) : free - freePrompt;
  const completionValue = (BigInt(completionTokens) - freeCompletion) * BigInt(outputPrice);
  // tokens × µUSD/MTok = 1e-12 USD = 1/1000 nano-USD; one upward rounding for the whole request.
  const cost = weight === 0n ? ceilDiv(completionValue, 1000n) : ceilDiv(value * (weight - covered) + completionValue * weight, weight * 1000n);
  const freePromptTokens = Number(freePrompt);
  const freeCompletionTokens = Number(freeCompletion);
  return { freeTokensUsed: freePromptTokens + freeCompletionTokens, freePromptTokens, freeCompletionTokens, costNanoUsd: toSafeNumber(cost, 'cost') };
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

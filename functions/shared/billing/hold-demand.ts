/**
 * The most a request can cost (DATA-MODEL §1 "hold"): prompt tokens — the bound of usage/prompt-tokens.ts,
 * the one counting rule also used by the no-usage estimate and the time limits — plus n × the output
 * limit sent upstream, all at the highest price among the attempts the plan may make (BYOK: the fee alone).
 *
 * Prompt caching (docs/prices.md): the whole prompt is held at the highest price a prompt token can cost
 * on the attempt — a cache write when the request asks for caching (`cache_control` anywhere: 5-minute
 * writes at 1.25× input on Claude; a `ttl: "1h"` breakpoint: 1-hour writes at 2×), else the input
 * price (a cache read is never dearer than input). A request naming a Gemini context cache holds the
 * model's whole context window as prompt. An upstream that still counts more than we held is
 * billed the hold at most (settle.ts): the rest is the platform's loss, recorded.
 *
 * The price one attempt is billed at ({@link attemptPrices}, µUSD per 1M tokens) is the same for the
 * hold (its most, over the plan) and the settle (the served attempt: app/settle-request.ts): the
 * target's displayed price, its long-prompt tier included — or, for an attempt made with the account's
 * own provider key (BYOK), the platform fee alone (displayed − upstream price, the 5.5%).
 */
import { byokFeePricesFor, displayedPricesFor, type CatalogueEntry, type CatalogueTarget, type TokenPrices } from '../catalogue/catalogue';
import { geminiCachedContent, type ChatCompletionRequest } from '../openai/chat-request';
import type { Attempt } from '../routing/attempt-plan';
import { utf8TokenBound } from '../usage/estimate';
import { chatPromptTokens, textsPromptTokens } from '../usage/prompt-tokens';
import { cacheWriteIntent, type CacheWriteIntent } from '../usage/cache-intent';
import type { HoldDemand } from './hold-plan';

/** A demand plus what the ledger records for an orphan, and the output limit to send upstream. */
export interface Demand {
  demand: HoldDemand;
  /** Best prompt estimate (tokens). */
  promptTokensEstimate: number;
  /** Output tokens per choice to send upstream when the client set none. */
  outputLimit: number;
}

/** The prices of `attempt` for a prompt of `promptTokens` tokens. */
export function attemptPrices(attempt: Pick<Attempt, 'target' | 'byok'>, promptTokens: number): TokenPrices {
  return attempt.byok !== undefined ? byokFeePricesFor(attempt.target, promptTokens) : displayedPricesFor(attempt.target, promptTokens);
}

/**
 * Highest prices among the plan's attempts (µUSD per 1M tokens), at this prompt size: each at its own
 * price ({@link attemptPrices}) — a BYOK attempt at the platform fee alone, the platform's own key (a
 * fallback the user allows) at the full displayed price — the input price being the highest prompt
 * bucket the request's caching can trigger.
 */
function highestPrices(plan: readonly Attempt[], prompt: number, caching: CacheWriteIntent = 'none'): { input: number; output: number } {
  let input = 0;
  let output = 0;
  for (const a of plan) {
    const p = attemptPrices(a, prompt);
    input = Math.max(input, p.input, caching === 'none' ? 0 : p.cacheWrite5m, caching === '1h' ? p.cacheWrite1h : 0);
    output = Math.max(output, p.output);
  }
  return { input, output };
}

/** The demand of a chat request over its attempt plan. */
export function chatDemand(body: ChatCompletionRequest, entry: CatalogueEntry, plan: readonly Attempt[]): Demand {
  const targets = plan.map((a) => a.target);
  const prompt = chatPromptTokens(body, targets);
  // OpenAI bills rejected predicted-output tokens as completion tokens.
  const prediction = body.prediction === undefined ? 0 : utf8TokenBound(JSON.stringify(body.prediction));
  const asked = body.max_completion_tokens ?? body.max_tokens ?? entry.targets[0]?.maxOutputTokens ?? 4_096;
  const perChoice = Math.max(...targets.map((t) => Math.min(asked, t.maxOutputTokens)));
  const choices = body.n ?? 1;
  // A named context cache (`google.cached_content`) is read as prompt, of a size we cannot see (it
  // counts in Gemini's promptTokenCount): the whole context window is held.
  const promptBound = geminiCachedContent(body) === undefined ? prompt.bound : Math.max(prompt.bound, ...targets.map((t) => t.contextWindow));
  const prices = highestPrices(plan, promptBound, cacheWriteIntent(body));
  return {
    demand: {
      promptTokens: promptBound,
      outputTokens: choices * perChoice + prediction,
      outputLimitPerChoice: perChoice,
      choices,
      inputPrice: prices.input,
      outputPrice: prices.output,
    },
    promptTokensEstimate: prompt.estimate,
    outputLimit: asked,
  };
}

/** The demand of an embeddings request: its inputs, at the model's input price. */
export function embeddingsDemand(inputs: readonly string[], plan: readonly Attempt[]): Demand {
  const prompt = textsPromptTokens(inputs, 0);
  const prices = highestPrices(plan, prompt.bound);
  return {
    demand: { promptTokens: prompt.bound, outputTokens: 0, outputLimitPerChoice: 0, choices: 1, inputPrice: prices.input, outputPrice: prices.output },
    promptTokensEstimate: prompt.estimate,
    outputLimit: 0,
  };
}

/**
 * The demand of an image generation request: its prompt, plus `n` images at the most output tokens one
 * image can cost on any attempt of the plan (catalogue `image.outputTokens`: the requested size and
 * quality; the largest size or the highest quality when the request leaves them to the model), at the
 * highest prices of the plan. The images are output tokens like any other (docs/prices.md).
 */
export function imagesDemand(prompt: string, n: number, size: string | undefined, quality: string | undefined, plan: readonly Attempt[]): Demand {
  const count = textsPromptTokens([prompt], 0);
  const perImage = Math.max(...plan.map((a) => imageOutputTokens(a.target, size, quality)));
  const prices = highestPrices(plan, count.bound);
  return {
    demand: {
      promptTokens: count.bound,
      outputTokens: n * perImage,
      outputLimitPerChoice: perImage,
      choices: n,
      inputPrice: prices.input,
      outputPrice: prices.output,
    },
    promptTokensEstimate: count.estimate,
    outputLimit: perImage,
  };
}

/**
 * Output tokens one image of `size` and `quality` costs on `target` (catalogue `image.outputTokens`);
 * the most over the sizes when `size` is `auto`/unknown/absent, over the qualities when `quality` is
 * `auto`/absent. 0 for a target without image data.
 */
export function imageOutputTokens(target: CatalogueTarget, size: string | undefined, quality: string | undefined): number {
  const table = target.image?.outputTokens ?? {};
  const rows = size !== undefined && table[size] !== undefined ? [table[size]] : Object.values(table);
  return Math.max(0, ...rows.map((r) => (quality === 'low' || quality === 'medium' || quality === 'high' ? r[quality] : Math.max(r.low, r.medium, r.high))));
}

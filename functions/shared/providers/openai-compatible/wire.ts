import * as z from '../../validation/zod';
import type { FinishReason } from '../../openai/chat-response';
import { tokenUsage, type TokenUsage } from '../../usage/token-usage';

/**
 * Tolerant schemas for what OpenAI-compatible upstreams send (OpenAI, DeepSeek, MiniMax, Together,
 * DeepInfra, Groq; Anthropic and Gemini are reached through their native APIs, registry.ts). Only the
 * fields we read, all `.nullish()`, loose objects: an added upstream field never breaks us.
 */

const toolCallDelta = z.looseObject({
  index: z.nullish(z.number().check(z.int())),
  id: z.nullish(z.string()),
  type: z.nullish(z.string()),
  function: z.nullish(z.looseObject({ name: z.nullish(z.string()), arguments: z.nullish(z.string()) })),
  /** OpenAI custom tool calls (`type: "custom"`): name and free-text input. */
  custom: z.nullish(z.looseObject({ name: z.nullish(z.string()), input: z.nullish(z.string()) })),
});

/**
 * A choice's `logprobs`: `{content: [...], refusal: [...]}` token lists (OpenAI
 * `ChatCompletionTokenLogprob`, providers.md §1.3–1.4), null unless the client asked. Not read, only
 * passed on as received, so its inner shape is the upstream's business.
 */
const choiceLogprobs = z.optional(z.unknown());

/** MiniMax `reasoning_details` items (providers.md §5.2). */
const reasoningDetail = z.looseObject({ text: z.nullish(z.string()) });

export const upstreamUsage = z.looseObject({
  prompt_tokens: z.nullish(z.number()),
  completion_tokens: z.nullish(z.number()),
  total_tokens: z.nullish(z.number()),
  prompt_tokens_details: z.nullish(z.looseObject({ cached_tokens: z.nullish(z.number()), cache_write_tokens: z.nullish(z.number()) })),
  completion_tokens_details: z.nullish(z.looseObject({ reasoning_tokens: z.nullish(z.number()) })),
  /** DeepSeek's cache split (providers.md §4.4): hit + miss = prompt_tokens. */
  prompt_cache_hit_tokens: z.nullish(z.number()),
  prompt_cache_miss_tokens: z.nullish(z.number()),
});

/** MiniMax reports some errors inside a 200 (providers.md §5.4). */
export const baseResp = z.nullish(z.looseObject({ status_code: z.nullish(z.number()), status_msg: z.nullish(z.string()) }));

export const chatChunkBody = z.looseObject({
  choices: z.nullish(
    z.array(
      z.looseObject({
        index: z.nullish(z.number()),
        delta: z.nullish(
          z.looseObject({
            role: z.nullish(z.string()),
            content: z.nullish(z.string()),
            refusal: z.nullish(z.string()),
            reasoning_content: z.nullish(z.string()),
            reasoning_details: z.nullish(z.array(reasoningDetail)),
            tool_calls: z.nullish(z.array(toolCallDelta)),
          }),
        ),
        logprobs: choiceLogprobs,
        finish_reason: z.nullish(z.string()),
      }),
    ),
  ),
  usage: z.nullish(upstreamUsage),
  /** Groq historically put stream usage here (providers.md §6). */
  x_groq: z.nullish(z.looseObject({ usage: z.nullish(upstreamUsage) })),
  system_fingerprint: z.nullish(z.string()),
  error: z.optional(z.unknown()),
  base_resp: baseResp,
});

export const embeddingsBody = z.looseObject({
  data: z.array(z.looseObject({ index: z.nullish(z.number()), embedding: z.union([z.array(z.number()), z.string()]) })),
  usage: z.nullish(z.looseObject({ prompt_tokens: z.nullish(z.number()) })),
});

/**
 * OpenAI-compatible `finish_reason` → ours. DeepSeek adds `insufficient_system_resource` (the answer
 * was cut by the upstream): reported as `length`, the closest OpenAI value (providers.md §4.4).
 */
export function mapFinishReason(reason: string | null | undefined): FinishReason | null {
  switch (reason) {
    case null:
    case undefined:
    case '':
      return null;
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
    case 'function_call':
      return reason;
    case 'insufficient_system_resource':
      return 'length';
    case 'eos':
    case 'end_turn':
      return 'stop';
    default:
      return 'stop';
  }
}

/**
 * Normalises an upstream usage object (usage/token-usage.ts); undefined when it has no token counts.
 * The cached count is a SUBSET of `prompt_tokens`: OpenAI's and MiniMax's `cached_tokens` (MiniMax's
 * passive cache reports no write count and bills none: docs/prices.md), DeepSeek's
 * `prompt_cache_hit_tokens` (hit + miss = prompt). A `cache_write_tokens` (OpenRouter-style upstreams)
 * is a 5-minute write.
 */
export function mapUsage(u: z.infer<typeof upstreamUsage> | null | undefined): TokenUsage | undefined {
  if (u == null || u.prompt_tokens == null || u.completion_tokens == null) return undefined;
  return tokenUsage({
    prompt: u.prompt_tokens,
    completion: u.completion_tokens,
    cachedRead: u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0,
    cacheWrite5m: u.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0,
  });
}

/** MiniMax `reasoning_details` → one reasoning string. */
export function joinReasoningDetails(details: ReadonlyArray<{ text?: string | null | undefined }> | null | undefined): string | undefined {
  if (details == null || details.length === 0) return undefined;
  return details.map((d) => d.text ?? '').join('');
}

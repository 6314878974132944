import * as z from 'zod';
import type { FinishReason, Usage } from '../../openai/chat-response';
import { makeUsage } from '../../openai/chat-response';

/**
 * Tolerant schemas for what OpenAI-compatible upstreams send (OpenAI, DeepSeek, MiniMax, Together,
 * DeepInfra, Groq; Anthropic and Gemini are reached through their native APIs, registry.ts). Only the
 * fields we read, all `.nullish()`, loose objects: an added upstream field never breaks us.
 */

const toolCallDelta = z.looseObject({
  index: z.number().int().nullish(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
  /** OpenAI custom tool calls (`type: "custom"`): name and free-text input. */
  custom: z.looseObject({ name: z.string().nullish(), input: z.string().nullish() }).nullish(),
});

/**
 * A choice's `logprobs`: `{content: [...], refusal: [...]}` token lists (OpenAI
 * `ChatCompletionTokenLogprob`, providers.md §1.3–1.4), null unless the client asked. Not read, only
 * passed on as received, so its inner shape is the upstream's business.
 */
const choiceLogprobs = z.unknown().optional();

/** MiniMax `reasoning_details` items (providers.md §5.2). */
const reasoningDetail = z.looseObject({ text: z.string().nullish() });

export const upstreamUsage = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
  /** DeepSeek's cache split (providers.md §4.4). */
  prompt_cache_hit_tokens: z.number().nullish(),
});

const upstreamToolCall = z.looseObject({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }).nullish(),
  custom: z.looseObject({ name: z.string(), input: z.string().nullish() }).nullish(),
});
export type UpstreamToolCall = z.infer<typeof upstreamToolCall>;

const message = z.looseObject({
  content: z.string().nullish(),
  refusal: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  reasoning_details: z.array(reasoningDetail).nullish(),
  tool_calls: z.array(upstreamToolCall).nullish(),
});

/** MiniMax reports some errors inside a 200 (providers.md §5.4). */
export const baseResp = z.looseObject({ status_code: z.number().nullish(), status_msg: z.string().nullish() }).nullish();

const upstreamChoice = z.looseObject({ index: z.number().nullish(), message: message.nullish(), logprobs: choiceLogprobs, finish_reason: z.string().nullish() });
export type UpstreamChoice = z.infer<typeof upstreamChoice>;

export const chatCompletionBody = z.looseObject({
  choices: z.array(upstreamChoice).nullish(),
  usage: upstreamUsage.nullish(),
  system_fingerprint: z.string().nullish(),
  base_resp: baseResp,
});

export const chatChunkBody = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        index: z.number().nullish(),
        delta: z
          .looseObject({
            role: z.string().nullish(),
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            reasoning_details: z.array(reasoningDetail).nullish(),
            tool_calls: z.array(toolCallDelta).nullish(),
          })
          .nullish(),
        logprobs: choiceLogprobs,
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: upstreamUsage.nullish(),
  /** Groq historically put stream usage here (providers.md §6). */
  x_groq: z.looseObject({ usage: upstreamUsage.nullish() }).nullish(),
  system_fingerprint: z.string().nullish(),
  error: z.unknown().optional(),
  base_resp: baseResp,
});

export const embeddingsBody = z.looseObject({
  data: z.array(z.looseObject({ index: z.number().nullish(), embedding: z.union([z.array(z.number()), z.string()]) })),
  usage: z.looseObject({ prompt_tokens: z.number().nullish() }).nullish(),
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

/** Normalises an upstream usage object; undefined when it has no token counts. */
export function mapUsage(u: z.infer<typeof upstreamUsage> | null | undefined): Usage | undefined {
  if (u == null || u.prompt_tokens == null || u.completion_tokens == null) return undefined;
  const extra: Partial<Usage> = {};
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens;
  if (cached != null) extra.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (reasoning != null) extra.completion_tokens_details = { reasoning_tokens: reasoning };
  return makeUsage(u.prompt_tokens, u.completion_tokens, extra);
}

/** MiniMax `reasoning_details` → one reasoning string. */
export function joinReasoningDetails(details: ReadonlyArray<{ text?: string | null | undefined }> | null | undefined): string | undefined {
  if (details == null || details.length === 0) return undefined;
  return details.map((d) => d.text ?? '').join('');
}

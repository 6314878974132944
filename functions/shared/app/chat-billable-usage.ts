import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChunkParts, Usage } from '../openai/chat-response';
import { makeUsage } from '../openai/chat-response';
import { logger } from '../observability/logger';
import { estimatePromptTokens, estimateTextTokens } from '../usage/estimate';
import type { BillableUsage } from './settle-request';

// The tokens a chat answer is billed for: the upstream's own `usage` when it sent one, else our
// estimate (gpt-tokenizer) of the prompt and of the text, reasoning and tool calls produced.

/** The upstream's usage, as billed (not estimated). */
export function fromUsage(u: Usage): BillableUsage {
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, estimated: false };
}

/** Billable tokens back in OpenAI's `usage` shape (`prompt_tokens`, `completion_tokens`, `total_tokens`). */
export function toUsage(b: BillableUsage): Usage {
  return makeUsage(b.promptTokens, b.completionTokens);
}

/** What a (streamed) tool call produced, for a token estimate: function or custom tool name and input. */
export function toolCallText(t: NonNullable<ChunkParts['choices'][number]['delta']['tool_calls']>[number]): string {
  return (t.function?.name ?? '') + (t.function?.arguments ?? '') + (t.custom?.name ?? '') + (t.custom?.input ?? '');
}

/**
 * Our count of a request's tokens, when the upstream gave none. Billing must never fail for want of
 * a tokenizer: if it cannot load, a conservative characters/3 count is used (still marked estimated).
 */
export async function estimate(body: ChatCompletionRequest, completionText: string): Promise<BillableUsage> {
  try {
    return { promptTokens: await estimatePromptTokens(body.messages), completionTokens: await estimateTextTokens(completionText), estimated: true };
  } catch (err) {
    logger.error('tokenizer unavailable; billing a characters/3 estimate', { error: err as Error });
    const promptChars = JSON.stringify(body.messages).length;
    return { promptTokens: Math.ceil(promptChars / 3), completionTokens: Math.ceil(completionText.length / 3), estimated: true };
  }
}

/**
 * A stream that did not finish: the upstream's usage when it sent one (some send it before the end),
 * else our estimate of what was produced. Never less than what the client received.
 */
export async function estimateOr(usage: Usage | undefined, body: ChatCompletionRequest, text: string): Promise<BillableUsage> {
  const est = await estimate(body, text);
  if (usage === undefined) return est;
  return { promptTokens: usage.prompt_tokens, completionTokens: Math.max(usage.completion_tokens, est.completionTokens), estimated: usage.completion_tokens < est.completionTokens };
}

/**
 * The billable usage of an answer that finished: the upstream's own usage, else our estimate of the
 * prompt and of `text()` (the output produced). An answer cut at its held output
 * (`outputCut`, routing/fallback-router.ts) bills the output tokens the meter counted (the settle
 * charges the hold at most) and the upstream's prompt count when it sent one: any usage the upstream
 * sent was not the answer's.
 */
export async function answerUsage(body: ChatCompletionRequest, usage: Usage | undefined, outputCut: number | undefined, text: () => string): Promise<BillableUsage> {
  if (outputCut === undefined) return usage !== undefined ? fromUsage(usage) : estimate(body, text());
  const promptTokens = usage?.prompt_tokens ?? (await estimate(body, '')).promptTokens;
  return { promptTokens, completionTokens: outputCut, estimated: true };
}

import type { CatalogueTarget } from '../catalogue/catalogue';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { CompletionChoice } from '../openai/chat-response';
import { logger } from '../observability/logger';
import { estimateTextTokens } from '../usage/estimate';
import { estimateChatPromptTokens } from '../usage/prompt-tokens';
import { tokenUsage, type TokenUsage } from '../usage/token-usage';
import type { BillableUsage } from './settle-request';

// The tokens a chat answer is billed for: the upstream's own `usage` when it sent one, else our
// estimate — the prompt by THE counting rule of its hold (usage/prompt-tokens.ts: text, tools, media),
// the completion from the text, reasoning and tool calls produced, assembled the same way whether the
// answer was streamed or buffered (so the same upstream bytes bill the same).

/** The upstream's usage, as billed (not estimated). */
export function fromUsage(u: TokenUsage): BillableUsage {
  return { tokens: u, estimated: false };
}

/** What the choices of an answer produced, for a token estimate: content, reasoning, tool call names and inputs. */
export function completionText(choices: readonly CompletionChoice[]): string {
  let text = '';
  for (const c of choices) {
    text += (c.message.content ?? '') + (c.message.reasoning_content ?? '');
    for (const t of c.message.tool_calls ?? []) text += t.type === 'function' ? t.function.name + t.function.arguments : t.custom.name + t.custom.input;
  }
  return text;
}

/**
 * Our count of a request's tokens, when the upstream gave none, on the target that served it. Billing
 * must never fail for want of a tokenizer: if it cannot load, a conservative characters/3 count is used
 * (still marked estimated).
 */
export async function estimate(body: ChatCompletionRequest, target: CatalogueTarget, text: string): Promise<BillableUsage> {
  try {
    return { tokens: tokenUsage({ prompt: await estimateChatPromptTokens(body, target), completion: await estimateTextTokens(text) }), estimated: true };
  } catch (err) {
    logger.error('tokenizer unavailable; billing a characters/3 estimate', { error: err as Error });
    const promptChars = JSON.stringify(body.messages).length + JSON.stringify(body.tools ?? '').length;
    return { tokens: tokenUsage({ prompt: Math.ceil(promptChars / 3), completion: Math.ceil(text.length / 3) }), estimated: true };
  }
}

/**
 * A stream that did not finish: the upstream's usage when it sent one (some send it before the end),
 * else our estimate of what was produced. Never less than what the client received.
 */
export async function estimateOr(usage: TokenUsage | undefined, body: ChatCompletionRequest, target: CatalogueTarget, text: string): Promise<BillableUsage> {
  const est = await estimate(body, target, text);
  if (usage === undefined) return est;
  const completion = Math.max(usage.completion, est.tokens.completion);
  return { tokens: { ...usage, completion }, estimated: usage.completion < est.tokens.completion };
}

/**
 * The billable usage of an answer that finished: the upstream's own usage, else our estimate of the
 * prompt and of `text()` (the output produced). An answer cut at its held output
 * (`outputCut`, routing/fallback-router.ts) bills the output tokens the meter counted (the settle
 * charges the hold at most) and the upstream's prompt count when it sent one: any usage the upstream
 * sent was not the answer's.
 */
export async function answerUsage(body: ChatCompletionRequest, target: CatalogueTarget, usage: TokenUsage | undefined, outputCut: number | undefined, text: () => string): Promise<BillableUsage> {
  if (outputCut === undefined) return usage !== undefined ? fromUsage(usage) : estimate(body, target, text());
  // The upstream's prompt buckets when it sent them, our count of the prompt otherwise; the output cut.
  const prompt = usage ?? (await estimate(body, target, '')).tokens;
  return { tokens: { ...prompt, completion: outputCut, reasoning: Math.min(prompt.reasoning, outputCut) }, estimated: true };
}

import type { CatalogueTarget } from '../../catalogue/catalogue';
import type { ChatCompletionRequest } from '../../openai/chat-request';
import type { AnthropicThinking } from './request-body';
import { forcesToolUse } from './tools';

/**
 * OpenAI `reasoning_effort` → Anthropic extended thinking (`thinking: {type:"enabled", budget_tokens}`,
 * providers.md §2.2). Thinking tokens count toward `max_tokens` (Anthropic SDK `ThinkingConfigEnabled`),
 * the same meaning OpenAI gives `max_completion_tokens` for reasoning models, so the client's limit is
 * kept and the budget fits under it.
 */

/** Anthropic's smallest accepted `budget_tokens` (tokens). */
export const MIN_THINKING_BUDGET = 1024;

/**
 * Thinking budget per effort (tokens). low/medium/high are the documented modelmux mapping; the
 * efforts OpenAI added later map to the nearest: minimal → the minimum, xhigh/max → 32,768.
 * @returns undefined for `none` or no effort: no thinking.
 */
export function thinkingBudget(effort: ChatCompletionRequest['reasoning_effort']): number | undefined {
  switch (effort) {
    case null:
    case undefined:
    case 'none':
      return undefined;
    case 'minimal':
    case 'low':
      return MIN_THINKING_BUDGET;
    case 'medium':
      return 4096;
    case 'high':
      return 16_384;
    case 'xhigh':
    case 'max':
      return 32_768;
    default:
      return undefined;
  }
}

/**
 * The `thinking` field for this request, or undefined to send none. Thinking is sent only when:
 * - the client asked (`reasoning_effort`) and the target exposes reasoning (`capabilities.reasoning`);
 * - no tool is forced: Anthropic refuses thinking with `tool_choice` any/tool [MEM, Anthropic extended
 *   thinking docs];
 * - the last assistant message made no tool calls: with thinking on, Anthropic wants that message to
 *   start with the signed thinking block it produced ("When `thinking` is enabled, a final `assistant`
 *   message must start with a thinking block … To avoid this requirement, disable `thinking`", 400
 *   quoted in public issue threads), and OpenAI clients cannot send it back. The rest of a tool loop
 *   therefore runs without thinking;
 * - a budget of at least {@link MIN_THINKING_BUDGET} fits below `maxTokens` (the budget is lowered to
 *   `maxTokens - 1` when needed, since Anthropic requires `budget_tokens < max_tokens`).
 */
export function planThinking(req: ChatCompletionRequest, target: CatalogueTarget, maxTokens: number): AnthropicThinking | undefined {
  // OpenRouter's `reasoning.max_tokens` is Anthropic's own budget (docs/openrouter.md §1); `none` still turns it off.
  const effortBudget = thinkingBudget(req.reasoning_effort);
  const wanted = effortBudget === undefined ? undefined : Math.max(MIN_THINKING_BUDGET, req.reasoning?.max_tokens ?? effortBudget);
  if (wanted === undefined || target.capabilities.reasoning !== 'exposed') return undefined;
  if (forcesToolUse(req.tool_choice)) return undefined;
  const lastAssistant = req.messages.findLast((m) => m.role === 'assistant');
  if (lastAssistant?.role === 'assistant' && (lastAssistant.tool_calls?.length ?? 0) > 0) return undefined;
  const budget = Math.min(wanted, maxTokens - 1);
  return budget >= MIN_THINKING_BUDGET ? { type: 'enabled', budget_tokens: budget } : undefined;
}

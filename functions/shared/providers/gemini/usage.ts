import type { Usage } from '../../openai/chat-response';
import { makeUsage } from '../../openai/chat-response';
import type { UsageMetadata } from './wire';

/**
 * Gemini `usageMetadata` → OpenAI usage, in tokens (Gemini API, providers.md §3.3):
 * - prompt = `promptTokenCount` + `toolUsePromptTokenCount`
 * - completion = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is billed as output, and
 *   `candidatesTokenCount` excludes it)
 * - reasoning_tokens = `thoughtsTokenCount`; cached_tokens = `cachedContentTokenCount`
 *
 * A missing count is 0 (proto3 omits zeros). Undefined when there is no metadata, or it holds no
 * count at all, so the router estimates instead of billing zero.
 */
export function mapUsage(u: UsageMetadata | null | undefined): Usage | undefined {
  if (u == null) return undefined;
  if (u.promptTokenCount == null && u.candidatesTokenCount == null && u.totalTokenCount == null) return undefined;
  const prompt = (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0);
  const completion = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
  const extra: Partial<Usage> = {};
  if (u.cachedContentTokenCount != null) extra.prompt_tokens_details = { cached_tokens: u.cachedContentTokenCount };
  if (u.thoughtsTokenCount != null) extra.completion_tokens_details = { reasoning_tokens: u.thoughtsTokenCount };
  return makeUsage(prompt, completion, extra);
}

import { tokenUsage, type TokenUsage } from '../../usage/token-usage';
import type { UsageMetadata } from './wire';

/**
 * Gemini `usageMetadata` → the normalised usage, in tokens (Gemini API, providers.md §3.3):
 * - prompt = `promptTokenCount` + `toolUsePromptTokenCount`
 * - completion = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is billed as output, and
 *   `candidatesTokenCount` excludes it)
 * - reasoning = `thoughtsTokenCount`; cachedRead = `cachedContentTokenCount`, a SUBSET of
 *   `promptTokenCount` (implicit or explicit caching; Gemini bills no cache write per request)
 *
 * A missing count is 0 (proto3 omits zeros). Undefined when there is no metadata, or it holds no
 * count at all, so the router estimates instead of billing zero.
 */
export function mapUsage(u: UsageMetadata | null | undefined): TokenUsage | undefined {
  if (u == null) return undefined;
  if (u.promptTokenCount == null && u.candidatesTokenCount == null && u.totalTokenCount == null) return undefined;
  const prompt = (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0);
  const completion = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
  return tokenUsage({ prompt, completion, cachedRead: u.cachedContentTokenCount ?? 0, reasoning: u.thoughtsTokenCount ?? 0 });
}

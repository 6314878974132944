import { geminiCachedContent, type ChatCompletionRequest } from '../../openai/chat-request';
import type { AdapterContext, UpstreamHttpRequest } from '../types';
import { refuseLogprobs, refuseOpenAIOnlyFeatures } from '../unsupported-parameters';
import { toGeminiConversation } from './contents';
import { requiresCallSignatures } from './thought-signature';
import { toGenerationConfig } from './generation-config';
import { toGeminiTools } from './tools';
import type { GeminiGenerateContentBody } from './wire-request';

/**
 * Builds the upstream chat request (Gemini API, providers.md §3.1–3.2):
 * `POST {baseUrl}/models/{upstreamModel}:streamGenerateContent?alt=sse` (without `alt=sse` Gemini
 * streams one growing JSON array), key in `x-goog-api-key`.
 * The target's `upstreamParams`, if any, are merged into the body top level (Gemini-native fields).
 * `n` becomes `candidateCount` (generation-config.ts): each candidate is a choice. A named context cache
 * (`google.cached_content`) becomes `cachedContent` (providers.md §3.2): Gemini reads the cached
 * contents, system instruction and tools before the request's own and bills them at the cached price.
 * @throws InvalidRequestError for messages Gemini cannot take (see {@link toGeminiConversation}), for
 *   `logprobs: true` / `top_logprobs > 0` (the Gemini API refuses logprobs on every 2.5 model,
 *   unsupported-parameters.ts), for OpenAI's audio output, web search and moderation
 *   (refuseOpenAIOnlyFeatures), and for OpenAI's custom tools (see {@link toGeminiTools}).
 */
export function buildGeminiChatRequest(req: ChatCompletionRequest, ctx: AdapterContext): UpstreamHttpRequest {
  refuseLogprobs(req);
  refuseOpenAIOnlyFeatures(req);
  const { contents, systemInstruction } = toGeminiConversation(req.messages, requiresCallSignatures(ctx.target.upstreamModel));
  const body: GeminiGenerateContentBody = { contents, generationConfig: toGenerationConfig(req, ctx.target) };
  if (systemInstruction !== undefined) body.systemInstruction = systemInstruction;
  Object.assign(body, toGeminiTools(req));
  const cachedContent = geminiCachedContent(req);
  if (cachedContent !== undefined) body.cachedContent = cachedContent;
  return {
    url: geminiModelUrl(ctx, 'streamGenerateContent?alt=sse'),
    headers: geminiHeaders(ctx.endpoint.apiKey, 'text/event-stream'),
    body: JSON.stringify({ ...body, ...ctx.target.upstreamParams }),
  };
}

/** `{baseUrl}/models/{upstreamModel}:{method}` (the base URL ends in `/v1beta`, no trailing slash). */
export function geminiModelUrl(ctx: AdapterContext, method: string): string {
  return `${ctx.endpoint.baseUrl}/models/${encodeURIComponent(ctx.target.upstreamModel)}:${method}`;
}

/** JSON request headers with Gemini's key header (§3.1). */
export function geminiHeaders(apiKey: string, accept: string): Record<string, string> {
  return { 'content-type': 'application/json', accept, 'x-goog-api-key': apiKey };
}

import type { GatewayRequest, GatewayResult, JsonResult } from '../http/types';
import { asGatewayError } from '../errors/gateway-errors';
import { logger } from '../observability/logger';
import { parseJsonBody } from '../openai/parse-body';
import { getModel } from '../catalogue/catalogue';
import { estimateChatPromptTokens } from '../usage/prompt-tokens';
import { resolveMessagesModel } from '../messages/model-names';
import { geminiRequest } from '../gemini-api/request';
import { chatMessages, toChatRequest } from '../gemini-api/to-chat';
import { geminiErrorBody, geminiErrorKind, responseOf, streamTranslator } from '../gemini-api/answer';
import { chatCompletionRequest } from '../openai/chat-request';
import { safeParse } from '../validation/zod';
import { runChatExchange } from './chat-completions';
import { authenticateRequest } from './guard';
import type { ChatSurface } from './chat-answer';

/** `/v1beta/models/{model}:{method}`, `/v1/models/…` or `/models/…` (docs/providers.md §10). */
const ROUTE = /^(?:\/v1beta|\/v1)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** The Gemini API route a path names, if any: the model (without `models/`) and the method. */
export function geminiRoute(path: string): { model: string; method: string } | undefined {
  const m = ROUTE.exec(path);
  if (m === null) return undefined;
  return { model: decodeURIComponent(m[1] ?? ''), method: m[2] ?? '' };
}

/**
 * `POST …/models/{model}:generateContent | :streamGenerateContent | :countTokens`, the Gemini API on
 * the chat core (docs/providers.md §10): the key from `x-goog-api-key`, `?key=` or
 * `Authorization: Bearer` → validate → translate (gemini-api/to-chat.ts) → {@link runChatExchange}
 * (the same hold, limits, fallback, settle and ledger as `/v1/chat/completions`) → the answer as a
 * `GenerateContentResponse` or its SSE stream. Every error is Google's body and status.
 */
export function gemini(req: GatewayRequest, route: { model: string; method: string }): Promise<GatewayResult> {
  return inGeminiApi(req, async () => {
    const authed = withGoogleKey(req);
    const caller = await authenticateRequest(authed);
    const body = parseJsonBody(req.body, geminiRequest);
    const model = resolveMessagesModel(route.model);
    if (route.method === 'countTokens') return countTokens(body, model);
    const stream = route.method === 'streamGenerateContent';
    const chat = toChatRequest(body, model, stream);
    const includeThoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
    return runChatExchange(authed, caller, chat, geminiSurface(req.requestId, includeThoughts));
  });
}

/** `x-goog-api-key` or `?key=` as the bearer key, when no `Authorization` header came. */
export function withGoogleKey(req: GatewayRequest): GatewayRequest {
  if (req.headers.authorization !== undefined) return req;
  const key = req.headers['x-goog-api-key'] ?? new URLSearchParams(req.query ?? '').get('key') ?? undefined;
  return key === undefined ? req : { ...req, headers: { ...req.headers, authorization: `Bearer ${key}` } };
}

/** `:countTokens`: `{totalTokens}` from the prompt counter the holds use, on the model's first target. */
async function countTokens(body: Parameters<typeof chatMessages>[0], model: string): Promise<GatewayResult> {
  const parsed = safeParse(chatCompletionRequest, { model, messages: chatMessages(body) });
  const target = getModel(model, 'chat').targets[0];
  const totalTokens = target === undefined || !parsed.success ? 0 : await estimateChatPromptTokens(parsed.data, target);
  return { kind: 'json', status: 200, headers: {}, body: { totalTokens } };
}

/** How the chat core's answer is written on the Gemini API. */
export function geminiSurface(requestId: string, includeThoughts: boolean): ChatSurface {
  return {
    present: (completion) => responseOf(completion, requestId, includeThoughts),
    errorBody: (err) => geminiErrorBody(err),
    streamEncoder: (meta) => {
      const t = streamTranslator(meta.model, requestId, includeThoughts);
      return {
        wantsFinalUsage: true,
        parts: (p) => t.parts(p),
        complete: (usage) => t.complete(usage),
        failed: (err) => [`data: ${JSON.stringify(geminiErrorBody(err))}\n\n`],
      };
    },
  };
}

/** Runs a route of this API: any error thrown before the answer as Google's error body and status. */
export async function inGeminiApi(req: GatewayRequest, route: () => Promise<GatewayResult>): Promise<GatewayResult> {
  try {
    return await route();
  } catch (err) {
    const error = asGatewayError(err);
    if (error.status >= 500) logger.error('request failed', { requestId: req.requestId, path: req.path, status: error.status, error: err as Error });
    else logger.info('request refused', { requestId: req.requestId, path: req.path, status: error.status, code: error.code });
    const result: JsonResult = { kind: 'json', status: geminiErrorKind(error.status).status, headers: { ...error.headers }, body: geminiErrorBody(error) };
    return result;
  }
}

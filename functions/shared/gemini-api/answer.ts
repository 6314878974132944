import type { GatewayError } from '../errors/gateway-errors';
import type { ChatCompletion, ChunkParts, FinishReason, Usage } from '../openai/chat-response';

/**
 * The chat core's answer in the Gemini API's shape (docs/providers.md §10): a
 * `GenerateContentResponse` `{candidates:[{content:{role:"model",parts}, finishReason, index}],
 * usageMetadata, modelVersion, responseId}`; its stream as `data: <one-line JSON>\n\n` frames (no
 * `event:` lines), the last with the `finishReason` and the `usageMetadata`; errors as
 * `{error:{code, message, status}}`.
 */

/** A response part as Gemini writes it. */
export type ResponsePart = { text: string; thought?: true } | { functionCall: { id: string; name: string; args: unknown } };

/** OpenAI finish reasons → Gemini's: `length` → `MAX_TOKENS`, `content_filter` → `SAFETY`, else `STOP`. */
export function finishReasonOf(reason: FinishReason | null | undefined): string {
  if (reason === 'length') return 'MAX_TOKENS';
  if (reason === 'content_filter') return 'SAFETY';
  return 'STOP';
}

/** The chat usage as `usageMetadata` (tokens): prompt, candidates (output less thoughts), total, cached, thoughts. */
export function usageMetadata(usage: Usage | undefined): Record<string, number> {
  const prompt = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  const thoughts = usage?.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, output - thoughts),
    totalTokenCount: prompt + output,
    cachedContentTokenCount: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    thoughtsTokenCount: thoughts,
  };
}

function parseArgs(text: string): unknown {
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    return { arguments: text };
  }
}

/** A buffered `chat.completion` as a `GenerateContentResponse`; thought parts only when `includeThoughts`. */
export function responseOf(completion: ChatCompletion, responseId: string, includeThoughts: boolean): Record<string, unknown> {
  const choice = completion.choices[0];
  const m = choice?.message;
  const parts: ResponsePart[] = [];
  const reasoning = (m as { reasoning_content?: string } | undefined)?.reasoning_content;
  if (includeThoughts && typeof reasoning === 'string' && reasoning !== '') parts.push({ text: reasoning, thought: true });
  const text = m?.content ?? m?.refusal ?? '';
  if (text !== '') parts.push({ text });
  for (const call of m?.tool_calls ?? []) {
    if (call.type === 'function') parts.push({ functionCall: { id: call.id, name: call.function.name, args: parseArgs(call.function.arguments) } });
  }
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: finishReasonOf(choice?.finish_reason), index: 0 }],
    usageMetadata: usageMetadata(completion.usage),
    modelVersion: completion.model,
    responseId,
  };
}

/** One SSE frame: `data: <one-line JSON>\n\n`. */
export function dataFrame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/**
 * Chat chunk parts → Gemini stream chunks: text and thoughts as they come, function calls whole at
 * the end (Gemini sends a call in one part; chat streams its arguments in pieces), then the last
 * chunk with `finishReason` and `usageMetadata`.
 */
export function streamTranslator(model: string, responseId: string, includeThoughts: boolean) {
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let finish: FinishReason | null = null;
  const chunk = (parts: ResponsePart[], extra: Record<string, unknown> = {}) =>
    dataFrame({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: model, responseId });
  return {
    parts(p: ChunkParts): string[] {
      const choice = p.choices.find((c) => c.index === 0);
      if (choice === undefined) return [];
      if (choice.finish_reason !== null) finish = choice.finish_reason;
      const d = choice.delta;
      const parts: ResponsePart[] = [];
      if (includeThoughts && d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
      const text = (d.content ?? '') || (d.refusal ?? '');
      if (text !== '') parts.push({ text });
      for (const t of d.tool_calls ?? []) {
        const call = calls.get(t.index) ?? { id: t.id ?? `call_${responseId}_${t.index}`, name: '', args: '' };
        call.name ||= t.function?.name ?? '';
        call.args += t.function?.arguments ?? '';
        calls.set(t.index, call);
      }
      return parts.length === 0 ? [] : [chunk(parts)];
    },
    complete(usage: Usage | undefined): string[] {
      const parts: ResponsePart[] = [...calls.values()].map((c) => ({ functionCall: { id: c.id, name: c.name, args: parseArgs(c.args) } }));
      return [
        dataFrame({
          candidates: [{ content: { role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] }, finishReason: finishReasonOf(finish), index: 0 }],
          usageMetadata: usageMetadata(usage),
          modelVersion: model,
          responseId,
        }),
      ];
    },
  };
}

/**
 * Google's status name for an HTTP status (Google API design guide, error codes): 400
 * INVALID_ARGUMENT, 401 UNAUTHENTICATED, 402 (no credit, a key's spend limit) RESOURCE_EXHAUSTED as
 * 402 — what the Gemini API answers for depleted prepaid credit, which Google's clients do not retry,
 * while they retry a 429 with backoff (docs/providers.md §10) — 403 PERMISSION_DENIED, 404 NOT_FOUND,
 * 413 INVALID_ARGUMENT as 400, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, other
 * 5xx INTERNAL 500.
 */
export function geminiErrorKind(status: number): { status: number; name: string } {
  switch (status) {
    case 401:
      return { status, name: 'UNAUTHENTICATED' };
    case 402:
    case 429:
      return { status, name: 'RESOURCE_EXHAUSTED' };
    case 403:
      return { status, name: 'PERMISSION_DENIED' };
    case 404:
      return { status, name: 'NOT_FOUND' };
    case 503:
      return { status, name: 'UNAVAILABLE' };
    case 504:
      return { status, name: 'DEADLINE_EXCEEDED' };
    default:
      return status >= 500 ? { status: 500, name: 'INTERNAL' } : { status: 400, name: 'INVALID_ARGUMENT' };
  }
}

/** `{error:{code, message, status}}`. */
export function geminiErrorBody(err: GatewayError): { error: { code: number; message: string; status: string } } {
  const kind = geminiErrorKind(err.status);
  return { error: { code: kind.status, message: err.message, status: kind.name } };
}

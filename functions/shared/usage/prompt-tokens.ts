/**
 * THE count of a chat request's prompt tokens — one rule for every caller:
 * - the hold's upper bound (billing/hold-demand.ts): {@link chatPromptTokens}`.bound`;
 * - the tokens billed when an upstream sent no usage (a stream cut before its usage chunk; app/settle-request.ts):
 *   {@link estimateChatPromptTokens}, the same parts counted with the tokenizer loaded;
 * - the rough size behind the time limits and the hedge-loss log (routing/timeouts.ts): {@link roughChatPromptTokens}.
 *
 * What is counted (all three): every text an adapter may send upstream — each message's role, content,
 * name, tool call id, refusal, reasoning, tool and function calls — plus the request's tools, functions,
 * response format and tool choice, a framing of {@link TOKENS_PER_MESSAGE} per message and
 * {@link PRIMING_TOKENS}, and images and files at their documented per-target rates (media-tokens.ts).
 *
 * Bound vs estimate: the estimate is our tokenizer's count (o200k_base, estimate.ts) — or, before it is
 * loaded, UTF-8 bytes / 4; the bound is that count × {@link PROMPT_MARGIN_PERCENT}% for other providers'
 * tokenizers, never above the UTF-8 byte length (a strict bound for any byte-level tokenizer).
 */
import type { CatalogueTarget } from '../catalogue/catalogue';
import type { ChatCompletionRequest } from '../openai/chat-request';
import { counterNow, loadedCounter, messageText, utf8TokenBound } from './estimate';
import { dataUrlBytes, imageSize, mediaTokenBound, pdfPageCount, type MediaParts } from './media-tokens';

/** Safety margin of the bound over our own count, percent. */
export const PROMPT_MARGIN_PERCENT = 135;
/** Framing tokens per message (role and separators; OpenAI documents 3, 4 leaves room). */
export const TOKENS_PER_MESSAGE = 4;
/** Framing tokens per request. */
export const PRIMING_TOKENS = 16;

/** A prompt's count (tokens): the upper bound a hold reserves, and the best estimate. */
export interface PromptCount {
  bound: number;
  estimate: number;
}

/** The countable parts of a request: its texts, message count and media (computed once per request). */
interface PromptParts {
  texts: string[];
  messages: number;
  media: MediaParts;
  bytes: number;
  /** Tokenizer count of the texts, once the tokenizer was available. */
  tokens?: number;
}

const partsOf = new WeakMap<object, PromptParts>();

/** Prompt count of plain texts (embeddings inputs; `messages` framings, none for embeddings). */
export function textsPromptTokens(texts: readonly string[], messages: number): PromptCount {
  return countParts({ texts: [...texts], messages, media: { images: [], files: [] }, bytes: byteLength(texts) }, []);
}

/**
 * A chat request's prompt count, media at the highest rate among `targets` (none: media not counted).
 * Synchronous: before the tokenizer is loaded the estimate is bytes / 4 and the bound the byte length.
 */
export function chatPromptTokens(body: ChatCompletionRequest, targets: readonly CatalogueTarget[]): PromptCount {
  return countParts(chatParts(body), targets);
}

/** The billed estimate of a chat prompt on the target that served it (tokens): the tokenizer is loaded first. */
export async function estimateChatPromptTokens(body: ChatCompletionRequest, target: CatalogueTarget): Promise<number> {
  await counterNow();
  return chatPromptTokens(body, [target]).estimate;
}

/** The rough prompt size for time limits (tokens): the estimate, media not counted. Never loads the tokenizer. */
export function roughChatPromptTokens(body: ChatCompletionRequest): number {
  return chatPromptTokens(body, []).estimate;
}

function countParts(p: PromptParts, targets: readonly CatalogueTarget[]): PromptCount {
  const framing = p.messages * TOKENS_PER_MESSAGE + PRIMING_TOKENS;
  let media = 0;
  for (const t of targets) media = Math.max(media, mediaTokenBound(t, p.media));
  const count = loadedCounter();
  if (p.tokens === undefined && count !== undefined) {
    let n = 0;
    for (const t of p.texts) if (t.length > 0) n += count(t);
    p.tokens = n;
  }
  if (p.tokens === undefined) return { bound: p.bytes + framing + media, estimate: Math.ceil(p.bytes / 4) + framing + media };
  return { bound: Math.min(p.bytes, Math.ceil((p.tokens * PROMPT_MARGIN_PERCENT) / 100)) + framing + media, estimate: p.tokens + framing + media };
}

function chatParts(body: ChatCompletionRequest): PromptParts {
  const cached = partsOf.get(body);
  if (cached !== undefined) return cached;
  const texts: string[] = [];
  const media: MediaParts = { images: [], files: [] };
  for (const m of body.messages) {
    texts.push(...messageTexts(m));
    if (m.role === 'user' && Array.isArray(m.content)) collectMedia(m.content, media);
  }
  for (const extra of [body.tools, body.functions, body.response_format, body.tool_choice]) if (extra !== undefined) texts.push(JSON.stringify(extra));
  const parts: PromptParts = { texts, messages: body.messages.length, media, bytes: byteLength(texts) };
  partsOf.set(body, parts);
  return parts;
}

function byteLength(texts: readonly string[]): number {
  let bytes = 0;
  for (const t of texts) bytes += utf8TokenBound(t);
  return bytes;
}

/**
 * Every text of a message an adapter may send upstream: its role and content, and on an assistant
 * message also its refusal (field or parts), tool and function calls, and `reasoning_content` — which
 * the OpenAI-compatible adapters replay (DeepSeek, MiniMax: providers/openai-compatible/history.ts), and
 * which a Responses request continued with `previous_response_id` or `item_reference` carries for every
 * earlier reasoning item (responses/input-items.ts). Counting one an adapter then drops only over-counts.
 */
function messageTexts(m: ChatCompletionRequest['messages'][number]): string[] {
  const texts = [m.role, messageText(m.content)];
  if ('name' in m && m.name) texts.push(m.name);
  if (m.role === 'tool') texts.push(m.tool_call_id);
  if (m.role !== 'assistant') return texts;
  if (Array.isArray(m.content)) for (const p of m.content) if (p.type === 'refusal') texts.push(p.refusal);
  for (const extra of [m.refusal, m.reasoning_content]) if (extra) texts.push(extra);
  if (m.tool_calls) texts.push(JSON.stringify(m.tool_calls));
  if (m.function_call) texts.push(JSON.stringify(m.function_call));
  return texts;
}

type Part = Extract<ChatCompletionRequest['messages'][number], { role: 'user' }>['content'];

function collectMedia(parts: Exclude<Part, string>, media: MediaParts): void {
  for (const p of parts) {
    if (p.type === 'image_url') {
      const head = dataUrlBytes(p.image_url.url, 64 * 1024);
      const size = head === undefined ? undefined : imageSize(head);
      media.images.push({ detail: p.image_url.detail ?? 'auto', ...(size ?? {}) });
    } else if (p.type === 'file') {
      const data = p.file.file_data;
      const bytes = data === undefined ? undefined : (dataUrlBytes(data) ?? Buffer.from(data, 'base64'));
      const pages = bytes === undefined ? undefined : pdfPageCount(bytes);
      media.files.push({ bytes: bytes?.length ?? 200_000, ...(pages !== undefined ? { pages } : {}) });
    }
  }
}

/**
 * The most a request can cost (DATA-MODEL §1 "hold"): prompt tokens — our tokenizer's count with a
 * safety margin for other providers' tokenizers, or before the tokenizer is loaded a strict byte
 * bound, plus images and files at their documented rates (usage/media-tokens.ts) — and n × the output
 * limit sent upstream, all at the highest price among the attempts the plan may make (BYOK: the fee alone).
 *
 * Margin: ×{@link PROMPT_MARGIN_PERCENT}% + 16 tokens. Other providers' tokenizers (Claude's, Gemini's
 * SentencePiece, Llama's) count the same text differently from o200k; an upstream that still counts
 * more than we held is billed the hold at most (billing/settle.ts): the rest is the platform's loss, recorded.
 */
import type { CatalogueEntry } from '../catalogue/catalogue';
import { attemptPrices } from './attempt-price';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { Attempt } from '../routing/attempt-plan';
import { loadedCounter, messageText, utf8TokenBound } from '../usage/estimate';
import { dataUrlBytes, imageSize, mediaTokenBound, pdfPageCount, type MediaParts } from '../usage/media-tokens';
import type { HoldDemand } from './hold-plan';

/** Safety margin over our own prompt count, percent. */
export const PROMPT_MARGIN_PERCENT = 135;
/** Framing tokens per message (role and separators; OpenAI documents 3, 4 leaves room). */
const TOKENS_PER_MESSAGE = 4;
const PRIMING_TOKENS = 16;

/** A demand plus what the ledger records for an orphan, and the output limit to send upstream. */
export interface Demand {
  demand: HoldDemand;
  /** Best prompt estimate (tokens). */
  promptTokensEstimate: number;
  /** Output tokens per choice to send upstream when the client set none. */
  outputLimit: number;
}

/** Prompt bound and estimate of some texts (tokens). */
function promptTokens(texts: readonly string[], messages: number): { held: number; estimate: number } {
  const framing = messages * TOKENS_PER_MESSAGE + PRIMING_TOKENS;
  let bytes = 0;
  for (const t of texts) bytes += utf8TokenBound(t);
  const count = loadedCounter();
  if (count === undefined) return { held: bytes + framing, estimate: Math.ceil(bytes / 4) + framing };
  let n = 0;
  for (const t of texts) if (t.length > 0) n += count(t);
  return { held: Math.min(bytes, Math.ceil((n * PROMPT_MARGIN_PERCENT) / 100)) + framing, estimate: n + framing };
}

/**
 * Highest prices among the plan's attempts (µUSD per 1M tokens), at this prompt size: each at its own
 * price (attempt-price.ts) — a BYOK attempt at the platform fee alone, the platform's own key (a
 * fallback the user allows) at the full displayed price.
 */
function highestPrices(plan: readonly Attempt[], prompt: number): { input: number; output: number } {
  let input = 0;
  let output = 0;
  for (const a of plan) {
    const p = attemptPrices(a, prompt);
    input = Math.max(input, p.input);
    output = Math.max(output, p.output);
  }
  return { input, output };
}

/** The demand of a chat request over its attempt plan. */
export function chatDemand(body: ChatCompletionRequest, entry: CatalogueEntry, plan: readonly Attempt[]): Demand {
  const texts: string[] = [];
  const media: MediaParts = { images: [], files: [] };
  for (const m of body.messages) {
    texts.push(...messageTexts(m));
    if (m.role === 'user' && Array.isArray(m.content)) collectMedia(m.content, media);
  }
  for (const extra of [body.tools, body.functions, body.response_format, body.tool_choice]) if (extra !== undefined) texts.push(JSON.stringify(extra));
  const prompt = promptTokens(texts, body.messages.length);
  const targets = plan.map((a) => a.target);
  const mediaTokens = Math.max(0, ...targets.map((t) => mediaTokenBound(t, media)));
  const held = prompt.held + mediaTokens;
  // OpenAI bills rejected predicted-output tokens as completion tokens.
  const prediction = body.prediction === undefined ? 0 : utf8TokenBound(JSON.stringify(body.prediction));
  const asked = body.max_completion_tokens ?? body.max_tokens ?? entry.targets[0]?.maxOutputTokens ?? 4_096;
  const perChoice = Math.max(...targets.map((t) => Math.min(asked, t.maxOutputTokens)));
  const choices = body.n ?? 1;
  const prices = highestPrices(plan, held);
  return {
    demand: { promptTokens: held, outputTokens: choices * perChoice + prediction, outputLimitPerChoice: perChoice, choices, inputPrice: prices.input, outputPrice: prices.output },
    promptTokensEstimate: prompt.estimate + mediaTokens,
    outputLimit: asked,
  };
}

/** The demand of an embeddings request: its inputs, at the model's input price. */
export function embeddingsDemand(inputs: readonly string[], plan: readonly Attempt[]): Demand {
  const prompt = promptTokens(inputs, 0);
  const prices = highestPrices(plan, prompt.held);
  return {
    demand: { promptTokens: prompt.held, outputTokens: 0, outputLimitPerChoice: 0, choices: 1, inputPrice: prices.input, outputPrice: prices.output },
    promptTokensEstimate: prompt.estimate,
    outputLimit: 0,
  };
}

/**
 * Every text of a message an adapter may send upstream: its role and content, and on an assistant
 * message also its refusal (field or parts), tool and function calls, and `reasoning_content` — which
 * the OpenAI-compatible adapters replay (DeepSeek, MiniMax: providers/openai-compatible/history.ts), and
 * which a Responses request continued with `previous_response_id` or `item_reference` carries for every
 * earlier reasoning item (responses/input-items.ts). Counting one an adapter then drops only over-holds.
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

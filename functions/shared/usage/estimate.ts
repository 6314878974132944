/**
 * Token estimates for the rare request whose upstream reported no usage (a stream cut before its
 * usage chunk, a client that left, an embeddings provider that returns no counts). Counted with a
 * real BPE tokenizer — OpenAI's o200k_base via `gpt-tokenizer` — rather than a characters/4 guess,
 * which is known to under-count badly (LiteLLM PR #37185, peers.md B10). For non-OpenAI models it
 * is an approximation, and the ledger marks every estimated entry (`usageEstimated`).
 *
 * The tokenizer's rank table is ~2.4 MB, so it is loaded on first use only, never at cold start.
 */

type CountTokens = (text: string) => number;
let counter: Promise<CountTokens> | undefined;

/**
 * Where the counter lives: the package when run from source; in a Lambda bundle, a separate file
 * beside the handler (the build `define`s this; lib/constructs/gateway-function.ts).
 */
const TOKENIZER_MODULE = process.env.MODELMUX_TOKENIZER_MODULE ?? 'gpt-tokenizer/encoding/o200k_base';

function loadCounter(): Promise<CountTokens> {
  counter ??= (import(TOKENIZER_MODULE) as Promise<{ countTokens: CountTokens }>).then((m) => (text: string) => m.countTokens(text));
  return counter;
}

/** Per-message framing overhead OpenAI documents for chat prompts (tokens). */
const TOKENS_PER_MESSAGE = 3;

/** Estimated tokens of a text (tokens). */
export async function estimateTextTokens(text: string): Promise<number> {
  if (text.length === 0) return 0;
  return (await loadCounter())(text);
}

/** Estimated prompt tokens of chat messages: each text part plus the per-message framing (tokens). */
export async function estimatePromptTokens(messages: ReadonlyArray<{ content?: unknown }>): Promise<number> {
  const count = await loadCounter();
  let total = TOKENS_PER_MESSAGE;
  for (const m of messages) total += TOKENS_PER_MESSAGE + count(messageText(m.content));
  return total;
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string') text += part.text;
  }
  return text;
}

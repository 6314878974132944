/**
 * The tokenizer behind our own token counts: the prompt count of usage/prompt-tokens.ts (the one rule
 * for the hold's bound, the estimate billed for the rare request whose upstream reported no usage — a
 * stream cut before its usage chunk, a client that left, an embeddings provider that returns no counts —
 * and the time limits), and the completion estimate. Counted with a
 * real BPE tokenizer — OpenAI's o200k_base via `gpt-tokenizer` — rather than a characters/4 guess,
 * which is known to under-count badly (LiteLLM PR #37185, peers.md B10). For non-OpenAI models it is
 * an approximation, and the ledger marks every estimated entry (`usageEstimated`).
 *
 * The tokenizer's rank table is ~2.4 MB and takes ~0.5 s to load, so it is loaded on first use only,
 * never at cold start; until it is loaded a hold uses {@link utf8TokenBound}, a strict upper bound.
 *
 * Long runs: BPE merges inside one pre-token are quadratic in its length (100,000 `a` take ~15 s in
 * gpt-tokenizer), a CPU attack any client could send. Runs of more than {@link MAX_RUN} characters
 * without a break are cut every {@link MAX_RUN} characters before counting, which can only add a
 * token per cut (the estimate stays an over-count) and keeps the cost linear.
 */

type CountTokens = (text: string) => number;
let counter: Promise<CountTokens> | undefined;
let loaded: CountTokens | undefined;

/**
 * Where the counter lives: the package when run from source; in a Lambda bundle, a separate file
 * beside the handler (the build `define`s this; lib/constructs/gateway-function.ts).
 */
const TOKENIZER_MODULE = process.env.MODELMUX_TOKENIZER_MODULE ?? 'gpt-tokenizer/encoding/o200k_base';

/** Longest run of non-space (or space) characters counted in one piece. */
export const MAX_RUN = 200;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN}}|\\s{${MAX_RUN}}`, 'g');

function loadCounter(): Promise<CountTokens> {
  counter ??= (import(TOKENIZER_MODULE) as Promise<{ countTokens: CountTokens }>).then((m) => {
    // A space ends a run of letters or punctuation; a letter ends a run of whitespace.
    const count: CountTokens = (text) => m.countTokens(text.replace(LONG_RUN, (run) => (/\s/.test(run[0] ?? '') ? `${run}x` : `${run} `)));
    loaded = count;
    return count;
  });
  return counter;
}

/** The tokenizer if it is already loaded (no waiting), else undefined. */
export function loadedCounter(): CountTokens | undefined {
  return loaded;
}

/** Loads the tokenizer in the background (after an answer is out), so later holds count exactly. */
export function warmTokenizer(): Promise<void> {
  return loadCounter().then(
    () => undefined,
    () => undefined,
  );
}

/** The tokenizer, loading it if needed (the refusal path of a hold, estimates for billing). */
export function counterNow(): Promise<CountTokens> {
  return loadCounter();
}

/**
 * A strict upper bound on the tokens of `text` for any byte-level tokenizer (every token covers at
 * least one UTF-8 byte): its UTF-8 length.
 */
export function utf8TokenBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Estimated tokens of a text (tokens). */
export async function estimateTextTokens(text: string): Promise<number> {
  if (text.length === 0) return 0;
  return (await loadCounter())(text);
}

/** The text parts of a message's content, joined. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string') text += part.text;
  }
  return text;
}

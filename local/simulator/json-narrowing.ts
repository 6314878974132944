/**
 * Tolerant readers of request JSON (a wrong type reads as absent; the caller decides whether that is a
 * 400), and the simulator's token-counting rule, simple so tests can compute it by hand: a word is a
 * run of non-whitespace; prompt tokens = Σ over messages (system prompt = one) of 4 + words (text,
 * tool-call name + arguments, tool results; images add nothing); completion tokens = reply + reasoning
 * words (a tool call: the words of `name argumentsJson`); embeddings: Σ words of the inputs.
 */
export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The strings of an array (anything else reads as none). */
export function asStrings(value: unknown): string[] {
  return asArray(value).filter((s): s is string => typeof s === 'string');
}

/** `obj[name]`, or its snake_case spelling: Gemini accepts both on input. */
export function field(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  return obj[name] !== undefined ? obj[name] : obj[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

/** Number of whitespace-separated words in `text`. */
export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/** Prompt tokens for a conversation given one text per message. */
export function promptTokens(messageTexts: readonly string[]): number {
  return messageTexts.reduce((sum, text) => sum + 4 + countWords(text), 0);
}

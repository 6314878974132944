/** Reading request JSON, and the simulator's token-counting rule. */

// Narrowing helpers for request bodies the simulator receives as `unknown` JSON. Tolerant on
// purpose: a wrong type reads as absent, and the caller decides whether that is a 400.
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

/** `obj[name]`, or its snake_case spelling: Gemini accepts both on input (providers.md §3.1). */
export function field(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  if (obj[name] !== undefined) return obj[name];
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return obj[snake];
}

// The simulator's token-counting rule. Deterministic and simple so tests can compute the numbers
// by hand:
// - a "word" is a maximal run of non-whitespace characters;
// - prompt tokens = Σ over input messages (system prompt counted as one message) of
//   (4 + words in the message's text, tool-call arguments and tool results); images add nothing;
// - completion tokens = words of the visible reply + words of the reasoning text; a tool call counts
//   the words of `<name> <compact arguments JSON>`;
// - embeddings: prompt tokens = Σ words of the inputs (a token-id array counts its length).
/** Number of whitespace-separated words in `text`. */
export function countWords(text: string): number {
  const matches = text.match(/\S+/g);
  return matches ? matches.length : 0;
}

/** Prompt tokens for a conversation given one text per message (see the module rule). */
export function promptTokens(messageTexts: readonly string[]): number {
  return messageTexts.reduce((sum, text) => sum + 4 + countWords(text), 0);
}

/**
 * The simulator's token-counting rule. Deterministic and simple so tests can compute the numbers
 * by hand:
 * - a "word" is a maximal run of non-whitespace characters;
 * - prompt tokens = Σ over input messages (system prompt counted as one message) of
 *   (4 + words in the message's text, tool-call arguments and tool results); images add nothing;
 * - completion tokens = words of the visible reply + words of the reasoning text; a tool call counts
 *   the words of `<name> <compact arguments JSON>`;
 * - embeddings: prompt tokens = Σ words of the inputs (a token-id array counts its length).
 */

/** Number of whitespace-separated words in `text`. */
export function countWords(text: string): number {
  const matches = text.match(/\S+/g);
  return matches ? matches.length : 0;
}

/** Prompt tokens for a conversation given one text per message (see the module rule). */
export function promptTokens(messageTexts: readonly string[]): number {
  return messageTexts.reduce((sum, text) => sum + 4 + countWords(text), 0);
}

/**
 * Gemini thought signatures on function calls (providers.md §3.2: `thoughtSignature` is opaque and
 * must be returned, on the same part, in later turns of a Gemini 2.5/3 tool loop).
 *
 * The simulator signs the first `functionCall` part of every 2.5/3 answer (as Gemini does for parallel
 * calls) and, for Gemini 3, refuses a request whose current turn replays a model call without its
 * signature, with the 400 Gemini 3 answers [MEM: Gemini API thought-signatures docs; 2.5 models only
 * lose quality, so the simulator accepts them there and tests check the replay instead].
 */
import { asArray, asString, field, isObject, type JsonObject } from './json-narrowing.js';
import type { Problem } from './types.js';

/** Models whose answers carry signatures on function calls. */
export function signsFunctionCalls(model: string): boolean {
  return /^gemini-(?:2\.5|3)/.test(model);
}

/** Models that refuse an unsigned function call replayed in the current turn. */
function requiresSignatures(model: string): boolean {
  return /^gemini-3/.test(model);
}

/** A deterministic opaque signature for the `n`-th call the simulator answered (base64, like Gemini's). */
export function simulatedSignature(seq: number): string {
  return Buffer.from(`sim-thought-signature-${seq}`).toString('base64');
}

/** Adds `thoughtSignature` to the first functionCall part when `model` signs; parts are changed in place. */
export function signFirstCall(parts: JsonObject[], model: string, seq: number): JsonObject[] {
  const first = parts.find((p) => isObject(p['functionCall']));
  if (first !== undefined && signsFunctionCalls(model)) first['thoughtSignature'] = simulatedSignature(seq);
  return parts;
}

/**
 * The current turn is everything after the last user content with text: the model's calls and the
 * function responses of the tool loop in progress.
 * @returns the 400 Gemini 3 answers for an unsigned call there, or undefined.
 */
export function checkSignatures(contents: readonly JsonObject[], model: string): Problem | undefined {
  if (!requiresSignatures(model)) return undefined;
  let start = 0;
  contents.forEach((c, i) => {
    const isUser = c['role'] === undefined || c['role'] === 'user';
    if (isUser && asArray(field(c, 'parts')).some((p) => isObject(p) && typeof p['text'] === 'string')) start = i + 1;
  });
  for (let i = start; i < contents.length; i++) {
    const calls = asArray(field(contents[i], 'parts')).filter((p): p is JsonObject => isObject(p) && isObject(field(p, 'functionCall')));
    const first = calls[0];
    if (first === undefined || asString(field(first, 'thoughtSignature')) !== undefined) continue;
    const name = asString(field(field(first, 'functionCall'), 'name')) ?? '';
    return {
      kind: 'bad-request',
      message: `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
    };
  }
  return undefined;
}

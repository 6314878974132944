/** Reading a Gemini generateContent request, with its thought signatures. */
import { asArray, asNumber, asString, field, isObject, type JsonObject } from './json-narrowing.js';
import { compactResult, type Conversation, type LastTurn, type ToolDecl } from './reply.js';
import { geminiStructured, optionalJson } from './structured-output.js';
import type { Problem } from './types.js';

// Reads a Gemini `GenerateContentRequest` (providers.md §3.2) into the neutral {@link Conversation}.
// camelCase and snake_case field names are both accepted, as the real API does (§3.1).
export interface GeminiRequest {
  /** A prompt containing `BLOCKME` is refused with `promptFeedback.blockReason: "SAFETY"`. */
  blocked: boolean;
  /** `generationConfig.candidateCount` (default 1). */
  candidateCount: number;
  conversation: Conversation;
}

/** Most candidates a Gemini 2.5 model returns per request [3P: router-for-me/CLIProxyAPI#879]. */
export const MAX_CANDIDATES = 8;

/** The word that makes the simulated safety filter block a prompt. */
export const BLOCK_WORD = 'BLOCKME';

function partsOf(content: unknown): JsonObject[] {
  return asArray(field(content, 'parts')).filter(isObject);
}

function textOf(parts: readonly JsonObject[]): string {
  return parts
    .map((p) => asString(p['text']))
    .filter((t): t is string => t !== undefined)
    .join('\n');
}

function responseText(part: JsonObject): string | undefined {
  const fr = field(part, 'functionResponse');
  return isObject(fr) ? compactResult(JSON.stringify(fr['response'] ?? {})) : undefined;
}

function messageText(parts: readonly JsonObject[]): string {
  const out: string[] = [];
  for (const p of parts) {
    const text = asString(p['text']);
    if (text !== undefined) out.push(text);
    const fc = field(p, 'functionCall');
    if (isObject(fc)) out.push(`${asString(fc['name']) ?? ''} ${JSON.stringify(fc['args'] ?? {})}`);
    const fr = responseText(p);
    if (fr !== undefined) out.push(fr);
  }
  return out.filter((t) => t !== '').join(' ');
}

function isUser(content: JsonObject): boolean {
  return content['role'] === undefined || content['role'] === 'user';
}

function lastTurnOf(contents: readonly JsonObject[]): LastTurn {
  const last = contents[contents.length - 1];
  if (!last || !isUser(last)) return { kind: 'other' };
  const parts = partsOf(last);
  const results = parts.map(responseText).filter((r): r is string => r !== undefined);
  if (results.length > 0) return { kind: 'tool-result', results };
  const images = parts.filter((p) => isObject(field(p, 'inlineData')) || isObject(field(p, 'fileData'))).length;
  return { kind: 'user', text: textOf(parts), images };
}

function toolsOf(body: JsonObject): ToolDecl[] {
  const tools: ToolDecl[] = [];
  for (const tool of asArray(body['tools'])) {
    for (const decl of asArray(field(tool, 'functionDeclarations'))) {
      if (isObject(decl) && typeof decl['name'] === 'string') {
        tools.push({ name: decl['name'], parameters: decl['parameters'] ?? field(decl, 'parametersJsonSchema') });
      }
    }
  }
  const config = field(field(body, 'toolConfig'), 'functionCallingConfig');
  if (field(config, 'mode') === 'NONE') return [];
  const allowed = asArray(field(config, 'allowedFunctionNames'));
  return allowed.length > 0 ? tools.filter((t) => allowed.includes(t.name)) : tools;
}

/**
 * Validate and read the request for `model` (from the URL); a {@link Problem} means answer 400
 * INVALID_ARGUMENT. Gemini 3 also refuses unsigned function calls in the current turn
 * (its thought signatures below).
 */
export function readGeminiGenerate(body: unknown, model: string): GeminiRequest | Problem {
  if (!isObject(body)) return { kind: 'bad-request', message: 'Invalid JSON payload received.' };
  const contents = asArray(body['contents']).filter(isObject);
  if (contents.length === 0) return { kind: 'bad-request', message: '* GenerateContentRequest.contents: contents is not specified' };
  const unsigned = checkSignatures(contents, model);
  if (unsigned !== undefined) return unsigned;
  const gen = field(body, 'generationConfig');
  const temperature = asNumber(field(gen, 'temperature'));
  if (temperature !== undefined && (temperature < 0 || temperature > 2)) {
    return { kind: 'bad-request', message: '* GenerateContentRequest.generation_config.temperature: must be in [0.0, 2.0]' };
  }
  const candidateCount = field(gen, 'candidateCount') ?? 1;
  if (typeof candidateCount !== 'number' || !Number.isInteger(candidateCount) || candidateCount < 1 || candidateCount > MAX_CANDIDATES) {
    return { kind: 'bad-request', message: `* GenerateContentRequest.generation_config.candidate_count: must be in [1, ${MAX_CANDIDATES}]` };
  }
  // The Gemini API refuses logprobs on every 2.5 model (issue threads cited in providers/unsupported-parameters.ts).
  if (field(gen, 'responseLogprobs') === true) return { kind: 'bad-request', message: `Logprobs is not enabled for models/${model}` };
  const system = field(body, 'systemInstruction');
  const systemText = system === undefined ? undefined : typeof system === 'string' ? system : textOf(partsOf(system));
  const allParts = contents.flatMap(partsOf);
  const blocked = [systemText ?? '', textOf(allParts)].some((t) => t.includes(BLOCK_WORD));
  const lastUser = [...contents].reverse().find((c) => isUser(c) && partsOf(c).some((p) => typeof p['text'] === 'string'));
  const maxTokens = asNumber(field(gen, 'maxOutputTokens'));
  return {
    blocked,
    candidateCount,
    conversation: {
      messageTexts: [...(systemText !== undefined ? [systemText] : []), ...contents.map((c) => messageText(partsOf(c)))],
      lastTurn: lastTurnOf(contents),
      lastUserText: lastUser ? textOf(partsOf(lastUser)) : '',
      tools: toolsOf(body),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      stop: asArray(field(gen, 'stopSequences')).filter((s): s is string => typeof s === 'string'),
      reasoning: field(field(gen, 'thinkingConfig'), 'includeThoughts') === true,
      ...optionalJson(geminiStructured(gen)),
    },
  };
}

// Gemini thought signatures on function calls (providers.md §3.2: `thoughtSignature` is opaque and
// must be returned, on the same part, in later turns of a Gemini 2.5/3 tool loop).
//
// The simulator signs the first `functionCall` part of every 2.5/3 answer (as Gemini does for parallel
// calls) and, for Gemini 3, refuses a request whose current turn replays a model call without its
// signature, with the 400 Gemini 3 answers [MEM: Gemini API thought-signatures docs; 2.5 models only
// lose quality, so the simulator accepts them there and tests check the replay instead].
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

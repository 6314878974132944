/**
 * Reads a Gemini `GenerateContentRequest` (providers.md §3.2) into the neutral {@link Conversation}.
 * camelCase and snake_case field names are both accepted, as the real API does (§3.1).
 */
import { checkSignatures } from './gemini-signatures.js';
import { asArray, asNumber, asString, field, isObject, type JsonObject } from './json-narrowing.js';
import { compactResult, type Conversation, type LastTurn, type ToolDecl } from './reply.js';
import { geminiStructured, optionalJson } from './structured-output.js';
import type { Problem } from './types.js';

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
 * (gemini-signatures.ts).
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

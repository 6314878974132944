/**
 * The native Gemini endpoints: `generateContent`, `streamGenerateContent` (SSE only, with `alt=sse`;
 * image output: images.ts) and `batchEmbedContents` (embeddings.ts); the model comes from the URL.
 * Requests accept camelCase and snake_case names, as the API does. Answers are camelCase with
 * `usageMetadata` (running totals on every chunk); thought parts carry `thought: true` and count in
 * `thoughtsTokenCount`; a function call arrives whole in one chunk; stream events are separated by
 * `\r\n\r\n`, no `[DONE]`. Several candidates (`candidateCount`) carry `index` 0..n-1 and add up in
 * the usage (the prompt once); streamed, each event holds the next piece of every candidate left.
 * Sources: providers.md §3.1 to §3.4.
 */
import { byStep, jsonEvent, type Reply, splitText, type SseEvent } from './deliver.js';
import { geminiBatchEmbed } from './embeddings.js';
import { streamErrorEvent } from './errors.js';
import { geminiImage, wantsGeminiImage } from './images.js';
import { asArray, asNumber, asString, asStrings, countWords, field, isObject, type JsonObject, promptTokens } from './json-narrowing.js';
import { chooseTools, type Conversation, conversationOf, type Message, planChoices, type ReplyPlan } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';

/** Most candidates a Gemini 2.5 model returns per request [3P: router-for-me/CLIProxyAPI#879]. */
const MAX_CANDIDATES = 8;
/** The word that makes the simulated safety filter block a prompt (`promptFeedback.blockReason: "SAFETY"`). */
const BLOCK_WORD = 'BLOCKME';

/** Answer a native Gemini call; a {@link Problem} is rendered by the caller. */
export function handleGemini(call: SimCall): Reply | Problem {
  const { op, pathModel: model } = call.route;
  if (op === 'no-route' || model === undefined) return { kind: 'no-route', method: call.method, path: call.url.pathname };
  if (isRetiredModel(model)) return { kind: 'model-not-found', model };
  if (call.body !== undefined && !isObject(call.body)) return { kind: 'bad-request', message: 'Invalid JSON payload received.' };
  if (op === 'gemini-batch-embed') return geminiBatchEmbed(call);
  const stream = op === 'gemini-stream';
  // Without alt=sse Gemini streams one growing JSON array; the simulator only speaks SSE.
  if (stream && call.url.searchParams.get('alt') !== 'sse')
    return { kind: 'bad-request', message: 'The simulator only supports streamGenerateContent with alt=sse.' };
  if (!stream && wantsGeminiImage(call.body)) return geminiImage(call, model);
  const req = readGeminiGenerate(call.body, model);
  if ('kind' in req) return req;
  const sse = (events: SseEvent[]): Reply => ({ kind: 'sse', eol: '\r\n', events, errorEvent: streamErrorEvent('gemini', call.requestId) });
  if (req.blocked) {
    // The whole prompt refused by the safety filter: 200, no candidates.
    const tokens = promptTokens(req.conversation.messageTexts);
    const body = {
      promptFeedback: { blockReason: 'SAFETY', safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }] },
      usageMetadata: { promptTokenCount: tokens, totalTokenCount: tokens },
      ...envelope(call, model),
    };
    return stream ? sse([jsonEvent(body)]) : { kind: 'json', status: 200, body };
  }
  const plans = planChoices(req.conversation, { replyWords: call.replyWords }, req.candidateCount);
  if (stream) return sse(streamEvents(call, model, plans));
  const candidates = plans.map((plan, index) => {
    const parts: JsonObject[] = [];
    if (plan.reasoning) parts.push({ text: plan.reasoning, thought: true });
    if (plan.text !== '' || plan.toolCalls.length === 0) parts.push({ text: plan.text });
    return candidate([...parts, ...callParts(plan, model, call.seq)], FINISH[plan.finish], index);
  });
  const usage = usageMetadata(
    plans,
    sum(plans, answerTokens),
    sum(plans, (p) => p.reasoningTokens),
  );
  return { kind: 'json', status: 200, body: { candidates, usageMetadata: usage, ...envelope(call, model) } };
}

const isUser = (content: JsonObject): boolean => content['role'] === undefined || content['role'] === 'user';
const partsOf = (content: unknown): JsonObject[] => asArray(field(content, 'parts')).filter(isObject);
const textsOf = (parts: readonly JsonObject[]): string[] => parts.map((p) => asString(p['text'])).filter((t) => t !== undefined);

/** A content in the shared shape: texts, images, function responses; function calls counted. */
function messageOf(content: JsonObject): Message {
  const parts = partsOf(content);
  const calls = parts.map((p) => field(p, 'functionCall')).filter(isObject);
  return {
    role: isUser(content) ? 'user' : 'assistant',
    texts: textsOf(parts),
    images: parts.filter((p) => isObject(field(p, 'inlineData')) || isObject(field(p, 'fileData'))).length,
    results: parts
      .map((p) => field(p, 'functionResponse'))
      .filter(isObject)
      .map((fr) => JSON.stringify(fr['response'] ?? {})),
    extra: calls.map((fc) => `${asString(fc['name']) ?? ''} ${JSON.stringify(fc['args'] ?? {})}`),
  };
}

function toolsOf(body: JsonObject): Conversation['tools'] {
  const decls = asArray(body['tools'])
    .flatMap((tool) => asArray(field(tool, 'functionDeclarations')))
    .filter((d) => isObject(d) && typeof d['name'] === 'string') as JsonObject[];
  const tools = decls.map((d) => ({ name: d['name'] as string, parameters: d['parameters'] ?? field(d, 'parametersJsonSchema') }));
  const config = field(field(body, 'toolConfig'), 'functionCallingConfig');
  const allowed = asArray(field(config, 'allowedFunctionNames'));
  return chooseTools(tools, field(config, 'mode') === 'NONE', allowed.length > 0 ? allowed : undefined);
}

/** Validate and read the request for `model`; a {@link Problem} means answer 400 INVALID_ARGUMENT. */
function readGeminiGenerate(body: unknown, model: string): { blocked: boolean; candidateCount: number; conversation: Conversation } | Problem {
  const bad = (message: string): Problem => ({ kind: 'bad-request', message });
  if (!isObject(body)) return bad('Invalid JSON payload received.');
  const contents = asArray(body['contents']).filter(isObject);
  if (contents.length === 0) return bad('* GenerateContentRequest.contents: contents is not specified');
  const unsigned = checkSignatures(contents, model);
  if (unsigned !== undefined) return unsigned;
  const gen = field(body, 'generationConfig');
  const temperature = asNumber(field(gen, 'temperature'));
  if (temperature !== undefined && (temperature < 0 || temperature > 2))
    return bad('* GenerateContentRequest.generation_config.temperature: must be in [0.0, 2.0]');
  const candidateCount = field(gen, 'candidateCount') ?? 1;
  if (typeof candidateCount !== 'number' || !Number.isInteger(candidateCount) || candidateCount < 1 || candidateCount > MAX_CANDIDATES) {
    return bad(`* GenerateContentRequest.generation_config.candidate_count: must be in [1, ${MAX_CANDIDATES}]`);
  }
  // The Gemini API refuses logprobs on every 2.5 model (issue threads cited in providers/unsupported-parameters.ts).
  if (field(gen, 'responseLogprobs') === true) return bad(`Logprobs is not enabled for models/${model}`);
  const system = field(body, 'systemInstruction');
  const systemText = system === undefined ? undefined : typeof system === 'string' ? system : textsOf(partsOf(system)).join('\n');
  const schema = field(gen, 'responseJsonSchema') ?? field(gen, 'responseSchema');
  return {
    blocked: [systemText ?? '', textsOf(contents.flatMap(partsOf)).join('\n')].some((t) => t.includes(BLOCK_WORD)),
    candidateCount,
    conversation: conversationOf(
      contents.map(messageOf),
      systemText,
      {
        tools: toolsOf(body),
        toolForced: field(field(field(body, 'toolConfig'), 'functionCallingConfig'), 'mode') === 'ANY',
        maxTokens: asNumber(field(gen, 'maxOutputTokens')),
        stop: asStrings(field(gen, 'stopSequences')),
        reasoning: field(field(gen, 'thinkingConfig'), 'includeThoughts') === true,
        // JSON mime type, with `responseJsonSchema` (JSON Schema) or `responseSchema` (OpenAPI subset).
        json: asString(field(gen, 'responseMimeType')) === 'application/json' ? { schema: isObject(schema) ? schema : undefined } : undefined,
      },
      true,
    ),
  };
}

/**
 * Thought signatures: the simulator signs the first `functionCall` part of every Gemini 2.5/3 answer,
 * and Gemini 3 refuses an unsigned call replayed in the current turn (everything after the last user
 * content with text) with its 400 [Gemini API thought-signatures docs; 2.5 models accept it].
 */
function checkSignatures(contents: readonly JsonObject[], model: string): Problem | undefined {
  if (!/^gemini-3/.test(model)) return undefined;
  const start = contents.findLastIndex((c) => isUser(c) && partsOf(c).some((p) => typeof p['text'] === 'string')) + 1;
  for (let i = start; i < contents.length; i++) {
    const first = partsOf(contents[i]).find((p) => isObject(field(p, 'functionCall')));
    if (first === undefined || asString(field(first, 'thoughtSignature')) !== undefined) continue;
    const name = asString(field(field(first, 'functionCall'), 'name')) ?? '';
    return {
      kind: 'bad-request',
      message: `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
    };
  }
  return undefined;
}

/** The plan's function calls as parts, the first signed on 2.5/3 models. */
function callParts(plan: ReplyPlan, model: string, seq: number): JsonObject[] {
  return plan.toolCalls.map((c, i) => ({
    functionCall: { name: c.name, args: c.args },
    ...(i === 0 && /^gemini-(?:2\.5|3)/.test(model) ? { thoughtSignature: Buffer.from(`sim-thought-signature-${seq}`).toString('base64') } : {}),
  }));
}

/** Stop sequences and tool calls are both STOP. */
const FINISH = { length: 'MAX_TOKENS', stop: 'STOP', stop_sequence: 'STOP', tool_calls: 'STOP' } as const;

function usageMetadata(plans: readonly ReplyPlan[], candidates: number, thoughts: number): JsonObject {
  const prompt = plans[0]?.promptTokens ?? 0;
  const cached = plans[0]?.cachedTokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates + thoughts,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    ...(plans.some((p) => p.reasoning) ? { thoughtsTokenCount: thoughts } : {}),
    // A `[cached]` request's cache read, a subset of the prompt as Gemini reports it.
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
  };
}

const sum = (plans: readonly ReplyPlan[], f: (p: ReplyPlan) => number): number => plans.reduce((n, p) => n + f(p), 0);
const answerTokens = (plan: ReplyPlan): number => plan.completionTokens - plan.reasoningTokens;
const envelope = (call: SimCall, model: string): JsonObject => ({ modelVersion: model, responseId: `sim-${call.seq.toString(36)}` });

function candidate(parts: JsonObject[], finish: string | undefined, index: number): JsonObject {
  return { content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index };
}

/** The stream: thoughts, text, then whole function calls (or an empty text) per candidate, interleaved. */
function streamEvents(call: SimCall, model: string, plans: readonly ReplyPlan[]): SseEvent[] {
  const perCandidate = plans.map((plan) => {
    const pieces: Array<{ parts: JsonObject[]; thought: number; answer: number }> = [
      ...splitText(plan.reasoning ?? '').map((text) => ({ parts: [{ text, thought: true }], thought: countWords(text), answer: 0 })),
      ...splitText(plan.text).map((text) => ({ parts: [{ text }], thought: 0, answer: countWords(text) })),
    ];
    const calls = callParts(plan, model, call.seq);
    if (calls.length > 0) pieces.push({ parts: calls, thought: 0, answer: answerTokens(plan) - pieces.reduce((n, p) => n + p.answer, 0) });
    else if (pieces.length === 0) pieces.push({ parts: [{ text: '' }], thought: 0, answer: 0 });
    return pieces;
  });
  let thoughts = 0;
  let answer = 0;
  return byStep(perCandidate).map((step) => {
    for (const { item } of step) [thoughts, answer] = [thoughts + item.thought, answer + item.answer];
    const content = step.some(({ item }) => item.parts.some((p) => p['functionCall'] !== undefined || (typeof p['text'] === 'string' && p['text'] !== '')));
    const candidates = step.map(({ item, index, last }) => candidate(item.parts, last ? FINISH[plans[index]!.finish] : undefined, index));
    return jsonEvent({ candidates, usageMetadata: usageMetadata(plans, answer, thoughts), ...envelope(call, model) }, { content });
  });
}

/**
 * Handler of the native Gemini endpoints the gateway calls: generateContent, streamGenerateContent
 * (SSE only with `alt=sse`; with image output: images.ts) and batchEmbedContents (no usage). The model comes from the URL
 * (`models/{model}:method`).
 */
import type { Reply } from './deliver.js';
import { embed, nativeDimensions } from './embeddings.js';
import { geminiBlocked, geminiBlockedStream, geminiResponse, geminiStream } from './gemini-format.js';
import { readGeminiGenerate } from './gemini-input.js';
import { geminiImage, wantsGeminiImage } from './images.js';
import { asArray, asNumber, asString, field, isObject, promptTokens } from './json-narrowing.js';
import { planChoices } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';

function generate(call: SimCall, model: string, stream: boolean): Reply | Problem {
  if (stream && call.url.searchParams.get('alt') !== 'sse') {
    // Without alt=sse Gemini streams one growing JSON array; the simulator only speaks SSE (§3.1).
    return { kind: 'bad-request', message: 'The simulator only supports streamGenerateContent with alt=sse.' };
  }
  if (!stream && wantsGeminiImage(call.body)) return geminiImage(call, model);
  const req = readGeminiGenerate(call.body, model);
  if ('kind' in req) return req;
  if (req.blocked) {
    const tokens = promptTokens(req.conversation.messageTexts);
    return stream ? geminiBlockedStream(call, model, tokens) : { kind: 'json', status: 200, body: geminiBlocked(call, model, tokens) };
  }
  const plans = planChoices(req.conversation, { replyWords: call.replyWords }, req.candidateCount);
  return stream ? geminiStream(call, model, plans) : geminiResponse(call, model, plans);
}

/** Text of an embed request's `content.parts` and its requested length. */
function embedOne(request: unknown): { values: number[] } | undefined {
  const parts = asArray(field(field(request, 'content'), 'parts')).filter(isObject);
  const texts = parts.map((p) => asString(p['text'])).filter((t): t is string => t !== undefined);
  if (texts.length === 0) return undefined;
  const dims = asNumber(field(request, 'outputDimensionality')) ?? nativeDimensions(asString(field(request, 'model')));
  return { values: embed(texts.join('\n'), dims) };
}

function batchEmbed(call: SimCall): Reply | Problem {
  const requests = asArray(field(call.body, 'requests'));
  if (requests.length === 0) return { kind: 'bad-request', message: '* BatchEmbedContentsRequest.requests: requests is not specified' };
  const embeddings = [];
  for (const [i, r] of requests.entries()) {
    const e = embedOne(r);
    if (!e) return { kind: 'bad-request', message: `* BatchEmbedContentsRequest.requests[${i}].content: contents is not specified` };
    embeddings.push(e);
  }
  return { kind: 'json', status: 200, body: { embeddings } };
}

/** Answer a native Gemini call; a {@link Problem} is rendered by the caller. */
export function handleGemini(call: SimCall): Reply | Problem {
  const { op, pathModel } = call.route;
  if (op === 'no-route' || pathModel === undefined) return { kind: 'no-route', method: call.method, path: call.url.pathname };
  if (isRetiredModel(pathModel)) return { kind: 'model-not-found', model: pathModel };
  if (call.body !== undefined && !isObject(call.body)) return { kind: 'bad-request', message: 'Invalid JSON payload received.' };
  switch (op) {
    case 'gemini-generate':
      return generate(call, pathModel, false);
    case 'gemini-stream':
      return generate(call, pathModel, true);
    case 'gemini-batch-embed':
      return batchEmbed(call);
    default:
      return { kind: 'no-route', method: call.method, path: call.url.pathname };
  }
}

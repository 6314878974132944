/**
 * Handlers of the OpenAI-shaped endpoints for every host whose manifest `wire` is `openai`: chat
 * everywhere; embeddings and images where the provider's adapter calls them (registry.ts), so a host
 * without them (DeepSeek, §4.1; MiniMax's compatible API) answers its 404.
 */
import { providerSpec } from '../../functions/shared/providers/registry.js';
import type { Reply } from './deliver.js';
import { embed, nativeDimensions, toBase64 } from './embeddings.js';
import { openAIImages } from './images.js';
import { asArray, asNumber, asString, countWords, isObject } from './json-narrowing.js';
import { openAICompletion, openAIStream } from './openai-format.js';
import { readOpenAIChat } from './openai-input.js';
import { OVERREPORT_FACTOR, planChoices } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall, SimProvider } from './types.js';

/** The provider's adapter calls this operation (it has embeddings / image generation). */
function served(provider: SimProvider, op: 'embeddings' | 'images'): boolean {
  const adapter = providerSpec(provider).adapter;
  return (op === 'embeddings' ? adapter.buildEmbeddingsRequest : adapter.buildImagesRequest) !== undefined;
}

function chat(call: SimCall): Reply | Problem {
  const req = readOpenAIChat(call.provider, call.body);
  if ('kind' in req) return req;
  if (isRetiredModel(req.model)) return { kind: 'model-not-found', model: req.model };
  const plans = planChoices(req.conversation, { replyWords: call.replyWords }, req.n);
  return req.stream ? openAIStream(call, req, plans) : openAICompletion(call, req, plans);
}

/** Inputs as strings (hash seeds) with their token counts; token-id arrays count their length. */
function embeddingInputs(input: unknown): { text: string; tokens: number }[] | undefined {
  if (typeof input === 'string') return [{ text: input, tokens: countWords(input) }];
  const items = asArray(input);
  if (items.length === 0) return undefined;
  if (items.every((x) => typeof x === 'number')) return [{ text: items.join(','), tokens: items.length }];
  const out: { text: string; tokens: number }[] = [];
  for (const item of items) {
    if (typeof item === 'string') out.push({ text: item, tokens: countWords(item) });
    else if (Array.isArray(item) && item.every((x) => typeof x === 'number')) out.push({ text: item.join(','), tokens: item.length });
    else return undefined;
  }
  return out;
}

function embeddings(call: SimCall): Reply | Problem {
  const body = call.body;
  if (!isObject(body)) return { kind: 'bad-request', message: 'Request body must be a JSON object.' };
  const model = asString(body['model']);
  if (!model) return { kind: 'bad-request', message: 'you must provide a model parameter', param: 'model' };
  if (isRetiredModel(model)) return { kind: 'model-not-found', model };
  const inputs = embeddingInputs(body['input']);
  if (!inputs) return { kind: 'bad-request', message: "'input' must be a string, an array of strings, or token arrays", param: 'input' };
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    return { kind: 'bad-request', message: "'encoding_format' must be 'float' or 'base64'", param: 'encoding_format' };
  }
  const dimensions = asNumber(body['dimensions']) ?? nativeDimensions(model);
  const counted = inputs.reduce((sum, i) => sum + i.tokens, 0);
  // `[overreport]` in an input: the usage is over-reported, as for chat (reply.ts).
  const tokens = inputs.some((i) => i.text.includes('[overreport]')) ? counted * OVERREPORT_FACTOR : counted;
  return {
    kind: 'json',
    status: 200,
    headers: { 'x-request-id': call.requestId },
    body: {
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = embed(input.text, dimensions);
        return { object: 'embedding', index, embedding: format === 'base64' ? toBase64(vector) : vector };
      }),
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}

/** Answer an OpenAI-shaped call; a {@link Problem} is rendered by the caller in the host's error shape. */
export function handleOpenAIStyle(call: SimCall): Reply | Problem {
  const op = call.route.op;
  if ((op === 'embeddings' || op === 'images') && !served(call.provider, op)) return { kind: 'no-route', method: call.method, path: call.url.pathname };
  switch (op) {
    case 'chat':
      return chat(call);
    case 'embeddings':
      return embeddings(call);
    case 'images':
      return openAIImages(call);
    default:
      return { kind: 'no-route', method: call.method, path: call.url.pathname };
  }
}

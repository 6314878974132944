/**
 * Embeddings on both shapes that have them: OpenAI's `POST /embeddings` and Gemini's
 * `batchEmbedContents` (no usage). Each input maps to a unit vector derived from the SHA-256 of its
 * text, so equal texts give equal vectors in every run and on every provider.
 */
import { createHash } from 'node:crypto';
import type { Reply } from './deliver.js';
import { asArray, asNumber, asString, countWords, field, isObject } from './json-narrowing.js';
import { OVERREPORT_FACTOR } from './reply.js';
import { isRetiredModel } from './retired-models.js';
import type { Problem, SimCall } from './types.js';

/** Vector length for a model the table below does not know, when the request names none. */
const DEFAULT_DIMENSIONS = 8;

/** Each model's own vector length (OpenAI's embeddings guide; Google's model pages), so answers have real sizes. */
const NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'gemini-embedding-001': 3072,
  'text-embedding-004': 768,
  'BAAI/bge-base-en-v1.5': 768,
  'BAAI/bge-large-en-v1.5': 1024,
};

function nativeDimensions(model: string | undefined): number {
  return (model === undefined ? undefined : NATIVE_DIMENSIONS[model.replace(/^models\//, '')]) ?? DEFAULT_DIMENSIONS;
}

/** Unit-length vector (L2 norm 1) of `dimensions` components for `text`. */
export function embed(text: string, dimensions: number = DEFAULT_DIMENSIONS): number[] {
  const dims = Math.max(1, Math.min(4096, Math.floor(dimensions)));
  const values: number[] = [];
  for (let block = 0; values.length < dims; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 4 <= digest.length && values.length < dims; i += 4) values.push(digest.readUInt32LE(i) / 0xffffffff - 0.5);
  }
  const norm = Math.hypot(...values) || 1;
  // Round-trip through float32 so the float and base64 encodings carry the same numbers.
  return values.map((v) => Math.fround(v / norm));
}

/** OpenAI `encoding_format: "base64"`: little-endian float32 bytes, base64. */
export function toBase64(vector: readonly number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** Inputs as strings (hash seeds) with their token counts; token-id arrays count their length. */
function embeddingInputs(input: unknown): { text: string; tokens: number }[] | undefined {
  if (typeof input === 'string') return [{ text: input, tokens: countWords(input) }];
  const items = asArray(input);
  if (items.length === 0) return undefined;
  const tokenIds = (x: unknown): x is number[] => Array.isArray(x) && x.every((n) => typeof n === 'number');
  if (tokenIds(items)) return [{ text: items.join(','), tokens: items.length }];
  const out = items.map((item) =>
    typeof item === 'string' ? { text: item, tokens: countWords(item) } : tokenIds(item) ? { text: item.join(','), tokens: item.length } : undefined,
  );
  return out.every((x) => x !== undefined) ? out : undefined;
}

/** OpenAI `POST /embeddings`; `[overreport]` in an input over-reports the usage, as for chat. */
export function openAIEmbeddings(call: SimCall): Reply | Problem {
  const body = call.body;
  if (!isObject(body)) return { kind: 'bad-request', message: 'Request body must be a JSON object.' };
  const model = asString(body['model']);
  if (!model) return { kind: 'bad-request', message: 'you must provide a model parameter', param: 'model' };
  if (isRetiredModel(model)) return { kind: 'model-not-found', model };
  const inputs = embeddingInputs(body['input']);
  if (!inputs) return { kind: 'bad-request', message: "'input' must be a string, an array of strings, or token arrays", param: 'input' };
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64')
    return { kind: 'bad-request', message: "'encoding_format' must be 'float' or 'base64'", param: 'encoding_format' };
  const dimensions = asNumber(body['dimensions']) ?? nativeDimensions(model);
  const counted = inputs.reduce((sum, i) => sum + i.tokens, 0);
  const tokens = inputs.some((i) => i.text.includes('[overreport]')) ? counted * OVERREPORT_FACTOR : counted;
  const data = inputs.map((input, index) => {
    const vector = embed(input.text, dimensions);
    return { object: 'embedding', index, embedding: format === 'base64' ? toBase64(vector) : vector };
  });
  return {
    kind: 'json',
    status: 200,
    headers: { 'x-request-id': call.requestId },
    body: { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
  };
}

/** Gemini `batchEmbedContents`: one vector per request's `content.parts` texts. */
export function geminiBatchEmbed(call: SimCall): Reply | Problem {
  const requests = asArray(field(call.body, 'requests'));
  if (requests.length === 0) return { kind: 'bad-request', message: '* BatchEmbedContentsRequest.requests: requests is not specified' };
  const embeddings = [];
  for (const [i, request] of requests.entries()) {
    const texts = asArray(field(field(request, 'content'), 'parts'))
      .map((p) => (isObject(p) ? asString(p['text']) : undefined))
      .filter((t) => t !== undefined);
    if (texts.length === 0) return { kind: 'bad-request', message: `* BatchEmbedContentsRequest.requests[${i}].content: contents is not specified` };
    const dims = asNumber(field(request, 'outputDimensionality')) ?? nativeDimensions(asString(field(request, 'model')));
    embeddings.push({ values: embed(texts.join('\n'), dims) });
  }
  return { kind: 'json', status: 200, body: { embeddings } };
}

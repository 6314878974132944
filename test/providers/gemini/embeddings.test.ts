import { describe, expect, it } from 'vitest';
import { embeddingsRequest } from '../../../functions/shared/openai/embeddings';
import { geminiAdapter } from '../../../functions/shared/providers/gemini/adapter';
import { BASE_URL, ctxFor, failureOf, fixtureText } from './helpers';

/** Embeddings through `batchEmbedContents` (providers.md §3.6). */

const ctx = ctxFor('gemini-embedding-001');

function buildEmbeddings(fields: Record<string, unknown>, inputs: readonly string[]) {
  const build = geminiAdapter.buildEmbeddingsRequest;
  if (build === undefined) throw new Error('geminiAdapter has no embeddings');
  return build(embeddingsRequest.parse({ model: 'gemini-embedding-001', input: inputs, ...fields }), inputs, ctx);
}

function parseEmbeddings(body: string) {
  const parse = geminiAdapter.parseEmbeddingsResponse;
  if (parse === undefined) throw new Error('geminiAdapter has no embeddings');
  return parse(body, ctx);
}

describe('Gemini embeddings', () => {
  it('batches every input, even a single one, into :batchEmbedContents with the models/ prefix', () => {
    const built = buildEmbeddings({}, ['hello']);
    expect(built.url).toBe(`${BASE_URL}/models/gemini-embedding-001:batchEmbedContents`);
    expect(built.headers['x-goog-api-key']).toBe('gemini-test-key');
    expect(JSON.parse(built.body)).toEqual({ requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello' }] } }] });
  });

  it('sends dimensions as outputDimensionality on every item', () => {
    expect(JSON.parse(buildEmbeddings({ dimensions: 768 }, ['a', 'b']).body)).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 768 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] }, outputDimensionality: 768 },
      ],
    });
  });

  it('returns the vectors in order and no usage, which Gemini does not report', () => {
    expect(parseEmbeddings(fixtureText('batch-embed-response.json'))).toEqual({
      vectors: [
        [0.0125, -0.5, 0.75],
        [0.25, 0, -0.125],
      ],
      promptTokens: undefined,
    });
  });

  it('fails a malformed body as a retryable server error and an error body by its RPC status', () => {
    expect(failureOf(() => parseEmbeddings('{"embedding":{"values":[1]}}'))).toMatchObject({ kind: 'server', retryable: true });
    expect(failureOf(() => parseEmbeddings('[{"error":{"code":503,"status":"UNAVAILABLE","message":"overloaded"}}]')).kind).toBe('overloaded');
  });
});

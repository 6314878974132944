import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * The Gemini API's embeddings (`:embedContent`, `:batchEmbedContents`; ai.google.dev/api/embeddings)
 * through the real `@google/genai` SDK, changed only in base URL and key, against the real handlers:
 * the local gateway routes these paths to the embeddings (buffered) function as CloudFront does, and
 * the answer comes from the same core and ledger as `/v1/embeddings`.
 */

let gw: RunningGateway;
let ai: GoogleGenAI;
let origin: string;
/** The functions that served each request, in order (local/function-url's invocation records). */
const served: string[] = [];

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `gemini-emb-${process.pid}`, devFreeTokens: 2_000_000, onInvocation: (r) => served.push(r.functionName) });
  origin = gw.baseUrl.replace(/\/v1$/, '');
  ai = new GoogleGenAI({ apiKey: gw.apiKey, httpOptions: { baseUrl: origin } });
});

afterAll(async () => {
  await gw?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': gw.apiKey }, body: JSON.stringify(body) });

describe('ai.models.embedContent', () => {
  it.each([
    ['text-embedding-3-small', 1536],
    ['gemini-embedding-001', 3072],
  ])('%s: one vector per content, of the model dimensions', async (model, dims) => {
    const r = await ai.models.embedContent({ model, contents: ['first text', 'second text'] });
    expect(r.embeddings).toHaveLength(2);
    for (const e of r.embeddings ?? []) expect(e.values).toHaveLength(dims);
  });

  it('outputDimensionality is the vector length', async () => {
    const r = await ai.models.embedContent({
      model: 'text-embedding-3-small',
      contents: 'short',
      config: { outputDimensionality: 256, taskType: 'RETRIEVAL_QUERY' },
    });
    expect(r.embeddings?.[0]?.values).toHaveLength(256);
  });
});

describe(':embedContent on the wire', () => {
  it('answers {embedding:{values}} and bills the same ledger as /v1/embeddings', async () => {
    const res = await post('/v1beta/models/text-embedding-3-small:embedContent', { content: { parts: [{ text: 'billed text' }] } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { embedding: { values: number[] } };
    expect(body.embedding.values).toHaveLength(1536);
    const entry = await pollLedgerEntry(gw.accountId, res.headers.get('x-request-id'));
    expect(entry).toMatchObject({ publicModel: 'text-embedding-3-small', provider: 'openai', status: 'complete', completionTokens: 0 });
    expect(Number(entry?.promptTokens)).toBeGreaterThan(0);
    // Served by the buffered function, as CloudFront routes it (recorded when the invocation ends).
    expect(served.at(-1)).toBe('modelmux-embeddings');
  });

  it('errors are Google bodies: a chat model is 404 NOT_FOUND, an image part 400 INVALID_ARGUMENT', async () => {
    const chat = await post('/v1beta/models/gpt-4o:embedContent', { content: { parts: [{ text: 'x' }] } });
    expect(chat.status).toBe(404);
    expect(((await chat.json()) as { error: unknown }).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    const image = await post('/v1/models/text-embedding-3-small:batchEmbedContents', {
      requests: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AA==' } }] } }],
    });
    expect(image.status).toBe(400);
    expect(((await image.json()) as { error: unknown }).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });
});

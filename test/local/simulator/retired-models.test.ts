/**
 * Retired upstream ids (local/simulator/retired-models.ts, from providers.md) get each provider's own
 * model-not-found error from the simulator, on every route that names a model.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../local/simulator/index.js';
import { RETIRED_UPSTREAM_MODELS } from '../../../local/simulator/retired-models.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => sim.reset());
afterAll(() => sim.close());

const post = (url: string, body: unknown, headers: Record<string, string>): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const messages = [{ role: 'user', content: 'hi' }];

describe('retired upstream ids', () => {
  it.each(RETIRED_UPSTREAM_MODELS.anthropic)('anthropic answers %s with 404 not_found_error', async (model) => {
    const res = await post(`${sim.urls.anthropic}/v1/messages`, { model, max_tokens: 10, messages }, { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: `model: ${model}` } });
  });

  it.each(RETIRED_UPSTREAM_MODELS.gemini.filter((m) => !m.includes('embedding')))('gemini answers %s with 404 NOT_FOUND', async (model) => {
    const res = await post(`${sim.urls.gemini}/models/${model}:generateContent`, { contents: [{ parts: [{ text: 'hi' }] }] }, { 'x-goog-api-key': 'k' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });

  it.each(['text-embedding-004', 'embedding-001'])('gemini answers the retired embedding model %s with 404 NOT_FOUND', async (model) => {
    const res = await post(
      `${sim.urls.gemini}/models/${model}:batchEmbedContents`,
      { requests: [{ model: `models/${model}`, content: { parts: [{ text: 'a' }] } }] },
      { 'x-goog-api-key': 'k' },
    );
    expect(res.status).toBe(404);
  });

  it.each(RETIRED_UPSTREAM_MODELS.openai)('openai answers the retired image model %s with 404 model_not_found', async (model) => {
    const res = await post(`${sim.urls.openai}/images/generations`, { model, prompt: 'a fox' }, { authorization: 'Bearer k' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'model_not_found' } });
  });

  it.each(RETIRED_UPSTREAM_MODELS.deepseek)('deepseek answers %s with its 400 Model Not Exist', async (model) => {
    const res = await post(`${sim.urls.deepseek}/chat/completions`, { model, messages }, { authorization: 'Bearer k' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { message: 'Model Not Exist', param: 'model' } });
  });
});

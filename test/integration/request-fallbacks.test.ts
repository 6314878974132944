import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * `models: [...]` (OpenRouter's per-request fallback list) through the whole gateway with the
 * official openai SDK and the default settings: order, a 400 naming a bad entry, billing at the
 * model that answered, and nothing of it sent upstream.
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `fallbacks-${process.pid}`, devFreeTokens: 10_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(async () => {
  sim().reset();
  (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

/** The SDK's params, plus OpenRouter's routing fields (not in its types; sent as given). */
type WithFallbacks = OpenAI.ChatCompletionCreateParamsNonStreaming & { models?: string[]; route?: string };
type WithFallbacksStreaming = OpenAI.ChatCompletionCreateParamsStreaming & { models?: string[]; route?: string };

describe('models: a per-request fallback list', () => {
  it('buffered: a failing model falls back to the listed model first, not to its catalogue equivalent, and is billed at it', async () => {
    sim().setFault({ provider: 'openai', model: 'gpt-4o' }, { kind: 'status', status: 503 });
    const params: WithFallbacks = {
      model: 'gpt-4o',
      models: ['llama-3-70b', 'gemini-2.0-flash'],
      route: 'fallback',
      messages: [{ role: 'user', content: 'listed fallback' }],
    };
    const { data, response } = await client.chat.completions.create(params).withResponse();
    expect(response.headers.get('x-modelmux-model')).toBe('llama-3-70b');
    expect(data.model).toBe('gpt-4o');
    expect(data.choices[0]?.message.content).toContain('Echo: listed fallback');
    expect(sim().requests.map((r) => r.provider)).toEqual(['openai', 'openai', 'together']);
    // Routing fields are ours: nothing upstream sees them.
    for (const r of sim().requests) expect(r.body).not.toHaveProperty('models');
    for (const r of sim().requests) expect(r.body).not.toHaveProperty('route');
    const { CATALOGUE } = await import('../../functions/shared/catalogue/catalogue');
    const entry = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(entry).toMatchObject({
      publicModel: 'gpt-4o',
      servedModel: 'llama-3-70b',
      provider: 'together',
      inputPrice: CATALOGUE.get('llama-3-70b')?.targets[0]?.displayedPrice.input,
    });
    expect((entry as { fallbackPath: string[] }).fallbackPath.map((p) => p.split('@')[0])).toEqual(['gpt-4o', 'gpt-4o', 'llama-3-70b']);
  });

  it('streamed: the listed models are tried in order', async () => {
    sim().setFault({ provider: 'openai', model: 'gpt-4o' }, { kind: 'status', status: 500 });
    sim().setFault({ provider: 'gemini' }, { kind: 'status', status: 500 });
    const params: WithFallbacksStreaming = {
      model: 'gpt-4o',
      models: ['gemini-2.0-flash', 'deepseek-v3'],
      stream: true,
      messages: [{ role: 'user', content: 'streamed list' }],
    };
    const { data: stream, response } = await client.chat.completions.create(params).withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('Echo: streamed list');
    expect(response.headers.get('x-modelmux-model')).toBe('deepseek-v3');
    expect(sim().requests.map((r) => r.provider)).toEqual(['openai', 'openai', 'gemini', 'gemini', 'deepseek']);
  });

  it.each([
    [['claude-3-5-sonnet', 'no-such-model'], 'models[1]', 'model_not_found'],
    [['text-embedding-3-small'], 'models[0]', 'invalid_value'],
  ])('answers 400 naming the bad entry of %j, before any upstream call', async (models, param, code) => {
    const err = await client.chat.completions
      .create({ model: 'gpt-4o', models, messages: [{ role: 'user', content: 'x' }] } as WithFallbacks)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, param, code, type: 'invalid_request_error' });
    expect((err as Error).message).toContain(String(models.at(-1)));
    expect(sim().requests).toHaveLength(0);
  });
});

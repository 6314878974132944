import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * OpenRouter's chat request fields (docs/openrouter.md) through the whole gateway with the official
 * openai SDK against the built-in simulator: `usage`, `reasoning` {effort, max_tokens, exclude, enabled},
 * `transforms`, `route`, `user` and `session_id` are accepted, and each reaches the served model as its
 * own parameter (read from the request the simulator received) or is named in `x-modelmux-dropped-params`.
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `orfields-${process.pid}` });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const accountId = (await createAccount({ freeTokens: 0, creditNanoUsd: 50_000_000_000 })).accountId;
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(accountId, 'test')).key, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(() => {
  sim().reset();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

/** OpenRouter's fields, which the SDK's types lack (sent as given). */
type OpenRouterParams = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;

const ask = (params: Record<string, unknown>) =>
  client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }], ...params } as OpenRouterParams).withResponse();

const upstream = () => sim().requests.at(-1)?.body as Record<string, unknown>;

describe("OpenRouter's request fields", () => {
  it('accepts usage, transforms: [], route, user and session_id; none of the OpenRouter-only ones goes upstream', async () => {
    const { data, response } = await ask({ usage: { include: true }, transforms: [], route: 'fallback', user: 'u-1', session_id: 's-1' });
    expect(data.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-modelmux-dropped-params')).toBeNull();
    const body = upstream();
    for (const f of ['usage', 'transforms', 'route', 'session_id', 'reasoning']) expect(body).not.toHaveProperty(f);
    expect(body.user).toBe('u-1');
  });

  it('names a non-empty transforms list it cannot apply in x-modelmux-dropped-params', async () => {
    const { response } = await ask({ transforms: ['middle-out'] });
    expect(response.headers.get('x-modelmux-dropped-params')).toBe('transforms');
  });

  it('reasoning.effort becomes reasoning_effort on an OpenAI reasoning model, and is dropped with a header on gpt-4o', async () => {
    await ask({ model: 'o3-mini', reasoning: { effort: 'low' } });
    expect(upstream().reasoning_effort).toBe('low');
    expect(upstream()).not.toHaveProperty('reasoning');
    const { response } = await ask({ reasoning: { effort: 'low' }, transforms: ['middle-out'] });
    expect(response.headers.get('x-modelmux-dropped-params')).toBe('reasoning, transforms');
    expect(upstream()).not.toHaveProperty('reasoning_effort');
  });

  it('reasoning.max_tokens is the Anthropic thinking budget; enabled: false turns thinking off', async () => {
    await ask({ model: 'claude-sonnet-4-6', max_tokens: 8000, reasoning: { max_tokens: 2000 } });
    expect(upstream().thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
    await ask({ model: 'claude-sonnet-4-6', max_tokens: 8000, reasoning: { effort: 'high' } });
    expect(upstream().thinking).toEqual({ type: 'enabled', budget_tokens: 7999 });
    await ask({ model: 'claude-sonnet-4-6', max_tokens: 8000, reasoning: { enabled: false } });
    expect(upstream()).not.toHaveProperty('thinking');
  });

  it('reasoning.max_tokens is the Gemini thinking budget', async () => {
    await ask({ model: 'gemini-2.5-flash', reasoning: { max_tokens: 3000 } });
    const cfg = (upstream().generationConfig as { thinkingConfig?: unknown } | undefined)?.thinkingConfig;
    expect(cfg).toEqual({ thinkingBudget: 3000, includeThoughts: true });
  });

  it('reasoning.exclude hides the reasoning, buffered and streamed, while the answer stays', async () => {
    const shown = await ask({ model: 'deepseek-r1' });
    expect((shown.data.choices[0]?.message as { reasoning_content?: string }).reasoning_content?.length ?? 0).toBeGreaterThan(0);
    const hidden = await ask({ model: 'deepseek-r1', reasoning: { exclude: true } });
    expect(hidden.data.choices[0]?.message).not.toHaveProperty('reasoning_content');
    expect(hidden.data.choices[0]?.message.content?.length ?? 0).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({
      model: 'deepseek-r1',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      reasoning: { exclude: true },
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta ?? {}).not.toHaveProperty('reasoning_content');
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
  });
});

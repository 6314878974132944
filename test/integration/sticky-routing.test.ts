import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breaker } from '../../functions/shared/routing/circuit-breaker';
import { resetSticky } from '../../functions/shared/routing/sticky';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * Caches kept warm (routing/sticky.ts), through the real handlers and the simulator: a conversation
 * goes back to the target that answered it — also when a hedge won it — before the model's own first
 * target, and leaves it when it fails.
 */

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `sticky-${process.pid}` });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

const sim = () => gw.simulator!;

/** Asks once in the conversation; returns the provider that answered and the providers tried, in order. */
async function ask(conversation: string, extra: Record<string, unknown> = {}) {
  const from = sim().requests.length;
  const { response } = await client.chat.completions
    .create({
      model: 'gpt-4o-mini',
      max_tokens: 8,
      messages: [
        { role: 'system', content: `You are ${conversation}.` },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi' },
        { role: 'user', content: 'go on' },
      ],
      ...extra,
    } as never)
    .withResponse();
  return {
    servedBy: response.headers.get('x-modelmux-provider'),
    tried: sim()
      .requests.slice(from)
      .map((r) => r.provider),
  };
}

describe('sticky routing per conversation', () => {
  it('keeps a conversation on the target a hedge won, and yields to a failure', async () => {
    resetSticky();
    breaker.reset();
    // gpt-4o-mini hedges after 2 s: a slow OpenAI lets the hedge (Gemini, its first equivalent) win.
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 6_000 }, { times: 1 });
    const first = await ask('conv-a');
    expect(first.servedBy).toBe('gemini');
    expect(first.tried).toEqual(['openai', 'gemini']);
    // The same conversation (same first system + user message) goes straight to Gemini.
    const second = await ask('conv-a');
    expect(second).toEqual({ servedBy: 'gemini', tried: ['gemini'] });
    // Another conversation routes as usual, and so does a single-turn request without a key.
    expect((await ask('conv-b')).tried[0]).toBe('openai');
    const single = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        max_tokens: 8,
        messages: [
          { role: 'system', content: 'You are conv-a.' },
          { role: 'user', content: 'hello' },
        ],
      })
      .withResponse();
    expect(single.response.headers.get('x-modelmux-provider')).toBe('openai');
    // Gemini fails: fallback still happens, and the conversation moves to the target that answered.
    sim().setFault({ provider: 'gemini' }, { kind: 'status', status: 404 }, { times: 1 });
    const third = await ask('conv-a');
    expect(third.tried[0]).toBe('gemini');
    expect(third.servedBy).toBe('openai');
    expect((await ask('conv-a')).tried).toEqual(['openai']);
  }, 30_000);

  it('names a conversation by prompt_cache_key or session_id before its messages', async () => {
    resetSticky();
    breaker.reset();
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 404 }, { times: 1 });
    expect((await ask('conv-c', { prompt_cache_key: 'thread-42' })).servedBy).toBe('gemini');
    // Different messages, same key: still Gemini first.
    expect((await ask('conv-d', { prompt_cache_key: 'thread-42' })).tried).toEqual(['gemini']);
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 404 }, { times: 1 });
    expect((await ask('conv-e', { session_id: 's-1' })).servedBy).toBe('gemini');
    expect((await ask('conv-f', { session_id: 's-1' })).tried).toEqual(['gemini']);
    // session_id never reaches an upstream.
    expect(JSON.stringify(sim().requests.map((r) => r.body))).not.toContain('s-1');
  }, 30_000);
});

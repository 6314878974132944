import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breaker } from '../../functions/shared/routing/circuit-breaker';
import { resetSticky } from '../../functions/shared/routing/sticky';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * Caches kept warm (routing/sticky.ts), through the real handlers and the simulator: a conversation
 * goes back to the target that answered it — also when a hedge won it — before the model's own first
 * target, and leaves it when it fails. A Claude Code session (its `x-claude-code-session-id` header,
 * or the session in its `metadata.user_id`) is one conversation from its first request on.
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
  return routeSince(response, from);
}

/** Which provider answered, and every provider the simulator saw since request number `from`. */
function routeSince(response: Response, from: number): { servedBy: string | null; tried: string[] } {
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

  /** One Claude Code-like turn through the Anthropic SDK: a single user message, so only a session id can make it sticky. */
  async function askClaude(prompt: string, session: { header?: string; userId?: string }) {
    const claude = new Anthropic({
      baseURL: gw.baseUrl.replace(/\/v1$/, ''),
      apiKey: gw.apiKey,
      maxRetries: 0,
      defaultHeaders: session.header === undefined ? {} : { 'x-claude-code-session-id': session.header },
    });
    const from = sim().requests.length;
    const { response } = await claude.messages
      .create({
        model: 'claude-sonnet-4-6',
        max_tokens: 16,
        messages: [{ role: 'user', content: prompt }],
        ...(session.userId !== undefined && { metadata: { user_id: session.userId } }),
      })
      .withResponse();
    return routeSince(response, from);
  }

  it("keeps a Claude Code session on its target by x-claude-code-session-id, from the session's first request", async () => {
    resetSticky();
    breaker.reset();
    const session = '9b2f3c1e-4d5a-4e6f-8a7b-0c1d2e3f4a5b';
    // Anthropic fails once: claude-sonnet-4-6 falls back to its equivalent, gpt-4o (OpenAI).
    sim().setFault({ provider: 'anthropic' }, { kind: 'status', status: 404 }, { times: 1 });
    expect(await askClaude('first prompt of the session', { header: session })).toEqual({ servedBy: 'openai', tried: ['anthropic', 'openai'] });
    // Another single-turn prompt of the same session goes straight to the target that answered it.
    expect(await askClaude('a second, different prompt', { header: session })).toEqual({ servedBy: 'openai', tried: ['openai'] });
    // Without the header, or with another session, the same kind of request routes as usual.
    expect((await askClaude('a second, different prompt', {})).tried).toEqual(['anthropic']);
    expect((await askClaude('a second, different prompt', { header: 'another-session' })).tried).toEqual(['anthropic']);
    // The header never reaches a non-Claude upstream's body.
    expect(JSON.stringify(sim().requests.map((r) => r.body))).not.toContain(session);
  }, 30_000);

  it("keeps a Claude Code session on its target by the session in metadata.user_id (both of Claude Code's formats)", async () => {
    resetSticky();
    breaker.reset();
    const session = '1a2b3c4d-0000-4000-8000-00000000abcd';
    const device = 'ab'.repeat(32);
    const json = JSON.stringify({ device_id: device, account_uuid: '', session_id: session });
    const legacy = `user_${device}_account__session_${session}`;
    sim().setFault({ provider: 'anthropic' }, { kind: 'status', status: 404 }, { times: 1 });
    expect((await askClaude('first prompt', { userId: json })).servedBy).toBe('openai');
    // The older format names the same session: the same conversation.
    expect(await askClaude('second prompt', { userId: legacy })).toEqual({ servedBy: 'openai', tried: ['openai'] });
    // Another device's user id with no session in it is not sticky.
    expect((await askClaude('second prompt', { userId: 'some-opaque-user' })).tried).toEqual(['anthropic']);
  }, 30_000);
});

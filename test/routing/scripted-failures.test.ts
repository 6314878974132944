import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE, getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { routeBuffered, routeStream } from '../../functions/shared/routing/fallback-router';
import { CircuitBreaker } from '../../functions/shared/routing/circuit-breaker';
import { startSimulator, type Simulator } from '../../local/simulator';
import { simulatorCredentials } from '../support/loopback';
import { keepAliveForever, openAIError, openAISse, startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream';

/**
 * The router against upstream behaviours the simulator cannot produce (see scripted-upstream.ts),
 * with the simulator as the healthy fallback: a buffered answer kept alive with blank lines past the
 * budget, a malformed first stream event, a prompt over every target's context window.
 */

let sim: Simulator;
let scripted: ScriptedUpstream;

beforeAll(async () => {
  sim = await startSimulator();
  scripted = await startScriptedUpstream(keepAliveForever(50));
});
afterAll(async () => {
  await scripted.close();
  await sim.close();
});
beforeEach(() => {
  sim.reset();
  scripted.requests.length = 0;
});

const req = (extra: Record<string, unknown> = {}) =>
  chatCompletionRequest.parse({ model: 'x', messages: [{ role: 'user', content: 'scripted test' }], ...extra });
const signal = () => new AbortController().signal;
/** OpenAI at the scripted upstream; Anthropic at the simulator; nothing else configured. */
const openaiScripted = () => ({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: scripted.url, ...simulatorCredentials(sim, ['anthropic']) });

describe('a buffered attempt has a cap that its bytes cannot reset', () => {
  it('an upstream that keeps the connection alive with blank lines is aborted at the deadline (504)', async () => {
    scripted.setScript(keepAliveForever(50));
    const plan = planAttempts(getModel('deepseek-v3', 'chat'), CATALOGUE, { DEEPSEEK_API_KEY: 'k', DEEPSEEK_BASE_URL: scripted.url });
    expect(plan.map((a) => a.target.key)).toEqual(['deepseek:deepseek-flash']);
    const started = Date.now();
    const err = await routeBuffered(req(), plan, { signal: signal(), deadline: started + 600, breaker: new CircuitBreaker() }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(err).toMatchObject({ status: 504 });
    // Blank lines every 50 ms keep resetting the 30 s idle timer: only the total cap stops it.
    expect(elapsed).toBeGreaterThanOrEqual(590);
    expect(elapsed).toBeLessThan(1_500);
    // The capped upstream call is aborted, not left streaming.
    await expect.poll(() => scripted.requests[0]?.aborted, { timeout: 5_000, interval: 10 }).toBe(true);
    expect(scripted.requests).toHaveLength(1);
  });
});

describe('a malformed first stream event', () => {
  it('comes before the first token, so the stream falls back to an equivalent', async () => {
    scripted.setScript(
      openAISse([
        'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n',
        'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel\n\n',
      ]),
    );
    const out = await routeStream(req({ stream: true }), planAttempts(getModel('gpt-4o', 'chat'), CATALOGUE, openaiScripted()), {
      signal: signal(),
      breaker: new CircuitBreaker(),
    });
    expect(out.attempt.publicModel).toBe('claude-3-5-sonnet');
    // A malformed answer is a server failure: retried once on the same target, then the equivalent.
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['gpt-4o:server', 'gpt-4o:server', 'claude-3-5-sonnet:ok']);
    let text = out.first.map((p) => p.choices.map((c) => c.delta.content ?? '').join('')).join('');
    for await (const batch of out.rest) text += batch.map((p) => p.choices.map((c) => c.delta.content ?? '').join('')).join('');
    expect(text).toContain('Echo: scripted test');
    expect(scripted.requests).toHaveLength(2);
    expect(sim.requests.map((r) => r.provider)).toEqual(['anthropic']);
  });
});

describe('a prompt over the context window', () => {
  const tooLong = openAIError(400, {
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 150000 tokens. Please reduce the length of the messages.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  });

  it('falls back to a larger window, once per window size', async () => {
    scripted.setScript(tooLong);
    const out = await routeBuffered(req(), planAttempts(getModel('gpt-4o', 'chat'), CATALOGUE, openaiScripted()), {
      signal: signal(),
      breaker: new CircuitBreaker(),
    });
    expect(out.attempt.target.key).toBe('anthropic:claude-sonnet-4-6');
    expect(out.attempts.map((a) => a.outcome)).toEqual(['context-length', 'ok']);
    expect(scripted.requests).toHaveLength(1); // not retried
  });

  it("too long for every target: the client's 400 context_length_exceeded, each window tried once", async () => {
    scripted.setScript(tooLong);
    // The simulator's Anthropic 400 is a generic one; a larger-window target that says "too long"
    // needs the scripted upstream speaking Anthropic's words (Messages API, invalid_request_error).
    const anthropic = await startScriptedUpstream((_q, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 150000 tokens > 200000 maximum' } }));
    });
    try {
      const creds = { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: scripted.url, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: anthropic.url };
      const err = await routeBuffered(req(), planAttempts(getModel('gpt-4o', 'chat'), CATALOGUE, creds), {
        signal: signal(),
        breaker: new CircuitBreaker(),
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' });
      expect((err as Error).message).toMatch(/too long/);
      expect(scripted.requests).toHaveLength(1);
      // claude-sonnet-4-5 has the same 200K window as claude-sonnet-4-6: not tried again.
      expect(anthropic.requests).toHaveLength(1);
    } finally {
      await anthropic.close();
    }
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE, getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { routeBuffered, routeStream } from '../../functions/shared/routing/fallback-router';
import { CircuitBreaker } from '../../functions/shared/routing/circuit-breaker';
import { startSimulator, type Simulator } from '../../local/simulator';
import { simulatorCredentials } from '../support/loopback';

/**
 * The router against the real simulator over loopback, with its own short-cooldown breaker: the
 * cases a whole-gateway test cannot steer (breaker timing, aborts, per-target refusals).
 */

let sim: Simulator;
let creds: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator();
  creds = simulatorCredentials(sim, ['openai', 'anthropic', 'gemini']);
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => sim.reset());

const req = (extra: Record<string, unknown> = {}) =>
  chatCompletionRequest.parse({ model: 'x', messages: [{ role: 'user', content: 'router test' }], ...extra });
const plan = (model: string) => planAttempts(getModel(model, 'chat'), CATALOGUE, creds);
const signal = () => new AbortController().signal;
const noRetry = { maxRetriesPerTarget: 0, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 0 };

describe('circuit breaker in the attempt loop', () => {
  it('never leaves a half-open probe hanging on a target the loop did not reach', async () => {
    // The breaker's own clock: the cooldown passes when the test says, however long answers take.
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 50 }, () => now);
    // Open gpt-4o's breaker, then let its cooldown pass.
    sim.setFault({ provider: 'openai' }, { kind: 'status', status: 500 }, { times: 1 });
    await routeBuffered(req(), plan('gpt-4o'), { signal: signal(), breaker, retry: noRetry });
    expect(breaker.isOpen('openai:gpt-4o')).toBe(true);
    now = 60;
    // A request for claude-3-5-sonnet (whose plan lists gpt-4o as an equivalent) succeeds on Claude
    // without reaching gpt-4o…
    await routeBuffered(req(), plan('claude-3-5-sonnet'), { signal: signal(), breaker });
    // …and gpt-4o must still be probed by the next request for it, not skipped forever.
    const out = await routeBuffered(req(), plan('gpt-4o'), { signal: signal(), breaker });
    expect(out.attempt.target.key).toBe('openai:gpt-4o');
  });

  it('does not count a client that left against the target', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, cooldownMs: 60_000 });
    sim.setFault({ provider: 'openai' }, { kind: 'hang' });
    for (let i = 0; i < 3; i++) {
      const c = new AbortController();
      setTimeout(() => c.abort(), 50);
      await expect(routeStream(req({ stream: true }), plan('gpt-4o'), { signal: c.signal, breaker })).rejects.toMatchObject({ status: 499 });
    }
    expect(breaker.isOpen('openai:gpt-4o')).toBe(false);
  });
});

describe('breaker cooldown and probe through the attempt loop', () => {
  it('skips an open target until its cooldown ends, then one request probes it; a failed probe re-opens it', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 150 }, () => now);
    sim.setFault({ provider: 'openai' }, { kind: 'status', status: 500 });
    const opts = () => ({ signal: signal(), breaker, retry: noRetry });
    const openaiCalls = () => sim.requests.filter((r) => r.provider === 'openai').length;

    expect((await routeBuffered(req(), plan('gpt-4o'), opts())).attempt.publicModel).toBe('claude-3-5-sonnet');
    expect(openaiCalls()).toBe(1);
    // Open: skipped, nothing sent to it.
    const skipped = await routeBuffered(req(), plan('gpt-4o'), opts());
    expect(skipped.attempts.map((a) => a.publicModel)).toEqual(['claude-3-5-sonnet']);
    expect(openaiCalls()).toBe(1);
    // Cooldown over: the next request probes it (and the probe fails: open again).
    now += 170;
    const probed = await routeBuffered(req(), plan('gpt-4o'), opts());
    expect(probed.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['gpt-4o:server', 'claude-3-5-sonnet:ok']);
    expect(openaiCalls()).toBe(2);
    expect(breaker.isOpen('openai:gpt-4o')).toBe(true);
    await routeBuffered(req(), plan('gpt-4o'), opts());
    expect(openaiCalls()).toBe(2);
    // Healed upstream: the probe after the next cooldown succeeds and closes it.
    sim.clearFaults();
    now += 170;
    expect((await routeBuffered(req(), plan('gpt-4o'), opts())).attempt.publicModel).toBe('gpt-4o');
    expect(breaker.isOpen('openai:gpt-4o')).toBe(false);
  });
});

describe('mid-stream failures and the breaker', () => {
  async function drain(out: Awaited<ReturnType<typeof routeStream>>): Promise<unknown> {
    try {
      for await (const _ of out.rest) void _;
      return undefined;
    } catch (e) {
      return e;
    } finally {
      out.close();
    }
  }

  it('a target that keeps breaking off its streams after the first token opens its breaker', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, cooldownMs: 60_000 });
    sim.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 2 });
    for (let i = 0; i < 2; i++) {
      const out = await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker });
      expect(out.attempt.publicModel).toBe('gpt-4o'); // the first token came: no fallback
      expect(await drain(out)).toMatchObject({ name: 'UpstreamAttemptError' });
    }
    expect(breaker.isOpen('openai:gpt-4o')).toBe(true);
    const next = await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker });
    expect(next.attempt.publicModel).toBe('claude-3-5-sonnet');
    await drain(next);
  });

  it('a stream that ends well counts as a success only at its end, and resets the count', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, cooldownMs: 60_000 });
    sim.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 2 }, { times: 1 });
    expect(await drain(await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker }))).toBeDefined();
    expect(await drain(await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker }))).toBeUndefined();
    sim.setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 2 }, { times: 1 });
    expect(await drain(await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker }))).toBeDefined();
    expect(breaker.isOpen('openai:gpt-4o')).toBe(false);
  });

  it('a client that leaves mid-stream, or our deadline stopping it, does not count against the target', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 60_000 });
    sim.setChunkDelay(30);
    const c = new AbortController();
    const left = await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: c.signal, breaker });
    c.abort();
    expect(await drain(left)).toBeDefined();
    const stopped = await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker });
    stopped.close('deadline');
    expect(await drain(stopped)).toBeDefined();
    // The attempt's own total timer reaching the deadline mid-stream is ours as well.
    const capped = await routeStream(req({ stream: true }), plan('gpt-4o'), { signal: signal(), breaker, deadline: Date.now() + 120 });
    expect(await drain(capped)).toMatchObject({ failure: { kind: 'timeout' } });
    expect(breaker.isOpen('openai:gpt-4o')).toBe(false);
    sim.setChunkDelay(0);
  });
});

describe('per-target refusals', () => {
  it('an equivalent whose adapter refuses the request (n > 1 on Claude) is skipped, not the whole request', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'status', status: 503 });
    const out = await routeBuffered(req({ n: 2 }), plan('gpt-4o'), { signal: signal(), breaker: new CircuitBreaker(), retry: noRetry });
    expect(out.attempt.publicModel).toBe('gemini-2.5-pro');
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['gpt-4o:overloaded', 'claude-3-5-sonnet:client', 'gemini-2.5-pro:ok']);
  });

  it('a healthy primary serves a request its equivalents could not', async () => {
    const out = await routeBuffered(req({ n: 2 }), plan('gpt-4o'), { signal: signal(), breaker: new CircuitBreaker() });
    expect(out.attempt.target.key).toBe('openai:gpt-4o');
  });

  it("the requested model refusing the request is the client's error, returned at once", async () => {
    await expect(routeBuffered(req({ n: 2 }), plan('claude-3-5-sonnet'), { signal: signal(), breaker: new CircuitBreaker() })).rejects.toMatchObject({
      status: 400,
      param: 'n',
    });
    expect(sim.requests).toHaveLength(0);
  });
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildCatalogue, type Catalogue } from '../../functions/shared/catalogue/catalogue';
import { CATALOGUE_DATA } from '../../functions/shared/catalogue/models';
import type { CatalogueEntryData, CatalogueTargetData } from '../../functions/shared/catalogue/schema';
import { logger } from '../../functions/shared/observability/logger';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { routeBuffered, routeStream, type StreamOutcome } from '../../functions/shared/routing/fallback-router';
import { CircuitBreaker } from '../../functions/shared/routing/circuit-breaker';
import { hedgeLossNanoUsd } from '../../functions/shared/routing/hedge';
import { roughChatPromptTokens } from '../../functions/shared/usage/prompt-tokens';
import { startSimulator, type Simulator } from '../../local/simulator';
import { simulatorCredentials } from '../support/loopback';

/**
 * Hedging through the real router against the simulator over loopback, on a small catalogue whose
 * hedged model starts its next target after 150 ms without a first token (the shipped models hedge
 * after seconds: test/integration/default-timeouts.test.ts runs those through the gateway).
 */

let sim: Simulator;
let creds: Record<string, string>;

const targetOf = (id: string, i = 0): CatalogueTargetData => {
  const t = CATALOGUE_DATA.find((e) => e.id === id)?.targets[i];
  if (!t) throw new Error(`no target ${id}`);
  return t;
};
const entry = (id: string, target: CatalogueTargetData, equivalents: string[], hedge?: CatalogueEntryData['hedge']): CatalogueEntryData => ({
  id,
  kind: 'chat',
  description: id,
  ownedBy: 'test',
  created: 1,
  targets: [target],
  equivalents,
  ...(hedge ? { hedge } : {}),
});
/** hedged (openai gpt-4o-mini) → second (anthropic claude-haiku-4-5) → third (gemini flash-lite). */
const catalogue: Catalogue = buildCatalogue([
  entry('hedged', targetOf('gpt-4o-mini'), ['second', 'third'], { afterMs: 150 }),
  entry('second', targetOf('claude-haiku-4-5'), []),
  entry('third', targetOf('gemini-2.0-flash'), []),
  entry('plain', targetOf('gpt-4o-mini'), ['second']),
]);

beforeAll(async () => {
  sim = await startSimulator();
  creds = simulatorCredentials(sim, ['openai', 'anthropic', 'gemini']);
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => sim.reset());
afterEach(() => vi.restoreAllMocks());

const req = (stream = false) =>
  chatCompletionRequest.parse({ model: 'hedged', messages: [{ role: 'user', content: 'hedge test' }], ...(stream ? { stream: true } : {}) });
const plan = (model = 'hedged') => planAttempts(catalogue.get(model)!, catalogue, creds);
const signal = () => new AbortController().signal;
const calls = (provider: string) => sim.requests.filter((r) => r.provider === provider);

async function text(out: StreamOutcome): Promise<string> {
  let s = out.first.map((p) => p.choices.map((c) => c.delta.content ?? '').join('')).join('');
  for await (const batch of out.rest) s += batch.map((p) => p.choices.map((c) => c.delta.content ?? '').join('')).join('');
  out.close();
  return s;
}

describe.each(['buffered', 'streamed'] as const)('%s: a hedged model', (mode) => {
  const route = (breaker: CircuitBreaker, model = 'hedged') =>
    mode === 'buffered'
      ? routeBuffered(req(), plan(model), { signal: signal(), breaker, requestId: 'req_hedge' }).then((o) => ({
          ...o,
          content: o.parts.choices[0]?.message.content ?? '',
        }))
      : routeStream(req(true), plan(model), { signal: signal(), breaker, requestId: 'req_hedge' }).then(async (o) => ({ ...o, content: await text(o) }));

  it('starts the next target when the primary has no first token by afterMs; the partner wins, the primary is stopped, not counted as failing', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 1_500 });
    const info = vi.spyOn(logger, 'info');
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 60_000 });
    const started = Date.now();
    const out = await route(breaker);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(out.attempt.publicModel).toBe('second');
    expect(out.content).toContain('Echo: hedge test');
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['hedged:hedge-lost', 'second:ok']);
    // The partner started at afterMs (150 ms after the primary was sent), not before.
    const partnerAt = (calls('anthropic')[0]?.receivedAt ?? 0) - started;
    expect(partnerAt).toBeGreaterThanOrEqual(150);
    expect(partnerAt).toBeLessThan(800);
    await expect.poll(() => calls('openai')[0]?.aborted, { timeout: 5_000, interval: 10 }).toBe(true);
    expect(calls('openai')).toHaveLength(1);
    expect(breaker.isOpen('openai:gpt-4o-mini')).toBe(false);
    // The loser's prompt is logged as the operator's cost, at the loser's upstream input price.
    const line = info.mock.calls.find(([msg]) => typeof msg === 'string' && msg.startsWith('hedge lost'));
    // Counted by the one prompt rule (usage/prompt-tokens.ts): the text plus its message framing.
    const prompt = roughChatPromptTokens(req());
    expect(prompt).toBeGreaterThan(2);
    expect(line?.[1]).toMatchObject({ requestId: 'req_hedge', hedgeLost: true, target: 'openai:gpt-4o-mini', promptTokensEstimate: prompt });
    expect((line?.[1] as { operatorCostNanoUsd: number }).operatorCostNanoUsd).toBe(hedgeLossNanoUsd(plan()[0]!, prompt));
  });

  it('the primary that answers first after the hedge started wins, and the partner is stopped', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 400 });
    sim.setFault({ provider: 'anthropic' }, { kind: 'slow-headers', delayMs: 3_000 });
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 60_000 });
    const out = await route(breaker);
    expect(out.attempt.publicModel).toBe('hedged');
    expect(out.content).toContain('Echo: hedge test');
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['second:hedge-lost', 'hedged:ok']);
    await expect.poll(() => calls('anthropic')[0]?.aborted, { timeout: 5_000, interval: 10 }).toBe(true);
    expect(breaker.isOpen('anthropic:claude-haiku-4-5')).toBe(false);
  });

  it('starts no partner when the first token comes in time, nor for a model that does not hedge', async () => {
    const breaker = new CircuitBreaker();
    expect((await route(breaker)).attempts).toHaveLength(1);
    sim.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 400 });
    const out = await route(breaker, 'plain');
    expect(out.attempt.publicModel).toBe('plain');
    expect(sim.requests.map((r) => r.provider)).toEqual(['openai', 'openai']);
  });

  it('respects the breaker: an open partner target is skipped, the next allowed one races', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 60_000 });
    breaker.failure('anthropic:claude-haiku-4-5', 'server');
    sim.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 1_500 });
    const out = await route(breaker);
    expect(out.attempt.publicModel).toBe('third');
    expect(calls('anthropic')).toHaveLength(0);
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['hedged:hedge-lost', 'third:ok']);
  });

  it('a primary that fails while its partner runs leaves the partner to answer alone, without a retry beside it', async () => {
    // Every event 200 ms apart: the primary's error event comes at ~200 ms (after the hedge at 150),
    // the partner's first token (Anthropic's first text delta, its third event) at ~550 ms.
    sim.setChunkDelay(200);
    sim.setFault({ provider: 'openai' }, { kind: 'error-event-after-chunks', chunks: 0 });
    const breaker = new CircuitBreaker();
    const out = await route(breaker);
    sim.setChunkDelay(0);
    expect(out.attempt.publicModel).toBe('second');
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['hedged:server', 'second:ok']);
    expect(calls('openai')).toHaveLength(1);
    expect(out.content).toContain('Echo: hedge test');
  });
});

describe('buffered: a hedge winner that fails after its first token', () => {
  it('gives way to the rest of the plan, the stopped loser first again', async () => {
    sim.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 1_500 }, { times: 1 });
    sim.setFault({ provider: 'anthropic' }, { kind: 'reset-after-chunks', chunks: 2 }, { times: 2 });
    const out = await routeBuffered(req(), plan(), { signal: signal(), breaker: new CircuitBreaker() });
    expect(out.attempts.map((a) => `${a.publicModel}:${a.outcome}`)).toEqual(['hedged:hedge-lost', 'second:connection', 'second:connection', 'hedged:ok']);
    expect(out.parts.choices[0]?.message.content).toContain('Echo: hedge test');
    expect(calls('gemini')).toHaveLength(0);
  });
});

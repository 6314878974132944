import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { keepAliveForever, startScriptedUpstream, type ScriptedUpstream } from '../routing/scripted-upstream';
import { pollLedgerEntry } from '../support/ledger';

/**
 * A stream longer than the function's own timeout: modelmux stops the upstream at the deadline
 * (timeout less the settle reserve), ends the stream with an error event, and bills what was
 * produced — instead of Lambda killing the invocation with nothing billed and no end signalled.
 *
 * Buffered answers have a tighter budget (BUFFERED_CHAT_BUDGET_MS, under CloudFront's origin read
 * timeout), and no attempt outlives it, however its upstream keeps the connection alive.
 */

let gw: RunningGateway;
/** DeepSeek's stand-in: headers, then a blank line every 50 ms, never an answer (providers.md §4.5). */
let deepseek: ScriptedUpstream;
/** The buffered budget here (ms): under the 1.5 s function deadline, so it is the one that binds. */
const BUDGET_MS = 600;

beforeAll(async () => {
  deepseek = await startScriptedUpstream(keepAliveForever(50));
  process.env.DEEPSEEK_API_KEY = 'scripted';
  process.env.DEEPSEEK_BASE_URL = deepseek.url;
  process.env.BUFFERED_CHAT_BUDGET_MS = String(BUDGET_MS);
  // 6.5 s function timeout − 5 s reserve = a 1.5 s deadline; the reply takes ~12 s at 300 ms a chunk.
  gw = await startGateway({ tablePrefix: `deadline-${process.pid}`, chatTimeoutMs: 6_500, simulator: { chunkDelayMs: 300, replyWords: 40 } });
});

afterAll(async () => {
  await gw?.close();
  await deepseek?.close();
});

async function bufferedChat(model: string, content: string) {
  const started = Date.now();
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  const body = (await res.json()) as { error?: { message: string; type: string }; choices?: Array<{ message: { content: string } }> };
  return { res, body, elapsed: Date.now() - started };
}

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

describe('buffered budget', () => {
  beforeEach(async () => {
    sim().reset();
    deepseek.requests.length = 0;
    (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
  });

  it('an upstream that keeps a buffered answer alive with blank lines is cut at the budget: 504, upstream aborted, nothing billed', async () => {
    const r = await bufferedChat('deepseek-v3', 'keep me waiting');
    expect(r.res.status).toBe(504);
    expect(r.body.error?.message).toMatch(/timed out/);
    expect(r.elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(r.elapsed).toBeLessThan(1_400); // not the function deadline (1.5 s), let alone never
    for (let i = 0; i < 50 && !deepseek.requests[0]?.aborted; i++) await new Promise((res) => setTimeout(res, 20));
    expect(deepseek.requests).toHaveLength(1);
    expect(deepseek.requests[0]?.aborted).toBe(true);
    expect(sim().requests).toHaveLength(0); // no budget left for an equivalent
    expect(await pollLedgerEntry(gw.accountId, r.res.headers.get('x-request-id'), 10)).toBeUndefined();
  });

  it('bounds every attempt and fallback of a buffered request, well under the function deadline', async () => {
    for (const p of ['openai', 'gemini', 'anthropic'] as const) sim().setFault({ provider: p }, { kind: 'hang' });
    const r = await bufferedChat('gpt-4o-mini', 'all hang');
    expect(r.res.status).toBe(504);
    expect(r.elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(r.elapsed).toBeLessThan(1_400);
    expect(sim().requests.map((q) => q.provider)).toEqual(['openai']);
  });

  it('a retry-after longer than what is left of the budget moves on to the equivalent at once', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterSeconds: 2 }); // under the 5 s cap
    const r = await bufferedChat('gpt-4o-mini', 'no time to wait');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('x-modelmux-model')).toBe('gemini-2.0-flash');
    expect(sim().requests.map((q) => q.provider)).toEqual(['openai', 'gemini']);
    expect(r.elapsed).toBeLessThan(BUDGET_MS);
  });
});

describe('function deadline', () => {
  it('ends an over-long stream with an error event before the function times out, and bills it as partial', async () => {
    const started = Date.now();
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a very long answer please' }] }),
    });
    const body = await res.text();
    const elapsed = Date.now() - started;
    const events = body.split('\n\n').filter((e) => e.startsWith('data: '));
    const last = JSON.parse(events.at(-1)?.slice(6) ?? '{}') as { error?: { message: string } };
    expect(res.status).toBe(200);
    expect(events.length).toBeGreaterThan(2);
    expect(last.error?.message).toMatch(/failed mid-stream \(timeout\)/);
    expect(body).not.toContain('[DONE]');
    expect(elapsed).toBeLessThan(6_500);

    const item = await pollLedgerEntry(gw.accountId, res.headers.get('x-request-id'));
    expect(item).toMatchObject({ status: 'partial', usageEstimated: true });
    expect(item?.completionTokens).toBeGreaterThan(0);
  });
});

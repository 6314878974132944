import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { keepAliveForever, startScriptedUpstream, type ScriptedUpstream } from '../routing/scripted-upstream';
import { pollLedgerEntry } from '../support/ledger';

/**
 * A stream longer than the function's own timeout: modelmux stops the upstream at the deadline
 * (timeout less the settle reserve), ends the stream with an error event, and bills what was
 * produced — instead of Lambda killing the invocation with nothing billed and no end signalled.
 *
 * A buffered answer keeps its status open for BUFFERED_CHAT_BUDGET_MS (under CloudFront's origin
 * read timeout); an answer not ready by then gets its 200 with JSON-whitespace beats, and is written
 * after them, or — if nothing answered by the function's deadline — OpenAI's error object is.
 */

let gw: RunningGateway;
/** DeepSeek's stand-in: headers, then a blank line every 50 ms, never an answer (providers.md §4.5). */
let deepseek: ScriptedUpstream;
/** The buffered budget here (ms): under the 1.5 s function deadline. */
const BUDGET_MS = 600;

beforeAll(async () => {
  deepseek = await startScriptedUpstream(keepAliveForever(50));
  process.env.DEEPSEEK_API_KEY = 'scripted';
  process.env.DEEPSEEK_BASE_URL = deepseek.url;
  process.env.BUFFERED_CHAT_BUDGET_MS = String(BUDGET_MS);
  // 6.5 s function timeout − 5 s reserve = a 1.5 s deadline; the reply takes ~8 s at 300 ms a chunk.
  gw = await startGateway({ tablePrefix: `deadline-${process.pid}`, chatTimeoutMs: 6_500, simulator: { chunkDelayMs: 300, replyWords: 40 } });
});

afterAll(async () => {
  await gw?.close();
  await deepseek?.close();
});

/** A buffered request over raw HTTP: status, the body as sent, when the first byte and the end came. */
async function bufferedChat(model: string, content: string) {
  const started = Date.now();
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  const headersAt = Date.now() - started;
  const text = await res.text();
  const body = JSON.parse(text) as { error?: { message: string; type: string; code: string }; choices?: Array<{ message: { content: string } }> };
  return { res, text, body, headersAt, elapsed: Date.now() - started };
}

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

describe('buffered budget', () => {
  beforeEach(async () => {
    sim().reset();
    sim().setChunkDelay(0);
    deepseek.requests.length = 0;
    (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
  });

  it("an upstream that keeps a buffered answer alive with blank lines: 200 committed at the budget, OpenAI's 504 error object at the deadline, upstream aborted, nothing billed", async () => {
    const r = await bufferedChat('deepseek-v3', 'keep me waiting');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('content-type')).toBe('application/json');
    expect(r.headersAt).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(r.headersAt).toBeLessThan(1_200);
    expect(r.text.startsWith('\n')).toBe(true); // the beat: JSON whitespace
    expect(r.body.error).toMatchObject({ type: 'timeout_error', code: 'upstream_timeout' });
    expect(r.body.error?.message).toMatch(/timed out/);
    expect(r.elapsed).toBeGreaterThanOrEqual(1_400); // the function's deadline (1.5 s)…
    expect(r.elapsed).toBeLessThan(3_000); // …not the keep-alive's "never"
    await expect.poll(() => deepseek.requests[0]?.aborted, { timeout: 5_000, interval: 20 }).toBe(true);
    expect(deepseek.requests).toHaveLength(1);
    expect(deepseek.requests[0]?.aborted).toBe(true);
    expect(sim().requests).toHaveLength(0); // no time left for an equivalent
    expect(await pollLedgerEntry(gw.accountId, r.res.headers.get('x-request-id'), 10)).toBeUndefined();
  });

  it('bounds every attempt and fallback of a buffered request by the function deadline', async () => {
    for (const p of ['openai', 'gemini', 'anthropic'] as const) sim().setFault({ provider: p }, { kind: 'hang' });
    const r = await bufferedChat('gpt-4o-mini', 'all hang');
    expect(r.res.status).toBe(200);
    expect(r.body.error).toMatchObject({ code: 'upstream_timeout' });
    expect(r.elapsed).toBeLessThan(3_000);
    expect(sim().requests.map((q) => q.provider)).toEqual(['openai']);
  });

  it('an answer that takes longer than the budget is held, then arrives whole: the openai SDK reads it as usual, and it is billed', async () => {
    sim().setChunkDelay(25); // ~30 events: ~0.75 s, past the 600 ms budget, well within the 1.5 s deadline on a loaded machine
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    const started = Date.now();
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'held answer' }] })
      .withResponse();
    expect(Date.now() - started).toBeGreaterThan(BUDGET_MS);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-modelmux-model')).toBeNull(); // committed before routing ended
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message.content).toMatch(/^Echo: held answer( \S+){37}$/);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    const item = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(item).toMatchObject({ servedModel: 'gpt-4o-mini', status: 'complete', usageEstimated: false, completionTokens: 40 });
  });

  it('a buffered Responses API answer held past the budget arrives whole in the Responses shape', async () => {
    sim().setChunkDelay(25); // as above
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    const started = Date.now();
    const { data, response } = await client.responses.create({ model: 'gpt-4o-mini', input: 'held response' }).withResponse();
    expect(Date.now() - started).toBeGreaterThan(BUDGET_MS);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-modelmux-model')).toBeNull(); // committed before routing ended
    expect(data.object).toBe('response');
    expect(data.status).toBe('completed');
    expect(data.output_text).toMatch(/^Echo: held response( \S+){37}$/);
    const item = await pollLedgerEntry(gw.accountId, response.headers.get('x-request-id'));
    expect(item).toMatchObject({ servedModel: 'gpt-4o-mini', status: 'complete', completionTokens: 40 });
  });

  it('a retry-after longer than what is left before the deadline moves on to the equivalent at once', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 429, retryAfterSeconds: 2 }); // under the 5 s cap
    const r = await bufferedChat('gpt-4o-mini', 'no time to wait');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('x-modelmux-model')).toBe('gemini-2.0-flash');
    expect(sim().requests.map((q) => q.provider)).toEqual(['openai', 'gemini']);
    expect(r.elapsed).toBeLessThan(BUDGET_MS);
  });
});

describe('function deadline', () => {
  beforeEach(() => {
    sim().reset();
    sim().setChunkDelay(300);
  });

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

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * A stream whose first token is slow: after STREAM_COMMIT_AFTER_MS the 200 is committed and SSE
 * comments keep the connection alive (CloudFront drops an origin silent for 60 s), while routing and
 * fallback go on. The OpenAI SDK ignores comments, so the client sees a normal stream.
 */

let gw: RunningGateway;

beforeAll(async () => {
  process.env.STREAM_COMMIT_AFTER_MS = '300';
  // idleMs < firstTokenMs, as in the defaults (30 s < 60 s) and for reasoning models (o3-mini 180 s).
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({ stream: { headersMs: 700, firstTokenMs: 700, idleMs: 250 } });
  gw = await startGateway({ tablePrefix: `slow-${process.pid}`, devFreeTokens: 10_000_000 });
});

afterAll(async () => {
  await gw?.close();
});

async function rawStream(model: string): Promise<{ status: number; body: string; firstByteMs: number; totalMs: number }> {
  const started = Date.now();
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'slow start' }] }),
  });
  const firstByteMs = Date.now() - started;
  return { status: res.status, body: await res.text(), firstByteMs, totalMs: Date.now() - started };
}

/** Streams a request and notes when (epoch ms) the first content chunk arrived. */
async function timedStream(model: string, content: string): Promise<{ body: string; firstContentAt: number | undefined }> {
  const res = await fetch(`${gw.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content }] }),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let body = '';
  let firstContentAt: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    body += decoder.decode(value, { stream: true });
    if (firstContentAt === undefined && /"content":"[^"]/.test(body)) firstContentAt = Date.now();
  }
  return { body, firstContentAt };
}

/** The content deltas of a raw SSE body, joined. */
function contentOf(body: string): string {
  return body
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
    .join('');
}

describe('first-token allowance', () => {
  it('an upstream silent for longer than the idle limit, but within firstTokenMs, still serves', async () => {
    const sim = gw.simulator;
    if (!sim) throw new Error('simulator expected');
    sim.reset();
    // The simulator writes its first event (the role preamble) at once, then waits the chunk delay
    // before each next one. 500 ms before the first content: over idleMs (250), under firstTokenMs (700).
    sim.setChunkDelay(500);
    const pending = timedStream('gpt-4o-mini', 'silent start');
    // The preamble is out, so the 500 ms wait before the first content has begun (its length is read as
    // that event's write completes); the events after the first content come at once.
    await vi.waitFor(() => expect(sim.requests[0]?.eventsSent).toBeGreaterThanOrEqual(1), { timeout: 2_000, interval: 5 });
    sim.setChunkDelay(0);
    const r = await pending;
    const upstreamAt = sim.requests[0]?.receivedAt ?? 0;
    expect((r.firstContentAt ?? 0) - upstreamAt).toBeGreaterThanOrEqual(450);
    expect(sim.requests.map((q) => q.provider)).toEqual(['openai']);
    expect(sim.requests[0]?.aborted).toBe(false);
    expect(contentOf(r.body)).toContain('Echo: silent start');
    expect(r.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});

describe('slow first token', () => {
  it('commits the 200 with a keep-alive comment, then streams the answer to [DONE]', async () => {
    gw.simulator?.reset();
    gw.simulator?.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 600 }, { times: 1 });
    const r = await rawStream('gpt-4o-mini');
    expect(r.status).toBe(200);
    expect(r.firstByteMs).toBeLessThan(600);
    expect(r.body.startsWith(': modelmux waiting for the first token\n\n')).toBe(true);
    // The routing headers went out before routing ended: their content comes as a comment instead,
    // once, just before the first data chunk.
    expect(r.body).toMatch(/^(: modelmux waiting for the first token\n\n)+: x-modelmux-model=gpt-4o-mini; provider=openai; attempts=1\n\ndata: \{/);
    const text = r.body
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
      .join('');
    expect(text).toContain('Echo: slow start');
    expect(r.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('still falls back invisibly after the commit, and the SDK sees a normal stream', async () => {
    gw.simulator?.reset();
    gw.simulator?.setFault({ provider: 'openai' }, { kind: 'hang' });
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    let text = '';
    for await (const c of await client.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'fallback later' }],
    })) {
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(text).toContain('Echo: fallback later');
    expect(gw.simulator?.requests.map((q) => q.provider)).toEqual(['openai', 'gemini']);
  });

  it('names the model that answered after a fallback in an SSE comment before the first chunk', async () => {
    gw.simulator?.reset();
    gw.simulator?.setFault({ provider: 'openai' }, { kind: 'hang' });
    const r = await rawStream('gpt-4o-mini');
    expect(r.status).toBe(200);
    const comments = r.body.split('\n\n').filter((e) => e.startsWith(': x-modelmux-'));
    expect(comments).toEqual([': x-modelmux-model=gemini-2.0-flash; provider=gemini; attempts=2']);
    expect(r.body.indexOf(comments[0] ?? '')).toBeLessThan(r.body.indexOf('data: {'));
    expect(r.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('ends with an error event, not a silent cut, when every target fails after the commit', async () => {
    gw.simulator?.reset();
    for (const p of ['openai', 'gemini', 'anthropic'] as const) gw.simulator?.setFault({ provider: p }, { kind: 'hang' });
    const r = await rawStream('gpt-4o-mini');
    expect(r.status).toBe(200);
    const events = r.body.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]?.slice(6) ?? '{}')).toMatchObject({ error: { type: 'timeout_error', code: 'upstream_timeout' } });
    expect(r.body).not.toContain('[DONE]');
    expect(r.body).not.toContain('x-modelmux-model');
  });

  it('a client that leaves during the keep-alive phase: an answer that started anyway is stopped and billed as aborted', async () => {
    // Driven through the core as the edge drives it, because over HTTP the race cannot be steered:
    // routing finds its first token, but the client has gone before the edge reads that frame.
    const sim = gw.simulator;
    if (!sim) throw new Error('simulator expected');
    sim.reset();
    // The hangs above opened openai's breaker in this container.
    (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
    sim.setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 500 }, { times: 1 });
    sim.setChunkDelay(100); // first content ~600 ms after the upstream request, the whole answer ~1.4 s
    const { dispatch } = await import('../../functions/shared/app/dispatch');
    const { newRequestId } = await import('../../functions/shared/http/request-id');
    const controller = new AbortController();
    const now = Date.now();
    const requestId = newRequestId(now);
    const result = await dispatch({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'leaving early' }] }),
      signal: controller.signal,
      requestId,
      receivedAt: now,
    });
    expect(result.kind).toBe('stream');
    if (result.kind !== 'stream') return;
    const frames = result.frames[Symbol.asyncIterator]();
    expect((await frames.next()).value).toBe(': modelmux waiting for the first token\n\n');
    // Preamble, first content, and the next content event 100 ms later are out: routing has read the
    // first token (a loopback hop), and the upstream is still streaming.
    await vi.waitFor(() => expect(sim.requests[0]?.eventsSent).toBeGreaterThanOrEqual(3), { timeout: 3_000, interval: 5 });
    expect(sim.requests[0]?.completed).toBe(false);
    controller.abort(); // the client is gone; the edge stops reading and settles
    await frames.return?.(undefined);
    await result.after?.();

    await expect.poll(() => sim.requests[0]?.aborted, { timeout: 1_000, interval: 20 }).toBe(true);
    sim.setChunkDelay(0);
    const item = await pollLedgerEntry(gw.accountId, requestId);
    expect(item).toMatchObject({ servedModel: 'gpt-4o-mini', provider: 'openai', status: 'aborted', usageEstimated: true });
    expect(item?.completionTokens).toBeGreaterThan(0); // the first batch was produced, so it is billed
    expect(item?.promptTokens).toBeGreaterThan(0);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayResult, StreamResult } from '../../functions/shared/http/types';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry } from '../support/ledger';

/**
 * When chat-completions.ts commits its 200 (app/chat-completions.ts, app/chat-answer.ts), driven through
 * the real core (`dispatch`, as the edge calls it) against DynamoDB Local and the upstream simulator on
 * loopback, so the result can be read before any HTTP framing: a failure before the commit time rejects
 * with its own GatewayError (the edge gives it its status); after it, the result is already a 200 and
 * the failure can only be an error event (stream) or OpenAI's error object (buffered). Both clocks count
 * from the request's arrival (`receivedAt`), not from when routing began.
 */

/** Far above what a request takes here even on a loaded CI machine, so only a slow upstream crosses them. */
const STREAM_COMMIT_AFTER_MS = 1_000;
const BUFFERED_BUDGET_MS = 1_200;
/** An upstream this slow to answer is past either commit time. */
const LATE_MS = 1_700;
const KEEPALIVE = ': modelmux waiting for the first token\n\n';

let gw: RunningGateway;

beforeAll(async () => {
  process.env.STREAM_COMMIT_AFTER_MS = String(STREAM_COMMIT_AFTER_MS);
  process.env.BUFFERED_CHAT_BUDGET_MS = String(BUFFERED_BUDGET_MS);
  // A hanging attempt fails after 2.5 s (after either commit time); the defaults would take 8 s.
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({ stream: { headersMs: 2_500, firstTokenMs: 2_500, idleMs: 2_500 } });
  gw = await startGateway({ tablePrefix: `commit-${process.pid}`, devFreeTokens: 10_000_000 });
  // One answer first: a cold container writes its first hold before routing (no view of the account
  // yet), and that time counts against the commit clock too.
  const warm = await (await chat({ stream: false })).result;
  await warm.after?.();
});

afterAll(async () => {
  await gw?.close();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

beforeEach(async () => {
  sim().reset();
  sim().setChunkDelay(0);
  (await import('../../functions/shared/routing/circuit-breaker')).breaker.reset();
});

/** One chat request through the core; `arrivedMsAgo` moves its arrival into the past. */
async function chat(opts: { stream: boolean; arrivedMsAgo?: number }): Promise<{ requestId: string; result: Promise<GatewayResult> }> {
  const { dispatch } = await import('../../functions/shared/app/dispatch');
  const { newRequestId } = await import('../../functions/shared/http/request-id');
  const receivedAt = Date.now() - (opts.arrivedMsAgo ?? 0);
  const requestId = newRequestId(receivedAt);
  const result = dispatch({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream: opts.stream, messages: [{ role: 'user', content: 'commit test' }] }),
    signal: new AbortController().signal,
    requestId,
    receivedAt,
  });
  return { requestId, result };
}

function asStream(result: GatewayResult): StreamResult {
  if (result.kind !== 'stream') throw new Error(`expected a committed stream result, got ${result.kind} ${result.status}`);
  return result;
}

/** Every frame, then the result's settle (as the edge runs it after the last byte). */
async function drain(result: StreamResult): Promise<string> {
  let out = '';
  for await (const frame of result.frames) out += frame;
  await result.after?.();
  return out;
}

/** The first target hangs until its 2.5 s limit (past either commit time); every other target then refuses. */
function hangThenRefuse(): void {
  sim().setFault({ provider: 'openai', model: 'gpt-4o-mini' }, { kind: 'hang' }, { times: 1 });
  sim().setFault({}, { kind: 'status', status: 400 });
}

describe('streams (STREAM_COMMIT_AFTER_MS)', () => {
  it('a failure before the commit time rejects with its own status: nothing has been sent', async () => {
    sim().setFault({}, { kind: 'status', status: 400 });
    const { result } = await chat({ stream: true });
    await expect(result).rejects.toMatchObject({ status: 400 });
  });

  it('a first token within the commit time: the stream carries the routing headers and starts with data, no keep-alive', async () => {
    const { requestId, result } = await chat({ stream: true });
    const stream = asStream(await result);
    expect(stream.headers).toMatchObject({ 'x-modelmux-model': 'gpt-4o-mini', 'x-modelmux-provider': 'openai', 'x-modelmux-attempts': '1' });
    const body = await drain(stream);
    expect(body.startsWith('data: {')).toBe(true);
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await pollLedgerEntry(gw.accountId, requestId)).toMatchObject({ status: 'complete' });
  });

  it('a first token later than the commit time: 200 at the commit, a keep-alive at once, who answered as a comment, then the answer', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: LATE_MS }, { times: 1 });
    const started = Date.now();
    const { requestId, result } = await chat({ stream: true });
    const stream = asStream(await result);
    const committedAfter = Date.now() - started;
    expect(committedAfter).toBeGreaterThanOrEqual(STREAM_COMMIT_AFTER_MS - 20);
    expect(committedAfter).toBeLessThan(LATE_MS);
    expect(stream.status).toBe(200);
    expect(stream.headers).toEqual({});
    const frames = stream.frames[Symbol.asyncIterator]();
    expect((await frames.next()).value).toBe(KEEPALIVE);
    expect(sim().requests[0]?.completed).toBe(false); // the keep-alive went out while the upstream was still silent
    let rest = '';
    for (let f = await frames.next(); f.done !== true; f = await frames.next()) rest += f.value;
    await stream.after?.();
    expect(rest).toMatch(/^(: modelmux waiting for the first token\n\n)*: x-modelmux-model=gpt-4o-mini; provider=openai; attempts=1\n\ndata: \{/);
    expect(rest.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await pollLedgerEntry(gw.accountId, requestId)).toMatchObject({ status: 'complete', servedModel: 'gpt-4o-mini' });
  });

  it('the commit time counts from arrival: a request that arrived almost that long ago is committed before an answer that would have been in time', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 400 }, { times: 1 });
    const { result } = await chat({ stream: true, arrivedMsAgo: STREAM_COMMIT_AFTER_MS - 100 });
    const stream = asStream(await result);
    expect(stream.headers).toEqual({});
    const body = await drain(stream);
    expect(body.startsWith(KEEPALIVE)).toBe(true);
    expect(body).toContain(': x-modelmux-model=gpt-4o-mini; provider=openai; attempts=1\n\ndata: {');
  });

  it("a failure after the commit: an error event with the failure's own error, no [DONE], the hold released and nothing billed", async () => {
    hangThenRefuse();
    const { requestId, result } = await chat({ stream: true });
    const body = await drain(asStream(await result));
    expect(body.startsWith(KEEPALIVE)).toBe(true);
    const last = body.trimEnd().split('\n\n').at(-1) ?? '';
    expect(JSON.parse(last.replace(/^data: /, ''))).toMatchObject({ error: { type: 'server_error', code: 'upstream_unavailable' } });
    expect(body).not.toContain('[DONE]');
    expect(await pollLedgerEntry(gw.accountId, requestId, 20)).toBeUndefined();
  });
});

describe('buffered answers (BUFFERED_CHAT_BUDGET_MS)', () => {
  it('a failure within the budget rejects with its own status', async () => {
    sim().setFault({}, { kind: 'status', status: 400 });
    const { result } = await chat({ stream: false });
    await expect(result).rejects.toMatchObject({ status: 400 });
  });

  it('an answer within the budget is plain JSON with the routing headers', async () => {
    const { result } = await chat({ stream: false });
    const answer = await result;
    expect(answer).toMatchObject({ kind: 'json', status: 200, headers: { 'x-modelmux-model': 'gpt-4o-mini' }, body: { object: 'chat.completion' } });
    await answer.after?.();
  });

  it('an answer later than the budget: 200 application/json at the budget, a whitespace beat, then the completion, billed', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: LATE_MS }, { times: 1 });
    const started = Date.now();
    const { requestId, result } = await chat({ stream: false });
    const held = asStream(await result);
    expect(Date.now() - started).toBeGreaterThanOrEqual(BUFFERED_BUDGET_MS - 20);
    expect(held).toMatchObject({ status: 200, headers: { 'content-type': 'application/json' } });
    expect(held.headers).not.toHaveProperty('x-modelmux-model');
    const body = await drain(held);
    expect(body.startsWith('\n')).toBe(true);
    expect(JSON.parse(body)).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ message: { role: 'assistant' } }] });
    expect(await pollLedgerEntry(gw.accountId, requestId)).toMatchObject({ status: 'complete' });
  });

  it('the budget counts from arrival: a request that arrived almost that long ago is held past an answer that would have been in time', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 400 }, { times: 1 });
    const { result } = await chat({ stream: false, arrivedMsAgo: BUFFERED_BUDGET_MS - 100 });
    const body = await drain(asStream(await result));
    expect(body.startsWith('\n')).toBe(true);
    expect(JSON.parse(body)).toMatchObject({ object: 'chat.completion' });
  });

  it("a failure after the budget: the 200 is out, so the body is OpenAI's error object; the hold is released", async () => {
    hangThenRefuse();
    const { requestId, result } = await chat({ stream: false });
    const body = await drain(asStream(await result));
    expect(body.startsWith('\n')).toBe(true);
    expect(JSON.parse(body)).toMatchObject({ error: { type: 'server_error', code: 'upstream_unavailable' } });
    expect(await pollLedgerEntry(gw.accountId, requestId, 20)).toBeUndefined();
  });
});

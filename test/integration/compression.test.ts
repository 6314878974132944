import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { constants, gunzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * gzip at the origin (functions/shared/edge/response-encoding.ts), end to end through the Function
 * URL stand-in: the openai SDK (fetch, which sends Accept-Encoding and decodes gzip as it arrives)
 * gets the same answers as with identity; on the socket, a gzip stream delivers every SSE event as it
 * is produced (a sync flush per event, no batching), and ends with a complete gzip member even when
 * the upstream fails mid-stream; clients that do not ask for gzip get identity.
 */

let gw: RunningGateway;
let gzipClient: OpenAI;
let identityClient: OpenAI;

beforeAll(async () => {
  // Commit a stream with no first token after 300 ms (keep-alive comments follow; the default is 10 s).
  process.env.STREAM_COMMIT_AFTER_MS = '300';
  gw = await startGateway({ tablePrefix: `gzip-${process.pid}`, devFreeTokens: 50_000_000, simulator: { replyWords: 300 } });
  gzipClient = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
  identityClient = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0, defaultHeaders: { 'accept-encoding': 'identity' } });
});

afterAll(async () => {
  delete process.env.STREAM_COMMIT_AFTER_MS;
  await gw?.close();
});

/** One socket read of the response body, with its arrival time (performance.now()). */
interface Arrival {
  at: number;
  bytes: Buffer;
}

/** A POST over node:http, which neither sends Accept-Encoding nor decodes: the body as it came off the socket. */
function rawPost(
  path: string,
  body: unknown,
  acceptEncoding?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; arrivals: Arrival[]; raw: Buffer }> {
  const url = new URL(`${gw.baseUrl}/${path}`);
  const headers: Record<string, string> = { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' };
  if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      const arrivals: Arrival[] = [];
      res.on('data', (bytes: Buffer) => arrivals.push({ at: performance.now(), bytes }));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, arrivals, raw: Buffer.concat(arrivals.map((a) => a.bytes)) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** What a gzip prefix decodes to so far (a sync-flushed prefix decodes whole; no trailer needed). */
const decodedPrefix = (bytes: Buffer): string => gunzipSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');

/** The SSE events (blank-line terminated) in `text`, complete ones only. */
const events = (text: string): string[] => text.split('\n\n').slice(0, -1);
const contentEvents = (text: string): string[] => events(text).filter((e) => /"delta":\{[^}]*"content":"[^"]/.test(e));
const contentOf = (text: string): string =>
  contentEvents(text)
    .map((e) => (JSON.parse(e.slice('data: '.length)) as { choices: Array<{ delta: { content: string } }> }).choices[0]?.delta.content ?? '')
    .join('');

const chat = (content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});

describe('streamed chat', () => {
  it('through the openai SDK, gzip (as the SDK asks by default) delivers the same content as identity', async () => {
    const messages = [{ role: 'user' as const, content: 'compress this stream' }];
    const { data: stream, response } = await gzipClient.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true }).withResponse();
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('vary')).toBe('accept-encoding');
    let gzipped = '';
    for await (const chunk of stream) gzipped += chunk.choices[0]?.delta.content ?? '';
    const { data: plainStream, response: plainResponse } = await identityClient.chat.completions
      .create({ model: 'gpt-4o-mini', messages, stream: true })
      .withResponse();
    expect(plainResponse.headers.get('content-encoding')).toBeNull();
    let plain = '';
    for await (const chunk of plainStream) plain += chunk.choices[0]?.delta.content ?? '';
    expect(gzipped.length).toBeGreaterThan(200);
    expect(gzipped).toBe(plain);
  });

  it('on the socket: one complete gzip member, each event decodable as it arrives, never batched with the next', async () => {
    const gapMs = 250;
    gw.simulator?.setChunkDelay(gapMs);
    try {
      const res = await rawPost('chat/completions', chat('pace me', { stream: true, max_tokens: 6 }), 'br, gzip, deflate');
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe('gzip');
      // The whole body is one finished member (gunzipSync without finishFlush throws on a truncated one).
      const whole = gunzipSync(res.raw).toString('utf8');
      expect(whole.endsWith('data: [DONE]\n\n')).toBe(true);
      // Replay the reads: after each one, how many content events does the prefix decode to?
      const decodableAt: number[] = [];
      let prefix = Buffer.alloc(0);
      for (const a of res.arrivals) {
        prefix = Buffer.concat([prefix, a.bytes]);
        const n = contentEvents(decodedPrefix(prefix)).length;
        while (decodableAt.length < n) decodableAt.push(a.at);
      }
      expect(decodableAt.length).toBeGreaterThanOrEqual(4);
      // Each content event could be read at once: the next one, sent gapMs later by the simulator, came
      // in a later read. A gateway that buffered or batched the gzip would deliver them together.
      for (let i = 1; i < decodableAt.length; i++) expect((decodableAt[i] ?? 0) - (decodableAt[i - 1] ?? 0)).toBeGreaterThan(gapMs / 2);
      expect(contentOf(whole)).toBe(contentOf(decodedPrefix(res.raw)));
    } finally {
      gw.simulator?.setChunkDelay(0);
    }
  });

  it('a Responses API stream is gzip as well, and the SDK reads it to response.completed', async () => {
    const { data: stream, response } = await gzipClient.responses
      .create({ model: 'gpt-4o-mini', input: 'respond, compressed', stream: true, store: false })
      .withResponse();
    expect(response.headers.get('content-encoding')).toBe('gzip');
    let text = '';
    let completed = false;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = true;
    }
    expect(completed).toBe(true);
    expect(text).toMatch(/^Echo: respond, compressed/);
  });

  it.each([
    ['no Accept-Encoding (curl without --compressed)', undefined],
    ['identity', 'identity'],
    ['gzip;q=0', 'gzip;q=0, deflate'],
    ['br only', 'br'],
  ])('identity for %s', async (_name, acceptEncoding) => {
    const res = await rawPost('chat/completions', chat('plain please', { stream: true }), acceptEncoding);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.vary).toBe('accept-encoding');
    const text = res.raw.toString('utf8');
    expect(text.startsWith('data: {')).toBe(true);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('an upstream that fails after the first token: the error event is the last thing in a complete gzip member', async () => {
    gw.simulator?.setFault({ model: 'gpt-4o-mini' }, { kind: 'reset-after-chunks', chunks: 3 }, { times: 1 });
    const res = await rawPost('chat/completions', chat('fail me midway', { stream: true }), 'gzip');
    expect(res.headers['content-encoding']).toBe('gzip');
    const text = gunzipSync(res.raw).toString('utf8');
    const last = events(text).at(-1) ?? '';
    expect(JSON.parse(last.slice('data: '.length))).toMatchObject({ error: { message: expect.stringMatching(/failed mid-stream/) } });
    expect(contentEvents(text).length).toBeGreaterThan(0);
    expect(text).not.toContain('[DONE]');
  });

  it('a stream committed before its first token: the keep-alive comment is decodable before the answer', async () => {
    gw.simulator?.setFault({ model: 'gpt-4o-mini' }, { kind: 'slow-headers', delayMs: 900 }, { times: 1 });
    const res = await rawPost('chat/completions', chat('slow first token', { stream: true }), 'gzip');
    expect(res.headers['content-encoding']).toBe('gzip');
    const first = res.arrivals[0];
    expect(decodedPrefix(first?.bytes ?? Buffer.alloc(0))).toMatch(/^: modelmux waiting for the first token\n\n$/);
    const text = gunzipSync(res.raw).toString('utf8');
    expect(contentEvents(text).length).toBeGreaterThan(0);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    // The comment came well before the first content event (the upstream's headers took 900 ms).
    const firstContent = res.arrivals.findIndex(
      (_, i) => contentEvents(decodedPrefix(Buffer.concat(res.arrivals.slice(0, i + 1).map((a) => a.bytes)))).length > 0,
    );
    expect((res.arrivals[firstContent]?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThan(300);
  });
});

describe('buffered answers', () => {
  it('a chat.completion of 1 KB or more is gzip; the SDK reads the same answer as with identity', async () => {
    const raw = await rawPost('chat/completions', chat('a long buffered answer'), 'gzip, deflate');
    expect(raw.headers['content-encoding']).toBe('gzip');
    const decoded = gunzipSync(raw.raw);
    expect(decoded.length).toBeGreaterThanOrEqual(1024);
    expect(raw.raw.length).toBeLessThan(decoded.length / 2);
    expect(JSON.parse(decoded.toString('utf8'))).toMatchObject({ object: 'chat.completion' });

    const { data, response } = await gzipClient.chat.completions.create(chat('same answer') as never).withResponse();
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const plain = await identityClient.chat.completions.create(chat('same answer') as never);
    expect((data as OpenAI.ChatCompletion).choices[0]?.message.content).toBe(plain.choices[0]?.message.content);
  });

  it('an answer under 1 KB stays identity even when gzip is accepted', async () => {
    const raw = await rawPost('chat/completions', chat('short', { max_tokens: 3 }), 'gzip');
    expect(raw.raw.length).toBeLessThan(1024);
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.headers.vary).toBe('accept-encoding');
    expect(JSON.parse(raw.raw.toString('utf8'))).toMatchObject({ object: 'chat.completion' });
  });

  it('embeddings (the buffered Function URL, base64 on the Lambda side) are gzip, and the SDK gets the same vectors', async () => {
    const body = { model: 'text-embedding-3-small', input: ['compress the floats', 'and these'], encoding_format: 'float' };
    const raw = await rawPost('embeddings', body, 'gzip');
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    const decoded = gunzipSync(raw.raw).toString('utf8');
    expect(raw.raw.length).toBeLessThan(decoded.length / 1.8);
    const parsed = JSON.parse(decoded) as { data: Array<{ embedding: number[] }> };
    expect(parsed.data).toHaveLength(2);

    const { data, response } = await gzipClient.embeddings.create(body as OpenAI.EmbeddingCreateParams).withResponse();
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const plain = await identityClient.embeddings.create(body as OpenAI.EmbeddingCreateParams);
    expect(data.data.map((d) => d.embedding)).toEqual(plain.data.map((d) => d.embedding));
    expect(data.data[0]?.embedding).toEqual(parsed.data[0]?.embedding);

    const identity = await rawPost('embeddings', body);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.raw.toString('utf8')).toBe(decoded);
  });
});

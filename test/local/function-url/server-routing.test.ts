import { afterEach, describe, expect, it } from 'vitest';
import { createFunctionUrlServer, streamifyResponse } from '../../../local/function-url/index.js';
import { startServer, type TestServer } from './helpers.js';

let running: TestServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const named = (name: string) => async () => ({ statusCode: 200, body: name });

describe('createFunctionUrlServer routing', () => {
  it('routes by path to the first matching function', async () => {
    running = await startServer([
      { match: (p) => p === '/v1/embeddings', handler: named('embeddings'), invokeMode: 'BUFFERED', functionName: 'e' },
      { match: (p) => p.startsWith('/v1/'), handler: named('catch-v1'), invokeMode: 'BUFFERED', functionName: 'c' },
    ]);

    expect(await (await fetch(`${running.url}/v1/embeddings?x=1`)).text()).toBe('embeddings');
    expect(await (await fetch(`${running.url}/v1/chat/completions`)).text()).toBe('catch-v1');
  });

  it('answers an OpenAI-shaped 404 for a path no route claims', async () => {
    running = await startServer([
      { match: (p) => p === '/v1/embeddings', handler: named('embeddings'), invokeMode: 'BUFFERED', functionName: 'e' },
    ]);

    const res = await fetch(`${running.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: { message: 'Unknown path', type: 'invalid_request_error', param: null, code: null },
    });
  });

  it('sends unmatched paths to the first route flagged default, like a one-function URL', async () => {
    running = await startServer([
      { match: (p) => p === '/v1/embeddings', handler: named('embeddings'), invokeMode: 'BUFFERED', functionName: 'e' },
      { match: () => false, handler: named('fallback'), invokeMode: 'BUFFERED', functionName: 'f', default: true },
    ]);

    expect(await (await fetch(`${running.url}/anything`)).text()).toBe('fallback');
  });

  it('refuses a handler whose kind does not match the invoke mode', () => {
    const streaming = streamifyResponse(async () => undefined);
    expect(() =>
      createFunctionUrlServer([{ match: () => true, handler: named('x'), invokeMode: 'RESPONSE_STREAM', functionName: 'a' }]),
    ).toThrow(TypeError);
    expect(() =>
      createFunctionUrlServer([{ match: () => true, handler: streaming, invokeMode: 'BUFFERED', functionName: 'b' }]),
    ).toThrow(TypeError);
    expect(() =>
      createFunctionUrlServer([
        { match: () => true, handler: named('x'), invokeMode: 'BUFFERED', functionName: 'c', timeoutMs: 901_000 },
      ]),
    ).toThrow(RangeError);
  });
});

describe('HTTP errors raised by Node before any route (issue 21)', () => {
  /** Sends raw bytes and reads the whole answer (the server closes the connection). */
  async function raw(url: string, bytes: string): Promise<{ status: number; body: any }> {
    const { connect } = await import('node:net');
    const { port } = new URL(url);
    const text = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('error', reject);
    });
    const [head = '', body = ''] = text.split('\r\n\r\n');
    return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
  }

  it('headers over the limit get 431 and bad framing 400, each with an OpenAI error body', async () => {
    running = await startServer([{ match: () => true, handler: named('never'), invokeMode: 'BUFFERED', functionName: 'n' }]);
    const big = await raw(running.url, `GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expect(big).toEqual({ status: 431, body: { error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'request_headers_too_large' } } });
    const framing = await raw(running.url, 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n');
    expect(framing).toEqual({ status: 400, body: { error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'invalid_http_request' } } });
  });
});

import { describe, expect, it } from 'vitest';
import {
  HTTP_INTEGRATION_CONTENT_TYPE,
  HttpResponseStream,
  type ResponseStream,
  streamifyResponse,
} from '../../../local/function-url/index.js';
import { deferred, serveEachTest, sleep } from './helpers.js';

const serve = serveEachTest('RESPONSE_STREAM', 'stream-toy');

const decoder = new TextDecoder();

describe('RESPONSE_STREAM invocation', () => {
  it('sends the prelude status and headers, then each chunk before the handler writes the next', async () => {
    const gate = deferred();
    const order: string[] = [];
    const handler = streamifyResponse(async (_event: unknown, responseStream: ResponseStream) => {
      const stream = HttpResponseStream.from(responseStream, {
        statusCode: 201,
        headers: { 'content-type': 'text/event-stream', 'x-a': 'b' },
      });
      stream.write('data: one\n\n');
      order.push('handler wrote 1');
      await gate.promise; // released by the test only once it has READ chunk 1
      await sleep(50);
      stream.write('data: two\n\n');
      order.push('handler wrote 2');
      await sleep(50);
      stream.write('data: three\n\n');
      order.push('handler wrote 3');
      stream.end();
    });
    const server = await serve(handler);
    const recorded = server.nextRecord();

    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('x-a')).toBe('b');
    expect(res.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);

    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(decoder.decode(first.value)).toBe('data: one\n\n');
    order.push('client read 1');
    gate.resolve();

    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += decoder.decode(part.value);
    expect(rest).toBe('data: two\n\ndata: three\n\n');
    expect(order).toEqual(['handler wrote 1', 'client read 1', 'handler wrote 2', 'handler wrote 3']);
    expect((await recorded).outcome).toBe('success');
    expect(server.logs).toEqual([]);
  });

  it('holds the handler back while the client is not reading, instead of buffering the response', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const total = 48 * 1024 * 1024;
    let written = 0;
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      while (written < total) {
        written += chunk.length;
        if (!stream.write(chunk)) await new Promise((resolve) => stream.once('drain', resolve));
      }
      stream.end();
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    const reader = res.body!.getReader();
    await sleep(200); // the client reads nothing: only socket and stream buffers can fill up
    const writtenWhilePaused = written;
    let received = 0;
    for (let part = await reader.read(); !part.done; part = await reader.read()) received += part.value.length;
    expect(writtenWhilePaused).toBeLessThan(total / 2);
    expect(received).toBe(total);
  });

  it('parses a prelude written one byte at a time, the NUL delimiter split across writes', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"statusCode":202,"headers":{"x-b":"c"},"cookies":["k=v; Path=/","k2=v2"]}'),
      Buffer.alloc(8),
      Buffer.from('body after prelude'),
    ]);
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
      for (const byte of bytes) stream.write(Buffer.of(byte));
      stream.end();
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.status).toBe(202);
    expect(res.headers.get('x-b')).toBe('c');
    expect(res.headers.getSetCookie()).toEqual(['k=v; Path=/', 'k2=v2']);
    expect(await res.text()).toBe('body after prelude');
  });

  it('parses a prelude whose delimiter arrives 3 + 5 bytes, in separate ticks, with the body in the second write', async () => {
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
      stream.write('{"statusCode":20');
      await sleep(5);
      stream.write(Buffer.concat([Buffer.from('3}'), Buffer.alloc(3)]));
      await sleep(5);
      stream.write(Buffer.concat([Buffer.alloc(5), Buffer.from('tail')]));
      stream.end();
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.status).toBe(203);
    expect(await res.text()).toBe('tail');
  });

  it('answers 200 application/octet-stream when the handler never calls HttpResponseStream.from', async () => {
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      stream.write('raw');
      stream.end();
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(await res.text()).toBe('raw');
  });

  it('uses the content type set with setContentType, and refuses to change it after the first write', async () => {
    const afterWrite = deferred<string>();
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      stream.setContentType('text/plain');
      stream.write({ json: true }); // the runtime JSON-stringifies non-buffer chunks
      try {
        stream.setContentType('text/html');
      } catch (error) {
        afterWrite.resolve(error instanceof Error ? `${error.name}: ${error.message}` : 'not an Error');
      }
      stream.end();
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('{"json":true}');
    expect(await afterWrite.promise).toBe('InvalidStreamingOperation: Cannot set content-type, too late.');
  });

  it('answers 502 when from() is followed by end(chunk) without a write, as the runtime skips the prelude', async () => {
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      HttpResponseStream.from(stream, { statusCode: 404, headers: { 'x-custom': '1' } }).end('Not Found');
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ Message: 'Internal Server Error' });
  });

  it('answers 200 without the custom headers when from() is followed by a bare end()', async () => {
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      HttpResponseStream.from(stream, { statusCode: 404, headers: { 'x-custom': '1' } }).end();
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-custom')).toBeNull();
    expect(await res.text()).toBe('');
  });

  it('answers 502 {"Message":"Internal Server Error"} when the handler throws before any byte', async () => {
    const handler = streamifyResponse(async () => {
      throw new Error('boom');
    });
    const server = await serve(handler);
    const recorded = server.nextRecord();

    const res = await fetch(server.url);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ Message: 'Internal Server Error' });
    const record = await recorded;
    expect(record.outcome).toBe('function-error');
    expect(record.error).toBe('Error: boom');
    expect(server.logs.some((line) => line.includes('Invoke Error Error: boom'))).toBe(true);
  });

  it('cuts the connection when the handler throws after bytes were sent (never a clean end)', async () => {
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      HttpResponseStream.from(stream, { statusCode: 200, headers: { 'content-type': 'text/event-stream' } });
      stream.write('data: partial\n\n');
      await sleep(20);
      throw new Error('upstream died');
    });
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('answers 502 for a handler that does not return a promise', async () => {
    const handler = streamifyResponse((_event: unknown, _stream: ResponseStream) => 'not a promise');
    const server = await serve(handler);
    const recorded = server.nextRecord();

    expect((await fetch(server.url)).status).toBe(502);
    expect((await recorded).error).toBe('Error: Streaming does not support non-async handlers.');
  });

  it('keeps the connection open until the timeout when the handler resolves without ending the stream', async () => {
    const handler = streamifyResponse(async () => undefined);
    const server = await serve(handler, 150);
    const recorded = server.nextRecord();

    const res = await fetch(server.url);
    expect(res.status).toBe(502);
    const record = await recorded;
    expect(record.outcome).toBe('timeout');
    expect(record.durationMs).toBeGreaterThanOrEqual(140);
    expect(server.logs.some((line) => line.includes('Task timed out after 0.15 seconds'))).toBe(true);
    expect(server.logs.some((line) => line.includes('without ending its response stream'))).toBe(true);
  });

  it('ends the client response at stream end while the handler keeps running (e.g. billing after end())', async () => {
    const settle = deferred();
    const handler = streamifyResponse(async (_event: unknown, stream: ResponseStream) => {
      stream.write('done');
      stream.end();
      await settle.promise; // work after end(): the client must not wait for it
    });
    const server = await serve(handler);
    const recorded = server.nextRecord();

    const res = await fetch(server.url);
    expect(await res.text()).toBe('done');
    settle.resolve();
    expect((await recorded).outcome).toBe('success');
  });

  it('imports a handler module that calls awslambda.streamifyResponse at load time', async () => {
    const { installAwslambdaGlobals, isStreamingHandler, streamingHighWaterMark } = await import(
      '../../../local/function-url/index.js'
    );
    const installed = installAwslambdaGlobals();
    expect(installAwslambdaGlobals()).toBe(installed); // idempotent
    const { handler } = await import('./fixtures/streaming-toy-handler.js');
    expect(isStreamingHandler(handler)).toBe(true);
    expect(streamingHighWaterMark(handler)).toBe(1024);
    const { url } = await serve(handler);

    const res = await fetch(url);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('from a module');
  });
});

import { request as httpRequest, Agent, type IncomingHttpHeaders } from 'node:http';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { serveEachTest } from './helpers.js';

const serve = serveEachTest('BUFFERED', 'buffered-toy');

/** Serves a handler that records the event and context it got and answers 204. */
async function captureEvent(): Promise<{ url: string; seen: () => { event: LambdaFunctionURLEvent; context: Context } }> {
  let captured: { event: LambdaFunctionURLEvent; context: Context } | undefined;
  const { url } = await serve(async (event: LambdaFunctionURLEvent, context: Context) => {
    captured = { event, context };
    return { statusCode: 204 };
  });
  return {
    url,
    seen: () => {
      if (captured === undefined) throw new Error('handler was not called');
      return captured;
    },
  };
}

/** node:http request with exact control of repeated headers. Resolves status, headers, body. */
function rawRequest(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer | string; agent?: Agent },
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer; reusedSocket: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: options.method ?? 'GET', headers: options.headers, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), reusedSocket: req.reusedSocket }),
      );
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('BUFFERED invocation: response inference (payload format 2.0)', () => {
  it('uses statusCode, headers, cookies and body of a structured result', async () => {
    const { url } = await serve(async () => ({
      statusCode: 201,
      headers: { 'Content-Type': 'application/json', 'My-Custom-Header': 'Custom Value' },
      cookies: ['Cookie_1=Value1; Max-Age=60', 'Cookie_2=Value2'],
      body: '{"message":"Hello, world!"}',
    }));

    const res = await fetch(url);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('my-custom-header')).toBe('Custom Value');
    expect(res.headers.getSetCookie()).toEqual(['Cookie_1=Value1; Max-Age=60', 'Cookie_2=Value2']);
    expect(await res.text()).toBe('{"message":"Hello, world!"}');
  });

  it('answers 200 application/json with JSON.stringify(result) for a plain object', async () => {
    const { url } = await serve(async () => ({ message: 'Hello, world!' }));

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.text()).toBe('{"message":"Hello, world!"}');
  });

  it('keeps the quotes of a string result, like the doc example (15 bytes)', async () => {
    const { url } = await serve(async () => 'Hello, world!');

    const res = await fetch(url);
    expect(res.headers.get('content-length')).toBe('15');
    expect(await res.text()).toBe('"Hello, world!"');
  });

  it('decodes a base64 body when isBase64Encoded is true', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const { url } = await serve(async () => ({
      statusCode: 200,
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes.toString('base64'),
      isBase64Encoded: true,
    }));

    const res = await fetch(url);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
  });

  it('supports callback-style handlers', async () => {
    const { url } = await serve((_event: unknown, _context: unknown, callback: (error: null, result: unknown) => void) => {
      setTimeout(() => callback(null, { statusCode: 202, body: 'called back' }), 5);
    });

    const res = await fetch(url);
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('called back');
  });
});

describe('BUFFERED invocation: the v2.0 request event', () => {
  it('passes text bodies as text and binary (or untyped, or form) bodies as base64', async () => {
    const { url, seen } = await captureEvent();
    const cases: Array<{ type: string | undefined; base64: boolean }> = [
      { type: 'application/json; charset=utf-8', base64: false },
      { type: 'text/plain', base64: false },
      { type: 'application/octet-stream', base64: true },
      { type: 'application/x-www-form-urlencoded', base64: true },
      { type: undefined, base64: true },
    ];
    for (const { type, base64 } of cases) {
      const body = Buffer.from('{"k":"v"}');
      await rawRequest(url, '/', { method: 'POST', body, headers: type === undefined ? {} : { 'content-type': type } });
      const { event } = seen();
      expect({ type, isBase64Encoded: event.isBase64Encoded }).toEqual({ type, isBase64Encoded: base64 });
      expect(event.body).toBe(base64 ? body.toString('base64') : '{"k":"v"}');
    }
  });

  it('lower-cases header names, joins repeated headers with commas, and lists cookies', async () => {
    const { url, seen } = await captureEvent();
    await rawRequest(url, '/v1/models', {
      headers: { 'X-Dup': ['a', 'b'], 'User-Agent': 'toy/1.0', Cookie: 'c1=1; c2=2' },
    });

    const { event } = seen();
    expect(event.headers['x-dup']).toBe('a,b');
    expect(event.headers['user-agent']).toBe('toy/1.0');
    expect(event.headers['cookie']).toBe('c1=1; c2=2');
    expect(event.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(event.cookies).toEqual(['c1=1', 'c2=2']);
    expect(event.body).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
  });

  it('keeps rawQueryString raw, decodes queryStringParameters and joins repeated keys', async () => {
    const { url, seen } = await captureEvent();
    await rawRequest(url, '/v1/models?a=1&a=2&b=x%20y', {});

    const { event } = seen();
    expect(event.rawPath).toBe('/v1/models');
    expect(event.rawQueryString).toBe('a=1&a=2&b=x%20y');
    expect(event.queryStringParameters).toEqual({ a: '1,2', b: 'x y' });

    await rawRequest(url, '/v1/models', {});
    expect(seen().event.queryStringParameters).toBeUndefined();
    expect(seen().event.rawQueryString).toBe('');
  });

  it('fills requestContext and context like a Function URL with auth type NONE', async () => {
    const { url, seen } = await captureEvent();
    const res = await rawRequest(url, '/v1/embeddings', { method: 'POST', headers: { 'User-Agent': 'ua' }, body: '{}' });

    const { event, context } = seen();
    expect(event).toMatchObject({ version: '2.0', routeKey: '$default' });
    expect(event.requestContext).toMatchObject({
      accountId: 'anonymous',
      routeKey: '$default',
      stage: '$default',
      http: { method: 'POST', path: '/v1/embeddings', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'ua' },
    });
    expect(event.requestContext.domainName).toBe(`${event.requestContext.apiId}.lambda-url.us-east-1.on.aws`);
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(5_000);
    expect(context.awsRequestId).toBe(event.requestContext.requestId);
    expect(res.headers['x-amzn-requestid']).toBe(context.awsRequestId);
    expect(context.functionName).toBe('buffered-toy');
    expect(context.memoryLimitInMB).toBe('128');
    expect(context.invokedFunctionArn).toBe('arn:aws:lambda:us-east-1:000000000000:function:buffered-toy');
    expect(context.callbackWaitsForEmptyEventLoop).toBe(true);
  });

  it('counts getRemainingTimeInMillis down from the configured timeout', async () => {
    const remaining: number[] = [];
    const { url } = await serve(async (_event: unknown, context: Context) => {
      remaining.push(context.getRemainingTimeInMillis());
      await new Promise((r) => setTimeout(r, 30));
      remaining.push(context.getRemainingTimeInMillis());
      return 'ok';
    }, 2_000);

    await fetch(url);
    const [first, second] = remaining;
    expect(first).toBeLessThanOrEqual(2_000);
    expect(first).toBeGreaterThan(1_900);
    expect((first ?? 0) - (second ?? 0)).toBeGreaterThanOrEqual(25);
  });
});

describe('BUFFERED invocation: limits and errors', () => {
  it.each([
    ['a body over 6 MB', 'application/json', Buffer.alloc(6_291_457, 0x61)],
    ['a binary body under 6 MB that grows past it as base64 in the event', 'application/octet-stream', Buffer.alloc(5_000_000, 1)],
  ])('answers 413 before running the function for %s', async (_what, contentType, body) => {
    let calls = 0;
    const { url } = await serve(async () => {
      calls += 1;
      return 'ran';
    });

    const res = await rawRequest(url, '/', { method: 'POST', headers: { 'content-type': contentType }, body });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString())).toEqual({
      Message: 'Request must be smaller than 6291456 bytes for the InvokeFunction operation',
    });
    expect(calls).toBe(0);
  });

  it('answers 502 {"Message":"Internal Server Error"} when the handler throws', async () => {
    const server = await serve(async () => {
      throw new TypeError('bad');
    });
    const recorded = server.nextRecord();

    const res = await fetch(server.url);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ Message: 'Internal Server Error' });
    expect((await recorded).error).toBe('TypeError: bad');
  });

  it('answers 502 when the function times out', async () => {
    const server = await serve(() => new Promise(() => undefined), 100);

    const res = await fetch(server.url);
    expect(res.status).toBe(502);
    expect(server.logs.some((line) => line.includes('Task timed out after 0.10 seconds'))).toBe(true);
  });

  it('answers 502 when the response payload is over 6 MB', async () => {
    const { url } = await serve(async () => ({ statusCode: 200, body: 'x'.repeat(6_300_000) }));

    expect((await fetch(url)).status).toBe(502);
  });

  it('keeps connections alive between requests', async () => {
    const { url } = await serve(async () => 'ok');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });

    const first = await rawRequest(url, '/', { agent });
    const second = await rawRequest(url, '/', { agent });
    agent.destroy();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.reusedSocket).toBe(true);
  });
});

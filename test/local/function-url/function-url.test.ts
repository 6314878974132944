import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createFunctionUrlServer, installAwslambdaGlobals, listen, type FunctionUrlRoute, type InvocationRecord } from '../../../local/function-url';

/**
 * The Function URL stand-in, for what the runtime test (test/lib/lambda-runtime.test.ts, the real
 * `aws-lambda-ric`) cannot see: the 6 MB limit, the streaming http-integration prelude, the origin
 * headers the service adds, buffered vs streaming invoke and the service's own 502. Real HTTP on loopback.
 */

type Stream = awslambda.HttpResponseStream;
let running: { url: string; close: () => Promise<void>; records: InvocationRecord[]; logs: string[] } | undefined;

beforeAll(() => installAwslambdaGlobals());
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function serve(route: Omit<FunctionUrlRoute, 'match' | 'functionName'>) {
  const records: InvocationRecord[] = [];
  const logs: string[] = [];
  const server = createFunctionUrlServer([{ match: (p) => p !== '/nowhere', functionName: 'toy', ...route }], {
    log: (l) => logs.push(l),
    onInvocation: (r) => records.push(r),
  });
  running = { ...(await listen(server)), records, logs };
  return running;
}
const streaming = (fn: (event: APIGatewayProxyEventV2, stream: Stream) => Promise<void>) =>
  serve({ invokeMode: 'RESPONSE_STREAM', handler: awslambda.streamifyResponse(fn) });
const buffered = (fn: (event: APIGatewayProxyEventV2) => Promise<unknown>, timeoutMs?: number) =>
  serve({ invokeMode: 'BUFFERED', handler: fn, ...(timeoutMs ? { timeoutMs } : {}) });
const INTERNAL_ERROR = { Message: 'Internal Server Error' };

describe('the payload-2.0 event and the 6 MB limit', () => {
  it('gives the function the event with the origin headers the service adds, text bodies as text and others as base64', async () => {
    const seen: APIGatewayProxyEventV2[] = [];
    const s = await buffered(async (event) => (seen.push(event), { statusCode: 204 }));
    await fetch(`${s.url}/v1/x?a=1&a=2&b=%20`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'c1=v; c2=w', 'x-forwarded-for': '203.0.113.9' },
      body: '{"é":1}',
    });
    await fetch(`${s.url}/bin`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 255]) });
    const [json, bin] = seen;
    expect(json).toMatchObject({
      version: '2.0',
      rawPath: '/v1/x',
      rawQueryString: 'a=1&a=2&b=%20',
      queryStringParameters: { a: '1,2', b: ' ' },
      cookies: ['c1=v', 'c2=w'],
      body: '{"é":1}',
      isBase64Encoded: false,
    });
    expect(json?.headers).toMatchObject({
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-port': new URL(s.url).port,
      cookie: 'c1=v; c2=w',
    });
    expect(json?.requestContext).toMatchObject({
      http: { method: 'POST', path: '/v1/x', sourceIp: '127.0.0.1' },
      stage: '$default',
      domainName: expect.stringMatching(/^[0-9a-f]{32}\.lambda-url\.us-east-1\.on\.aws$/),
    });
    expect(json?.requestContext.time).toMatch(/^\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000$/);
    expect(bin).toMatchObject({ body: 'AP8=', isBase64Encoded: true });
    expect(bin).not.toHaveProperty('queryStringParameters');
  });

  it("answers 413 with Lambda's message for a payload over 6 MiB, without running the function; 6 MiB less the event fits", async () => {
    let calls = 0;
    const s = await buffered(async () => (calls++, 'ok'));
    const over = await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(6_291_457) });
    expect([over.status, await over.json()]).toEqual([413, { Message: 'Request must be smaller than 6291456 bytes for the InvokeFunction operation' }]);
    // base64 grows 4/3: 4.5 MiB of bytes is a 6 MiB event, and refused too; 4 MiB is not.
    expect((await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(4_718_592) })).status).toBe(413);
    expect((await fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(4_194_304) })).status).toBe(200);
    expect(calls).toBe(1);
  });
});

describe('BUFFERED invoke', () => {
  it('turns the return value into the response: structured (status, headers, cookies, base64 body) or plain JSON', async () => {
    const s = await buffered(async (e) =>
      e.rawPath === '/plain'
        ? 'Hello, world!'
        : { statusCode: 201, headers: { 'X-A': 'b' }, cookies: ['k=v', 'l=w'], body: Buffer.from('hé').toString('base64'), isBase64Encoded: true },
    );
    const res = await fetch(s.url);
    expect([res.status, res.headers.get('x-a'), res.headers.getSetCookie(), await res.text()]).toEqual([201, 'b', ['k=v', 'l=w'], 'hé']);
    expect(res.headers.get('x-amzn-requestid')).toBe(s.records[0]?.requestId);
    const plain = await fetch(`${s.url}/plain`);
    expect([plain.headers.get('content-type'), await plain.text()]).toEqual(['application/json', '"Hello, world!"']);
  });

  it.each([
    ['a thrown error', async () => Promise.reject(new Error('boom'))],
    ['a status that is not HTTP', async () => ({ statusCode: 99 })],
    ['a body that is not a string', async () => ({ statusCode: 200, body: { a: 1 } })],
    ['a payload over 6 MB', async () => ({ statusCode: 200, body: 'x'.repeat(6_291_557) })],
  ])("answers %s with the service's 502", async (_name, fn) => {
    const s = await buffered(fn);
    const res = await fetch(s.url);
    expect([res.status, await res.json()]).toEqual([502, INTERNAL_ERROR]);
    expect(s.records[0]).toMatchObject({ outcome: 'function-error', statusCode: 502 });
  });

  it('answers a function past its timeout with 502 and logs it as Lambda does', async () => {
    const s = await buffered(() => new Promise(() => undefined), 200);
    expect((await fetch(s.url)).status).toBe(502);
    expect(s.records[0]?.outcome).toBe('timeout');
    expect(s.logs.join('\n')).toContain('Task timed out after 0.20 seconds');
  });
});

describe('RESPONSE_STREAM invoke and the http-integration prelude', () => {
  it('reads status, headers and cookies from the prelude and relays each chunk as it is written', async () => {
    let release: () => void = () => undefined;
    const s = await streaming(async (_e, raw) => {
      const stream = awslambda.HttpResponseStream.from(raw, { statusCode: 201, headers: { 'content-type': 'text/event-stream' }, cookies: ['k=v'] });
      stream.write('data: one\n\n');
      await new Promise<void>((r) => (release = r));
      stream.write('data: two\n\n');
      stream.end();
    });
    const res = await fetch(s.url, { method: 'POST', body: '{}' });
    expect([res.status, res.headers.get('content-type'), res.headers.getSetCookie()]).toEqual([201, 'text/event-stream', ['k=v']]);
    const reader = res.body!.getReader();
    // The first chunk arrives while the handler still waits: nothing is buffered.
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: one\n\n');
    release();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: two\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it("without the prelude: 200 with the stream's content type; an empty stream: 200 without a body", async () => {
    const s = await streaming(async (e, stream) => {
      if (e.rawPath === '/plain') {
        stream.setContentType('text/plain');
        stream.write('hi');
      }
      stream.end();
    });
    const plain = await fetch(`${s.url}/plain`);
    expect([plain.status, plain.headers.get('content-type'), await plain.text()]).toEqual([200, 'text/plain', 'hi']);
    const empty = await fetch(s.url);
    expect([empty.status, await empty.text()]).toEqual([200, '']);
  });

  it.each([
    [
      'end(chunk) without a write (the prelude is skipped, runtime-interface-client #97)',
      (stream: Stream) => awslambda.HttpResponseStream.from(stream, { statusCode: 200 }).end('x'),
    ],
    [
      'a malformed prelude',
      (stream: Stream) => (
        stream.setContentType('application/vnd.awslambda.http-integration-response'),
        stream.write('{"statusCode":"x"}\0\0\0\0\0\0\0\0body'),
        stream.end()
      ),
    ],
  ])("answers %s with the service's 502", async (_name, write) => {
    const s = await streaming(async (_e, stream) => void write(stream));
    const res = await fetch(s.url);
    expect([res.status, await res.json()]).toEqual([502, INTERNAL_ERROR]);
  });

  it('a function error before the first byte is a 502; after it, the connection is cut (never a clean end)', async () => {
    const s = await streaming(async (e, raw) => {
      if (e.rawPath === '/late') {
        const stream = awslambda.HttpResponseStream.from(raw, { statusCode: 200 });
        stream.write('part');
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('boom');
    });
    const early = await fetch(s.url);
    expect([early.status, await early.json()]).toEqual([502, INTERNAL_ERROR]);
    const late = await fetch(`${s.url}/late`);
    expect(late.status).toBe(200);
    await expect(late.text()).rejects.toThrow();
    expect(s.logs.join('\n')).toContain('Invoke Error Error: boom');
  });

  it('refuses a route whose handler does not match its invoke mode; an unknown path is an OpenAI-shaped 404', async () => {
    expect(() => createFunctionUrlServer([{ match: () => true, functionName: 'x', invokeMode: 'RESPONSE_STREAM', handler: async () => 'x' }])).toThrow(
      TypeError,
    );
    const s = await buffered(async () => 'x');
    const res = await fetch(`${s.url}/nowhere`);
    expect([res.status, ((await res.json()) as { error: { message: string } }).error.message]).toEqual([404, 'Unknown path']);
  });
});

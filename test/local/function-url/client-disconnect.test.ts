import { once } from 'node:events';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpResponseStream, type ResponseStream, streamifyResponse } from '../../../local/function-url/index.js';
import { deferred, everyPath, sleep, startServer, type TestServer } from './helpers.js';

/**
 * What real Lambda does when a Function URL client leaves mid-response, and so what the stand-in
 * does: nothing the handler can see. No 'error' or early 'close' on the response stream, writes keep
 * succeeding, the invocation runs to its end (and is billed). Sources in local/function-url/stream-relay.ts.
 */

let running: TestServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function serveWithSockets(route: Parameters<typeof everyPath>[0]): Promise<{ server: TestServer; sockets: Socket[] }> {
  const server = await startServer([everyPath(route)]);
  running = server;
  const sockets: Socket[] = [];
  server.server.on('connection', (socket: Socket) => sockets.push(socket));
  return { server, sockets };
}

describe('client disconnect', () => {
  it('streaming: the handler gets no signal, its later writes succeed and are dropped, the run continues', async () => {
    const clientGone = deferred();
    const seen = { errorEvents: 0, closedBeforeEnd: false, writeErrors: 0, writeReturns: [] as boolean[] };
    let endCalled = false;
    const handler = streamifyResponse(async (_event: unknown, responseStream: ResponseStream) => {
      const stream = HttpResponseStream.from(responseStream, {
        statusCode: 200,
        headers: { 'content-type': 'text/event-stream' },
      });
      stream.on('error', () => (seen.errorEvents += 1));
      stream.on('close', () => (seen.closedBeforeEnd ||= !endCalled));
      stream.write('data: 1\n\n');
      await clientGone.promise;
      for (let i = 2; i <= 5; i += 1) {
        await new Promise<void>((resolve) => {
          const accepted = stream.write(`data: ${i}\n\n`, (error) => {
            if (error) seen.writeErrors += 1;
            resolve();
          });
          seen.writeReturns.push(accepted);
        });
      }
      await sleep(30); // keeps working after the client left: this time is billed in Lambda
      endCalled = true;
      stream.end();
    });
    const { server, sockets } = await serveWithSockets({ handler, invokeMode: 'RESPONSE_STREAM', functionName: 'gone' });
    const recorded = server.nextRecord();

    const abort = new AbortController();
    const res = await fetch(server.url, { signal: abort.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 1\n\n');
    abort.abort();
    const [serverSocket] = sockets;
    if (serverSocket === undefined) throw new Error('no server socket');
    if (!serverSocket.closed) await once(serverSocket, 'close');
    await sleep(0);
    clientGone.resolve();

    const record = await recorded;
    expect(seen).toEqual({ errorEvents: 0, closedBeforeEnd: false, writeErrors: 0, writeReturns: [true, true, true, true] });
    expect(record.outcome).toBe('success');
    expect(record.clientDisconnectedAt).toBeTypeOf('number');
    expect(record.bytesSent).toBe('data: 1\n\n'.length);
    expect(record.bytesDiscarded).toBe(4 * 'data: N\n\n'.length);
    expect(record.durationMs).toBeGreaterThanOrEqual(30);
    expect(server.logs.filter((line) => line.includes('client disconnected mid-response'))).toHaveLength(1);
  });

  it('buffered: the invocation runs to completion and its response is dropped', async () => {
    const clientGone = deferred();
    let finished = false;
    const handler = async (): Promise<unknown> => {
      await clientGone.promise;
      finished = true;
      return { statusCode: 200, body: 'nobody is listening' };
    };
    const { server, sockets } = await serveWithSockets({ handler, invokeMode: 'BUFFERED', functionName: 'gone-buffered' });
    const recorded = server.nextRecord();

    const abort = new AbortController();
    const request = fetch(server.url, { signal: abort.signal }).catch((error: unknown) => error);
    while (sockets.length === 0) await sleep(1);
    await sleep(10);
    abort.abort();
    expect(await request).toBeInstanceOf(Error);
    const [serverSocket] = sockets;
    if (serverSocket !== undefined && !serverSocket.closed) await once(serverSocket, 'close');
    await sleep(0);
    clientGone.resolve();

    const record = await recorded;
    expect(finished).toBe(true);
    expect(record.outcome).toBe('success');
    expect(record.statusCode).toBeUndefined();
    expect(record.clientDisconnectedAt).toBeTypeOf('number');
    expect(record.bytesDiscarded).toBe('nobody is listening'.length);
    expect(server.logs.filter((line) => line.includes('client disconnected before the response'))).toHaveLength(1);
  });
});

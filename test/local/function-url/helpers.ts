import type { Server } from 'node:http';
import { afterEach } from 'vitest';
import {
  createFunctionUrlServer,
  listen,
  type FunctionUrlRoute,
  type InvocationRecord,
} from '../../../local/function-url/index.js';

/** A running stand-in plus everything it reported. */
export interface TestServer {
  url: string;
  server: Server;
  records: InvocationRecord[];
  logs: string[];
  /** Resolves with the next invocation record (or the n-th overall when given). */
  nextRecord: () => Promise<InvocationRecord>;
  close: () => Promise<void>;
}

/** Starts the stand-in on a free loopback port with log/record capture. */
export async function startServer(routes: FunctionUrlRoute[]): Promise<TestServer> {
  const records: InvocationRecord[] = [];
  const logs: string[] = [];
  const waiters: Array<(record: InvocationRecord) => void> = [];
  const server = createFunctionUrlServer(routes, {
    log: (line) => logs.push(line),
    onInvocation: (record) => {
      records.push(record);
      waiters.shift()?.(record);
    },
  });
  const { url, close } = await listen(server);
  return {
    url,
    server,
    records,
    logs,
    nextRecord: () => new Promise((resolve) => waiters.push(resolve)),
    close,
  };
}

/** A promise with its resolve function outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * `serve(handler, timeoutMs?)`: one toy function on every path of a fresh stand-in, closed after each
 * test (call once at a test file's top level).
 */
export function serveEachTest(invokeMode: FunctionUrlRoute['invokeMode'], functionName: string): (handler: unknown, timeoutMs?: number) => Promise<TestServer> {
  let running: TestServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });
  return async (handler, timeoutMs) => {
    running = await startServer([everyPath({ handler, invokeMode, functionName, ...(timeoutMs ? { timeoutMs } : {}) })]);
    return running;
  };
}

/** Route that takes every path. */
export function everyPath(route: Omit<FunctionUrlRoute, 'match'>): FunctionUrlRoute {
  return { match: () => true, ...route };
}

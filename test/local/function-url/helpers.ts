import type { Server } from 'node:http';
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

/** Route that takes every path. */
export function everyPath(route: Omit<FunctionUrlRoute, 'match'>): FunctionUrlRoute {
  return { match: () => true, ...route };
}

/**
 * The simulator's node:http server and its HTTP control API.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ExchangeContext, FaultRegistry, type ReadBody, runExchange } from './exchange.js';
import { asNumber, isObject } from './json-narrowing.js';
import { PREFIXES, resolveRoute } from './routes.js';
import type { RecordedRequest, SimProvider, Simulator, SimulatorOptions } from './types.js';

// The simulator's node:http server: reads each request, hands provider paths to `runExchange` and
// `/__sim/*` to the control API, and owns everything `close()` must tear down (sockets, in-flight
// exchanges and their timers).
/** Largest request body the simulator reads, bytes (images inline in base64 can be large). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Default reply length, words. */
export const DEFAULT_REPLY_WORDS = 12;

function readBody(req: IncomingMessage): Promise<ReadBody | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (raw.trim() === '') {
        resolve({ json: undefined, raw, invalid: false });
        return;
      }
      try {
        resolve({ json: JSON.parse(raw) as unknown, raw, invalid: false });
      } catch {
        resolve({ json: undefined, raw, invalid: true });
      }
    });
    req.on('error', () => resolve(undefined));
    req.on('close', () => resolve(undefined));
  });
}

function sendUnknownRoute(res: ServerResponse, path: string): void {
  const text = JSON.stringify({ error: { message: `No simulated provider at ${path}. Prefixes: ${Object.values(PREFIXES).join(', ')}` } });
  res.writeHead(404, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/**
 * Start the upstream simulator on loopback. Resolves once it is listening.
 * Every provider is served from one port; `urls[provider]` is the base URL a client uses for it.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? '127.0.0.1';
  let chunkDelay = Math.max(0, opts.chunkDelayMs ?? 0);
  let acceptedKeys: ReadonlySet<string> | undefined = opts.acceptedKeys === undefined ? undefined : new Set(opts.acceptedKeys);
  let seq = 0;
  const requests: RecordedRequest[] = [];
  const faults = new FaultRegistry();
  const sockets = new Set<Socket>();
  const shutdownHooks = new Set<() => void>();

  const ctx: ExchangeContext = {
    requests,
    faults,
    replyWords: Math.max(1, opts.replyWords ?? DEFAULT_REPLY_WORDS),
    chunkDelayMs: () => chunkDelay,
    nextSeq: () => ++seq,
    acceptedKeys: () => acceptedKeys,
    onShutdown: (cancel) => {
      shutdownHooks.add(cancel);
      return () => shutdownHooks.delete(cancel);
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulator.local');
    const body = await readBody(req);
    if (!body) return;
    const method = (req.method ?? 'GET').toUpperCase();
    if (url.pathname.startsWith(CONTROL_PREFIX)) {
      handleControl(sim, method, url.pathname, body.json, res);
      return;
    }
    const route = resolveRoute(method, url.pathname);
    if (!route) {
      sendUnknownRoute(res, url.pathname);
      return;
    }
    await runExchange(ctx, route, req, res, url, body);
  };

  const server = createLoudServer(handle, sockets);
  const port = await listenOn(server, opts.port ?? 0, host);
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  const baseUrl = `http://${hostForUrl}:${port}`;
  const urls = Object.fromEntries(Object.entries(PREFIXES).map(([p, prefix]) => [p, `${baseUrl}${prefix}`])) as Record<SimProvider, string>;

  let closed: Promise<void> | undefined;
  const sim: Simulator = {
    baseUrl,
    port,
    urls,
    requests,
    setFault: (match, fault, o) => faults.add(match, fault, o?.times ?? Infinity),
    clearFaults: () => faults.clear(),
    reset: () => {
      requests.length = 0;
      faults.clear();
    },
    setChunkDelay: (ms) => {
      chunkDelay = Math.max(0, ms);
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        for (const cancel of [...shutdownHooks]) cancel();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
  return sim;
}

/**
 * An HTTP server running `handle` per request and tracking its open sockets in `sockets` (closed hard
 * on shutdown). A simulator bug must show up as a loud 500 (or a cut connection once headers are
 * out), never as a silent hang.
 */
function createLoudServer(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, sockets: Set<Socket>): Server {
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.stack ?? err.message : String(err);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `simulator internal error: ${message}` } }));
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return server;
}

/**
 * Listens on `host:port` (port 0: any free one).
 * @returns the bound port.
 * @throws the server's error (EADDRINUSE, …) when it cannot listen.
 */
async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('simulator: unexpected server address');
  return address.port;
}

// The HTTP control API, for a simulator in another process (the bench runs it as a child process):
// - `POST /__sim/reset` — clear the request log and faults (204);
// - `POST /__sim/chunk-delay` `{ms}` — set the gap between streamed events (204).
// Faults are set in process (`Simulator.setFault`), where the tests run.
/** Path prefix of the control API. */
export const CONTROL_PREFIX = '/__sim/';

function answer(res: ServerResponse, status: number, message?: string): void {
  if (message === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const text = JSON.stringify({ error: { message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Serve one control request. `body` is the parsed JSON body (undefined if empty or invalid). */
export function handleControl(sim: Simulator, method: string, pathname: string, body: unknown, res: ServerResponse): void {
  const route = `${method} ${pathname.replace(/\/+$/, '')}`;
  switch (route) {
    case 'POST /__sim/reset':
      sim.reset();
      answer(res, 204);
      return;
    case 'POST /__sim/chunk-delay': {
      const ms = isObject(body) ? asNumber(body['ms']) : undefined;
      if (ms === undefined || ms < 0) {
        answer(res, 400, 'expected {ms: number >= 0}');
        return;
      }
      sim.setChunkDelay(ms);
      answer(res, 204);
      return;
    }
    default:
      answer(res, 404, `no control endpoint ${route}`);
  }
}

/**
 * The simulator's node:http server: reads each request, hands provider paths to `runExchange` and
 * `/__sim/*` to the control API, and owns what `close()` tears down (sockets, exchanges, timers).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ExchangeContext, FaultRegistry, type ReadBody, runExchange } from './exchange.js';
import { asNumber, isObject } from './json-narrowing.js';
import { PREFIXES, resolveRoute } from './routes.js';
import type { RecordedRequest, Simulator, SimulatorOptions } from './types.js';
import type { ProviderName } from '../../functions/shared/providers/manifest.js';

/** Largest request body the simulator reads, bytes (images inline in base64 can be large). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<ReadBody | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        resolve({ json: raw.trim() === '' ? undefined : (JSON.parse(raw) as unknown), raw, invalid: false });
      } catch {
        resolve({ json: undefined, raw, invalid: true });
      }
    });
    req.on('error', () => resolve(undefined));
    req.on('close', () => resolve(undefined));
  });
}

/** Answer `status` with no body, or with `{error: {message}}`. */
function answer(res: ServerResponse, status: number, message?: string): void {
  const text = message === undefined ? undefined : JSON.stringify({ error: { message } });
  res.writeHead(status, text === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/**
 * Start the upstream simulator on loopback. Resolves once it is listening. Every provider is served
 * from one port; `urls[provider]` is the base URL a client uses for it.
 * @throws the server's error (EADDRINUSE, …) when it cannot listen.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? '127.0.0.1';
  let chunkDelay = Math.max(0, opts.chunkDelayMs ?? 0);
  let seq = 0;
  const requests: RecordedRequest[] = [];
  const faults = new FaultRegistry();
  const sockets = new Set<Socket>();
  const shutdownHooks = new Set<() => void>();
  const ctx: ExchangeContext = {
    requests,
    faults,
    replyWords: Math.max(1, opts.replyWords ?? 12),
    chunkDelayMs: () => chunkDelay,
    nextSeq: () => ++seq,
    acceptedKeys: opts.acceptedKeys === undefined ? undefined : new Set(opts.acceptedKeys),
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
    if (url.pathname.startsWith('/__sim/')) return handleControl(sim, `${method} ${url.pathname.replace(/\/+$/, '')}`, body.json, res);
    const route = resolveRoute(method, url.pathname);
    if (route) await runExchange(ctx, route, req, res, url, body);
    else answer(res, 404, `No simulated provider at ${url.pathname}. Prefixes: ${Object.values(PREFIXES).join(', ')}`);
  };

  const server = createLoudServer(handle, sockets);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('simulator: unexpected server address');
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const urls = Object.fromEntries(Object.entries(PREFIXES).map(([p, prefix]) => [p, `${baseUrl}${prefix}`])) as Record<ProviderName, string>;

  let closed: Promise<void> | undefined;
  const sim: Simulator = {
    baseUrl,
    port: address.port,
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
 * An HTTP server running `handle` per request and tracking its sockets (closed hard on shutdown). A
 * simulator bug shows up as a loud 500 (or a cut connection once headers are out), never as a hang.
 */
function createLoudServer(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, sockets: Set<Socket>): Server {
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `simulator internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return server;
}

/**
 * The HTTP control API, for a simulator in another process (the bench's): `POST /__sim/reset` clears
 * the request log and faults, `POST /__sim/chunk-delay` `{ms}` sets the gap between streamed events.
 */
function handleControl(sim: Simulator, route: string, body: unknown, res: ServerResponse): void {
  if (route === 'POST /__sim/reset') {
    sim.reset();
    return answer(res, 204);
  }
  if (route !== 'POST /__sim/chunk-delay') return answer(res, 404, `no control endpoint ${route}`);
  const ms = isObject(body) ? asNumber(body['ms']) : undefined;
  if (ms === undefined || ms < 0) return answer(res, 400, 'expected {ms: number >= 0}');
  sim.setChunkDelay(ms);
  answer(res, 204);
}

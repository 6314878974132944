/**
 * A TCP proxy for tests, in front of DynamoDB Local: it delays every chunk in both directions (a slow
 * DynamoDB) and can be stopped (connections refused, open ones cut) and started again on the same
 * port (DynamoDB unreachable, then back).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Refuses new connections and cuts open ones. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`host:port`) adding `delayMs` to every chunk each way. */
export async function startTcpProxy(targetPort: number, delayMs: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, delayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), delayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
  };
  const handle = (client: Socket) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    relay(client, upstream);
    relay(upstream, client);
  };
  let server: Server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  let listening = true;
  const stop = async () => {
    if (!listening) return;
    listening = false;
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop,
    start: async () => {
      if (listening) return;
      server = createServer(handle);
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      listening = true;
    },
    close: stop,
  };
}

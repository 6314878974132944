import type { Server } from 'node:http';

/** Host each stand-in server was created for, read by {@link listen}. */
const configuredHosts = new WeakMap<Server, string>();

/** Records the interface `server` should bind by default. */
export function rememberHost(server: Server, host: string): void {
  configuredHosts.set(server, host);
}

/** A listening stand-in: its base URL (`http://host:port`, no trailing slash) and a closer. */
export interface ListeningServer {
  url: string;
  /** Stops accepting, destroys every open socket (keep-alive and in-flight), resolves when closed. */
  close: () => Promise<void>;
}

/**
 * Starts `server` on `port` (default 0 = any free port) and `host` (default: the `host` given to
 * `createFunctionUrlServer`, else 127.0.0.1).
 */
export function listen(server: Server, port = 0, host?: string): Promise<ListeningServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host ?? configuredHosts.get(server) ?? '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('server is not listening on TCP'));
        return;
      }
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${shownHost}:${address.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** Loopback helpers for tests: credentials that send providers to the upstream simulator, and a refused port. */
import { createServer } from 'node:net';
import type { Simulator } from '../../local/simulator';
import type { ProviderName } from '../../functions/shared/providers/manifest';

/**
 * Upstream credentials (`<NAME>_API_KEY` = `k`, `<NAME>_BASE_URL` = the simulator's URL) that send
 * `providers` to `sim`, in the shape the router's `planAttempts` and `resolveEndpoint` read.
 */
export function simulatorCredentials(sim: Simulator, providers: readonly ProviderName[]): Record<string, string> {
  return Object.fromEntries(
    providers.flatMap((p) => [
      [`${p.toUpperCase()}_API_KEY`, 'k'],
      [`${p.toUpperCase()}_BASE_URL`, sim.urls[p]],
    ]),
  );
}

/** A loopback port nothing listens on: connections to it are refused at once. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

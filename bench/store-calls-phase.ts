/**
 * DynamoDB calls per request on the warm path: after one unmeasured request of a kind (caches
 * filled), windows of N sequential requests of that kind, counting the gateway's calls by operation,
 * ledger writes included (they finish after the response; the count waits for them). A window in
 * which a cache entry reached its TTL is measured again (at most 4 windows), and says so.
 */
import { readFileSync } from 'node:fs';
import type { BenchContext } from './bench-context';
import { BENCH_CONFIG } from './config';
import { resetStoreCalls, storeCalls, waitForStoreIdle } from './gateway-control';
import type { RequestSpec } from './load';
import { streamOnce } from './stream-client';
import type { StoreCallSnapshot } from './store-call-counter';

/** Calls per request for one kind of request. */
export interface StoreCallsPerRequest {
  kind: string;
  requests: number;
  snapshot: StoreCallSnapshot;
  /** Lines the gateway logged per request (Powertools JSON lines). */
  logLinesPerRequest: number;
  /** Earlier windows that were measured again because a cache TTL ran out inside them (a refresh read). */
  refreshedWindows: number;
}

/** Most windows measured per kind before the last one is kept, reads or not. */
const MAX_WINDOWS = 4;

/** Lines in a file now (0 if it cannot be read). */
function lineCount(file: string): number {
  try {
    const text = readFileSync(file, 'utf8');
    let n = 0;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
    return n;
  } catch {
    return 0;
  }
}

async function sendBuffered(ctx: BenchContext, spec: RequestSpec): Promise<void> {
  const res = await ctx.pools.get(ctx.targets.modelmux.origin, 1).request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`store-call count: status ${res.statusCode}: ${text.slice(0, 200)}`);
}

/** Counts for buffered chat, streamed chat and embeddings. */
export async function countStoreCallsPerRequest(ctx: BenchContext): Promise<StoreCallsPerRequest[]> {
  const { modelmux } = ctx.targets;
  const pool = ctx.pools.get(modelmux.origin, 1);
  const kinds: Array<[string, () => Promise<void>]> = [
    ['buffered chat', () => sendBuffered(ctx, modelmux.chat)],
    ['streamed chat', async () => void (await streamOnce(pool, modelmux.stream))],
    ['embeddings', () => sendBuffered(ctx, modelmux.embeddings)],
  ];
  const out: StoreCallsPerRequest[] = [];
  for (const [kind, send] of kinds) {
    await send();
    await waitForStoreIdle(ctx.sut.gateway);
    let refreshedWindows = 0;
    for (let window = 1; ; window++) {
      await resetStoreCalls(ctx.sut.gateway);
      const linesBefore = lineCount(ctx.sut.gatewayLogFile);
      for (let i = 0; i < BENCH_CONFIG.storeCallRequests; i++) await send();
      await waitForStoreIdle(ctx.sut.gateway);
      await new Promise((r) => setTimeout(r, 50)); // the last log line is written just after the ledger write
      const snapshot = await storeCalls(ctx.sut.gateway);
      // A read here is a cache entry reaching its TTL inside the window (the amortised figure counts those);
      // measure again for the warm path itself, a bounded number of times.
      if (snapshot.reads > 0 && window < MAX_WINDOWS) {
        refreshedWindows++;
        continue;
      }
      const logLinesPerRequest = (lineCount(ctx.sut.gatewayLogFile) - linesBefore) / BENCH_CONFIG.storeCallRequests;
      out.push({ kind, requests: BENCH_CONFIG.storeCallRequests, snapshot, logLinesPerRequest, refreshedWindows });
      break;
    }
  }
  return out;
}

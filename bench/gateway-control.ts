/**
 * Typed commands to the gateway child (bench/gateway-process.ts): DynamoDB call counts, waiting for
 * ledger writes that outlive their response, and the CPU profiler.
 */
import type { Child } from './child-process';
import { pick } from './json-pick';
import type { OperationCounts, StoreCallSnapshot } from './store-call-counter';

function asNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number.NaN;
}

function asOperations(value: unknown): Record<string, OperationCounts> {
  const out: Record<string, OperationCounts> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [name, counts] of Object.entries(value)) {
    const errors = pick(counts, 'errors');
    out[name] = {
      calls: asNumber(pick(counts, 'calls')),
      totalMs: asNumber(pick(counts, 'totalMs')),
      errors: typeof errors === 'object' && errors !== null ? Object.fromEntries(Object.entries(errors).map(([k, v]) => [k, asNumber(v)])) : {},
    };
  }
  return out;
}

/** The gateway's DynamoDB calls since the last reset. */
export async function storeCalls(gateway: Child): Promise<StoreCallSnapshot> {
  const raw = await gateway.call('store-calls');
  return {
    operations: asOperations(pick(raw, 'operations')),
    reads: asNumber(pick(raw, 'reads')),
    writes: asNumber(pick(raw, 'writes')),
    inFlight: asNumber(pick(raw, 'inFlight')),
  };
}

/** Zeroes the gateway's DynamoDB call counts. */
export async function resetStoreCalls(gateway: Child): Promise<void> {
  await gateway.call('reset-store-calls');
}

/**
 * Waits until no DynamoDB call of the gateway is in flight (ledger writes run after the client has its
 * answer) and returns how long that took, ms (polling every 5 ms).
 * @throws Error when calls are still in flight after `timeoutMs` (default 60,000 ms).
 */
export async function waitForStoreIdle(gateway: Child, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { inFlight } = await storeCalls(gateway);
    if (inFlight === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`gateway still has ${inFlight} DynamoDB calls in flight after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

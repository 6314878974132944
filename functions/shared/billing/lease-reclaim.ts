/**
 * Stranded leases, reclaimed at the account's next touch (docs/credit-leases.md "Stranded leases"). A
 * lease of a container that no longer serves the account (frozen between invocations, shut down before
 * its return landed, killed) stays on the account item until someone reconciles it. The orphan sweep
 * does so every few minutes, after its grace; this does it for one account as soon as the account is
 * used again: a lease take that finds leases past their expiry (lease.ts), a hold refused with 402 or 429
 * on the store's own numbers while some are (hold.ts), and the account API's balance reads.
 *
 * Why at the lease's expiry, not at its validity: a lease admits requests for its validity (30 s), but
 * each may run until its own end (the function's timeout: chat 300 s), and its ledger entry, which names
 * the lease and is all a reconcile counts, is written until then. A lease expires a validity after the
 * end of the request that asked for it, and admits no request that ends later (lease.ts `admits`), so
 * once it has expired no request of it runs and its ledger entries are final. The reconcile is the
 * sweep's own (lease-settle.ts `reconcileLease`: those entries summed, under HOLD_IS_PENDING, so it lands
 * once whoever runs it, and a late return of the container is a no-op). Credit a lease strands is
 * so back within one validity plus one request (30 s + 300 s on chat) plus {@link LEASE_RECLAIM_GRACE_MS}.
 *
 * Like the sweep for a hold with no queued mark, it leaves the leases to the sweep while the settle queue
 * holds messages: a ledger entry the container could not write may wait there.
 */
import { logger } from '../observability/logger';
import { isLeaseId } from '../http/request-id';
import { now as billingNow } from '../time/clock';
import { readState, type ShardState } from './account-state';
import { decodeInlineHold, HOLDS_MAP, recordOfInline, type InlineHold } from './hold-record';
import { reconcileLease } from './lease-settle';
import { pendingSettleMessages } from './settle-queue';
import { readAccountItem } from '../store/account-item';

/**
 * How long past its expiry a lease is left to its own container (ms): the expiry is that container's
 * clock, the reclaim another's, and a return may be on its way.
 */
export const LEASE_RECLAIM_GRACE_MS = 10_000;

/** Per container and account, at most one reclaim in this many ms (ms). */
const RECLAIM_EVERY_MS = 5_000;

const lastTried = new Map<string, number>();
const running = new Map<string, Promise<number>>();

/**
 * Whether the item (`state`, from a read or a failed condition) shows a lease past its expiry and the
 * grace: worth a {@link reclaimStrandedLeases}.
 * @param nowMs epoch ms (the billing clock: tests move it).
 */
export function hasStrandedLeases(state: Pick<ShardState, 'leaseExpiries'>, nowMs = billingNow()): boolean {
  return (state.leaseExpiries ?? []).some((expiresAt) => expiresAt < nowMs - LEASE_RECLAIM_GRACE_MS);
}

/**
 * Reconciles the account's leases past their expiry and the grace, from the ledger entries that name
 * them (the root item: a sharded account takes no lease). One at a time per account in this container,
 * and at most once per {@link RECLAIM_EVERY_MS}; nothing while the settle queue holds messages.
 * @param accountId the account (its root item).
 * @param nowMs epoch ms (the billing clock: tests move it).
 * @returns how many leases this call reconciled (0: none due, one tried lately, left to the sweep, or a failure).
 *   Never throws: a failure is logged, and the sweep reconciles later.
 */
export function reclaimStrandedLeases(accountId: string, nowMs = billingNow()): Promise<number> {
  const ongoing = running.get(accountId);
  if (ongoing !== undefined) return ongoing;
  if (Math.abs(nowMs - (lastTried.get(accountId) ?? Number.NEGATIVE_INFINITY)) < RECLAIM_EVERY_MS) return Promise.resolve(0);
  if (lastTried.size > 10_000) lastTried.clear();
  lastTried.set(accountId, nowMs);
  const run = reclaim(accountId, nowMs)
    .catch((err: unknown) => {
      logger.warn('stranded leases not reclaimed; the sweep will', { accountId, error: err as Error });
      return 0;
    })
    .finally(() => running.delete(accountId));
  running.set(accountId, run);
  return run;
}

async function reclaim(accountId: string, nowMs: number): Promise<number> {
  const stranded = await strandedLeases(accountId, nowMs);
  if (stranded.length === 0 || (await pendingSettleMessages()) > 0) return 0;
  let reclaimed = 0;
  // A lease's return names its key by the 16-hex entry id alone (keys.<h16>): no key lookup.
  for (const lease of stranded.map((h) => recordOfInline(h, h.h16))) {
    const r = await reconcileLease(lease);
    if (r.alreadySettled) continue;
    reclaimed++;
    logger.info('stranded lease reclaimed', { accountId, leaseId: lease.requestId, costNanoUsd: r.costNanoUsd, freeTokensUsed: r.freeTokensUsed });
  }
  return reclaimed;
}

/**
 * `state` as a lease take should judge it: when it shows stranded leases and a reclaim reconciled some,
 * the item read again (strongly consistent), so the slice counts what came back. Never throws
 * (undefined when the re-read fails, as for no state).
 */
export async function afterReclaim(accountId: string, state: ShardState | undefined): Promise<ShardState | undefined> {
  if (state === undefined || !hasStrandedLeases(state) || (await reclaimStrandedLeases(accountId)) === 0) return state;
  return readState(accountId, { consistent: true }).catch(() => undefined);
}

/** The account item's leases past expiry and grace, from a strongly consistent read of its holds. */
async function strandedLeases(accountId: string, nowMs: number): Promise<InlineHold[]> {
  const item = await readAccountItem(accountId, { projection: '#h', names: { '#h': HOLDS_MAP }, consistent: true });
  const holds = (item?.[HOLDS_MAP] ?? {}) as Record<string, unknown>;
  return Object.entries(holds).flatMap(([id, value]) => {
    const h = isLeaseId(id) ? decodeInlineHold(accountId, id, value) : undefined;
    return h !== undefined && !h.queued && h.holdExpiresAt < nowMs - LEASE_RECLAIM_GRACE_MS ? [h] : [];
  });
}

/** Forgets when each account was last tried (tests). */
export function resetReclaimsForTests(): void {
  lastTried.clear();
}

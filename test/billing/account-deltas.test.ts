import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { clearViews, shardStateOf, viewOf, type ShardState } from '../../functions/shared/billing/account-state';
import type { HoldRecord } from '../../functions/shared/billing/hold-record';
import { settleHold } from '../../functions/shared/billing/settle';
import { GatewayError } from '../../functions/shared/errors/gateway-errors';
import { demandOf, entryOf, hold } from '../support/billing';
import { accountItem } from '../support/ledger';
import { createTestTables } from '../support/tables';

/**
 * A settle's change of the account item is one list of deltas (billing/settle.ts `settleDeltas`), from
 * which both the DynamoDB update and the container's view of the item are derived (a hold's view
 * follows its plan: billing/hold.ts `applyHold`). Property: after each step of any sequence of holds, bills (usage below, at or above the hold) and cancels, on an account with free
 * tokens and/or credit and a key with or without a spend limit, the view this container keeps equals
 * the item DynamoDB Local stores, in every number the view holds, to the token and the nano-dollar.
 */

beforeAll(async () => {
  await createTestTables('deltas');
});

/** The numbers the view keeps, read alike from the view and from the stored item. Tokens and nano-USD. */
function numbers(s: ShardState): Record<string, unknown> {
  return {
    freeTokens: s.freeTokens,
    creditNanoUsd: s.creditNanoUsd,
    heldNanoUsd: s.heldNanoUsd,
    leasedNanoUsd: s.leasedNanoUsd ?? 0,
    inflight: s.inflight ?? 0,
    keys: Object.fromEntries(
      Object.entries(s.keys ?? {}).map(([h16, k]) => [
        h16,
        { heldNanoUsd: k.heldNanoUsd, usedNanoUsd: k.usedNanoUsd ?? 0, leftNanoUsd: k.leftNanoUsd ?? null, inflight: k.inflight ?? 0 },
      ]),
    ),
  };
}

type Op =
  { kind: 'hold'; prompt: number; output: number } | { kind: 'bill'; which: number; prompt: number; completion: number } | { kind: 'cancel'; which: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('hold' as const), prompt: fc.integer({ min: 1, max: 3_000 }), output: fc.integer({ min: 1, max: 3_000 }) }),
  fc.record({
    kind: fc.constant('bill' as const),
    which: fc.nat(),
    prompt: fc.integer({ min: 0, max: 4_000 }),
    completion: fc.integer({ min: 0, max: 4_000 }),
  }),
  fc.record({ kind: fc.constant('cancel' as const), which: fc.nat() }),
);

describe('a settle written once, as deltas', () => {
  it('leaves the view equal to the stored item after any sequence of holds, bills and cancels', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 6_000 }),
        fc.integer({ min: 0, max: 50_000_000 }),
        fc.option(fc.integer({ min: 0, max: 30_000_000 }), { nil: undefined }),
        fc.array(op, { minLength: 1, maxLength: 12 }),
        async (freeTokens, creditNanoUsd, limitNanoUsd, ops) => {
          clearViews();
          const { accountId } = await createAccount({ freeTokens, creditNanoUsd });
          const { keyHash } = await createKey(accountId, 'deltas', limitNanoUsd === undefined ? {} : { limitNanoUsd });
          const open: HoldRecord[] = [];
          const viewIsStored = async (): Promise<void> => {
            const view = viewOf(accountId)?.state;
            if (view !== undefined) expect(numbers(view)).toEqual(numbers(shardStateOf(await accountItem(accountId))));
          };
          for (const o of ops) {
            if (o.kind === 'hold') {
              try {
                open.push(await hold(accountId, keyHash, demandOf(o.prompt, o.output)));
              } catch (err) {
                if (!(err instanceof GatewayError) || err.status !== 402) throw err; // refused: no funds or over the key's limit
              }
              await viewIsStored();
              continue;
            }
            const h = open.splice(o.which % Math.max(1, open.length), 1)[0];
            if (h === undefined) continue;
            await settleHold(h, o.kind === 'bill' ? { kind: 'bill', entry: entryOf(o.prompt, o.completion) } : { kind: 'cancel' });
            await viewIsStored();
          }
        },
      ),
      { numRuns: 50 },
    );
  }, 120_000);
});

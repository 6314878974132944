/**
 * Bar O2: the gateway's added latency and write units per request for every kind of
 * account, one invocation at a time, in one interleaved run: the dev key `npm start` prints (200,000
 * free tokens and simulated credit), a new sign-up (free tokens only), an account with credit only, a
 * nearly empty one ($0.05) and a key with a spend limit. Added = modelmux − the simulator directly, at
 * each percentile, buffered chat (`KINDS.chat`).
 */
import { isWrite } from './aws-calls';
import { KINDS, percentile, requestSpec, sequence, type BenchConfig } from './measure';
import type { AccountFunds, Gateway, System } from './system';

const USD = 1_000_000_000;

/** The account kinds the bench measures, with what each starts with. */
export const ACCOUNT_KINDS: Record<string, { label: string; funds: AccountFunds }> = {
  dev: { label: 'the dev key (200,000 free tokens and $100, as `npm start` makes it)', funds: { freeTokens: 200_000, creditNanoUsd: 100 * USD } },
  free: { label: 'free tokens only (200,000: a new sign-up)', funds: { freeTokens: 200_000, creditNanoUsd: 0 } },
  credit: { label: '$100 of credit, no free tokens', funds: { freeTokens: 0, creditNanoUsd: 100 * USD } },
  small: { label: '$0.05 of credit, no free tokens', funds: { freeTokens: 0, creditNanoUsd: USD / 20 } },
  limited: { label: 'a key with a $1 spend limit, on $100', funds: { freeTokens: 0, creditNanoUsd: 100 * USD, keyLimitNanoUsd: USD } },
};

/** One kind's figures: added latency (ms), DynamoDB write calls and write units per request (amortized: lease writes included). */
export interface AccountKindRow {
  kind: string;
  label: string;
  addedP50Ms: number;
  addedP99Ms: number;
  writesPerRequest: number;
  wruPerRequest: number;
  requests: number;
}

/**
 * Runs `cfg.rounds` rounds; in each, every kind (in a rotating order) and the simulator directly send
 * `KINDS.chat.perRound × cfg.perRoundScale` requests one after the other. Each kind has its own account.
 */
export async function measureAccountKinds(system: System, gateway: Gateway, cfg: BenchConfig): Promise<AccountKindRow[]> {
  await system.pace(0);
  const kinds = Object.keys(ACCOUNT_KINDS);
  const keys: Record<string, string> = {};
  for (const kind of kinds) {
    const [key] = await system.account(1, undefined, ACCOUNT_KINDS[kind]?.funds);
    if (key === undefined) throw new Error(`no key for ${kind}`);
    keys[kind] = key;
  }
  const n = Math.max(2, Math.round(KINDS.chat.perRound * cfg.perRoundScale));
  const latency: Record<string, number[]> = { direct: [] };
  const writes: Record<string, { calls: number; units: number }> = {};
  // Warm-up: each key looked up, each account's view read, each lease taken.
  for (const kind of kinds) await sequence(gateway, requestSpec(system, gateway, 'chat', 'modelmux', keys[kind] as string), 'chat', 'modelmux', 3);
  await gateway.take();
  const order = ['direct', ...kinds];
  for (let round = 0; round < cfg.rounds; round++) {
    for (const who of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
      const target = who === 'direct' ? 'direct' : 'modelmux';
      const run = await sequence(gateway, requestSpec(system, gateway, 'chat', target, keys[who] ?? ''), 'chat', target, n);
      (latency[who] ??= []).push(...run.ms);
      const taken = await gateway.take();
      if (who === 'direct') continue;
      const w = (writes[who] ??= { calls: 0, units: 0 });
      for (const [op, c] of Object.entries(taken.calls)) {
        if (!isWrite(op)) continue;
        w.calls += c.calls;
        w.units += c.capacityUnits;
      }
    }
  }
  const direct = latency.direct ?? [];
  return kinds.map((kind) => {
    const ms = latency[kind] ?? [];
    return {
      kind,
      label: ACCOUNT_KINDS[kind]?.label ?? kind,
      addedP50Ms: percentile(ms, 50) - percentile(direct, 50),
      addedP99Ms: percentile(ms, 99) - percentile(direct, 99),
      writesPerRequest: (writes[kind]?.calls ?? 0) / ms.length,
      wruPerRequest: (writes[kind]?.units ?? 0) / ms.length,
      requests: ms.length,
    };
  });
}

/** The report's section: one row per account kind. */
export function renderAccountKinds(rows: readonly AccountKindRow[]): string {
  const lines = [
    '## Every kind of account (bar O2)',
    '',
    'Buffered chat, one invocation at a time, the kinds interleaved in one run, leases on; added = modelmux − the simulator directly. Writes and write units per request are amortized: the lease writes (take, top-up, return) of the run are counted with the requests they served.',
    '',
    '| account | requests | added p50 | added p99 | DynamoDB writes / request | WRU / request |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.requests} | ${r.addedP50Ms.toFixed(1)} ms | ${r.addedP99Ms.toFixed(1)} ms | ${r.writesPerRequest.toFixed(2)} | ${r.wruPerRequest.toFixed(2)} |`,
    ),
  ];
  return lines.join('\n');
}

/**
 * Credit leases against per-request holds (issue 24; billing/lease.ts, docs/credit-leases.md), in this
 * process against a DynamoDB Local of its own: `npx tsx bench/leases.ts [rounds]`. For each mode
 * (holds: CREDIT_LEASE_VALIDITY_MS=0; leases: 30,000) and 1, 10 and 50 requests in flight on one
 * dashboard account (an email, 5 keys; rate limits off, as in the run), it prints:
 * - store calls per request before its answer (startBill → `confirmed`), and after it (the settle);
 * - write units per request, every table and index, amortized (lease takes and returns included:
 *   each mode ends by returning what it holds), as DynamoDB Local reports them (`INDEXES`);
 * - the billing wall time before a request's answer may reach the client (startBill → `confirmed`,
 *   p50 / p99 ms): what billing adds at concurrency 1 with an upstream that answers at once.
 * The leases mode runs a warm-up round first, as a warm container would have.
 */
import { ensureTables, startDynamoDbLocal } from '../local/dynamodb-local';
import { SDK_CLIENT_HOOK } from '../functions/shared/store/dynamo';

type Consumed = { Table?: { CapacityUnits?: number }; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };
const counters = { calls: 0, wru: 0 };

/** Counts every call and its write units on clients made from now on. */
function installCounter(): void {
  (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK] = (client: { middlewareStack: { add(m: unknown, o: object): void } }) =>
    client.middlewareStack.add(
      (next: (a: { input: Record<string, unknown> }) => Promise<{ output: { ConsumedCapacity?: Consumed | Consumed[] } }>, ctx: { commandName?: string }) =>
        async (args: { input: Record<string, unknown> }) => {
          counters.calls++;
          args.input.ReturnConsumedCapacity = 'INDEXES';
          const out = await next(args);
          if (!/Get|Query|Scan/.test(ctx.commandName ?? '')) {
            for (const c of ([] as Consumed[]).concat(out.output.ConsumedCapacity ?? [])) {
              counters.wru += (c.Table?.CapacityUnits ?? 0) + Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((n, i) => n + (i.CapacityUnits ?? 0), 0);
            }
          }
          return out;
        },
      { step: 'initialize', name: 'benchLeaseUnits' },
    );
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)] ?? Number.NaN;

interface Row { mode: string; inFlight: number; callsBefore: number; callsAfter: number; wru: number; p50: number; p99: number }

async function measure(mode: 'holds' | 'leases', inFlight: number, rounds: number): Promise<Row> {
  process.env.CREDIT_LEASE_VALIDITY_MS = mode === 'leases' ? '30000' : '0';
  (await import('../functions/shared/config/env')).reloadConfig();
  const { createAccount } = await import('../functions/shared/accounts/account-store');
  const { createKey } = await import('../functions/shared/accounts/key-store');
  const { startBill } = await import('../functions/shared/billing/request-bill');
  const { returnAllLeases } = await import('../functions/shared/billing/lease');
  const { newRequestId } = await import('../functions/shared/http/request-id');
  const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000 * 1_000_000_000, email: `bench-${mode}-${inFlight}@example.com` });
  const keys = [];
  for (let k = 0; k < 5; k++) keys.push((await createKey(accountId, `bench ${k}`)).keyHash);
  const keyHash = keys[0]!;
  const demand = { promptTokens: 300, outputTokens: 1_000, outputLimitPerChoice: 1_000, choices: 1, inputPrice: 158_250, outputPrice: 633_000 }; // gpt-4o-mini
  const entry = { publicModel: 'gpt-4o-mini', servedModel: 'gpt-4o-mini', provider: 'openai', promptTokens: 300, completionTokens: 300, inputPrice: 158_250, outputPrice: 633_000, usageEstimated: false, fallbackPath: [], status: 'complete' as const };
  const round = async (waits: number[]) => {
    const c0 = counters.calls;
    const bills = Array.from({ length: inFlight }, () => {
      const t0 = performance.now();
      const b = startBill({ accountId, keyHash, requestId: newRequestId(), publicModel: 'gpt-4o-mini', demand, promptTokensEstimate: 300 });
      // Nothing reaches the client before `confirmed` (app/chat-completions.ts holdBeforeAnswer), even
      // when a predicted hold lets the upstream call start beside it: with an upstream that answers at
      // once, this wait is what billing adds to the answer.
      const waited = b.confirmed.then(() => performance.now() - t0);
      return { b, waited };
    });
    for (const { waited } of bills) waits.push(await waited);
    await Promise.all(bills.map(({ b }) => b.confirmed));
    const before = counters.calls - c0;
    const c1 = counters.calls;
    await Promise.all(bills.map(({ b }) => b.settle(entry)));
    return { before, after: counters.calls - c1 };
  };
  await round([]); // warm: the container's view (and, with leases, its first lease)
  const waits: number[] = [];
  const w0 = counters.wru;
  let before = 0;
  let after = 0;
  for (let r = 0; r < rounds; r++) {
    const x = await round(waits);
    before += x.before;
    after += x.after;
  }
  await returnAllLeases(); // what the leases mode still holds is returned: its write counts
  const n = rounds * inFlight;
  return { mode, inFlight, callsBefore: before / n, callsAfter: after / n, wru: (counters.wru - w0) / n, p50: pct(waits, 50), p99: pct(waits, 99) };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 40);
  const ddb = await startDynamoDbLocal();
  try {
    process.env.DYNAMODB_ENDPOINT = ddb.endpoint;
    for (const name of ['RATE_LIMIT_RPM', 'RATE_LIMIT_CONCURRENT', 'RATE_LIMIT_FREE_RPM', 'RATE_LIMIT_FREE_CONCURRENT']) process.env[name] = '0';
    const prefix = `bench-leases-${process.pid}`;
    Object.assign(process.env, { KEYS_TABLE: `${prefix}-keys`, ACCOUNTS_TABLE: `${prefix}-accounts`, LEDGER_TABLE: `${prefix}-ledger`, RESPONSES_TABLE: `${prefix}-responses` });
    (await import('../functions/shared/config/env')).reloadConfig();
    installCounter();
    const { documentClient } = await import('../functions/shared/store/dynamo');
    await ensureTables(documentClient(), { keys: `${prefix}-keys`, accounts: `${prefix}-accounts`, ledger: `${prefix}-ledger`, responses: `${prefix}-responses` });
    const rows: Row[] = [];
    for (const mode of ['holds', 'leases'] as const) for (const inFlight of [1, 10, 50]) rows.push(await measure(mode, inFlight, inFlight === 50 ? Math.max(4, Math.ceil(rounds / 10)) : rounds));
    console.log('| mode | in flight | store calls before the answer / request | after | WRU / request (amortized) | billing wait before the answer p50 / p99 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.mode} | ${r.inFlight} | ${r.callsBefore.toFixed(2)} | ${r.callsAfter.toFixed(2)} | ${r.wru.toFixed(2)} | ${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} |`);
  } finally {
    await ddb.stop();
  }
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

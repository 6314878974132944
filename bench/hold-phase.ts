/**
 * What a hold adds (issue 10): the hold's UpdateItem and its settle, measured in this process
 * against the bench's DynamoDB Local, on an account of their own. Reported: the hold's wall time
 * (p50/p99 ms) — added to time-to-first-token only when the container's view of the account cannot
 * predict it (a cold or stale view: the hold is then written before the upstream call; with a fresh
 * view it is written while the upstream connects, and adds max(0, hold − upstream first token)) —
 * and the CPU of one hold plus its settle (µs), the planning, expressions and SDK work included — and
 * the write units each consumed, per table and index, as DynamoDB Local reports them
 * (`ReturnConsumedCapacity: INDEXES`), with the DynamoDB item sizes that decide them: the account
 * item with 0, 1, 5 and 50 holds in flight (each inline in `holds`) and the ledger entry.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { ensureTables } from '../local/dynamodb-local';
import { SDK_CLIENT_HOOK } from '../functions/shared/store/dynamo';

/** Nearest-rank percentile (0 < p ≤ 100) of unsorted samples. */
function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? Number.NaN;
}

/** The figures of {@link measureHolds}. */
export interface HoldFigures {
  runs: number;
  /** Wall time of one hold write, ms. */
  holdP50Ms: number;
  holdP99Ms: number;
  /** Wall time of one settle write, ms. */
  settleP50Ms: number;
  /** CPU of one hold + settle pair in this process, µs. */
  cpuPerPairUs: number;
  /** A hold planned from a fresh view (no read): CPU only, µs. */
  planCpuUs: number;
  /** Capacity units per hold and per settle (averages), by `table` / `table (index)`, reads apart. */
  units: { hold: Record<string, number>; settle: Record<string, number>; readsPerPair: number };
  /** DynamoDB item sizes (attribute names + values, DynamoDB Developer Guide "Item sizes"), bytes. */
  itemBytes: { account: number; accountFiveKeys: number; holdsInFlight: Record<number, number>; ledgerSettled: number };
}

/** An item's size as DynamoDB bills it: names + values (numbers ~ digits/2 + 1; lists/maps 3 B + contents + 1 B per element). */
export function dynamoItemBytes(item: Record<string, unknown>): number {
  const size = (v: Record<string, unknown>): number => {
    const [type, value] = Object.entries(v)[0] ?? ['NULL', true];
    if (type === 'S') return Buffer.byteLength(String(value));
    if (type === 'N') return Math.ceil(String(value).replace(/^-|\./g, '').replace(/^0+/, '').length / 2) + 1;
    if (type === 'BOOL' || type === 'NULL') return 1;
    if (type === 'L') return 3 + (value as Record<string, unknown>[]).reduce((n: number, e) => n + 1 + size(e), 0);
    if (type === 'M') return 3 + Object.entries(value as Record<string, Record<string, unknown>>).reduce((n, [k, e]) => n + 1 + Buffer.byteLength(k) + size(e), 0);
    return Buffer.byteLength(JSON.stringify(value));
  };
  return Object.entries(marshall(item, { removeUndefinedValues: true })).reduce((n, [k, v]) => n + Buffer.byteLength(k) + size(v as unknown as Record<string, unknown>), 0);
}

type Consumed = { TableName?: string; Table?: { CapacityUnits?: number }; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };

/** Installs a capacity counter on clients made from now on (in this process): units by table and index. */
function countUnits(): { take(): { writes: Record<string, number>; reads: number }; remove(): void } {
  let writes: Record<string, number> = {};
  let reads = 0;
  (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK] = (client: { middlewareStack: { add(m: unknown, o: object): void } }) =>
    client.middlewareStack.add(
      (next: (a: { input: Record<string, unknown> }) => Promise<{ output: { ConsumedCapacity?: Consumed | Consumed[] } }>, ctx: { commandName?: string }) =>
        async (args: { input: Record<string, unknown> }) => {
          args.input.ReturnConsumedCapacity = 'INDEXES';
          const out = await next(args);
          const list = ([] as Consumed[]).concat(out.output.ConsumedCapacity ?? []);
          const read = /Get|Query|Scan/.test(ctx.commandName ?? '');
          for (const c of list) {
            const table = (c.TableName ?? '?').replace(/^bench-holds-\d+-/, '');
            if (read) reads += (c.Table?.CapacityUnits ?? 0) + Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((n, i) => n + (i.CapacityUnits ?? 0), 0);
            else {
              writes[table] = (writes[table] ?? 0) + (c.Table?.CapacityUnits ?? 0);
              for (const [index, i] of Object.entries(c.GlobalSecondaryIndexes ?? {})) writes[`${table} (${index})`] = (writes[`${table} (${index})`] ?? 0) + (i.CapacityUnits ?? 0);
            }
          }
          return out;
        },
      { step: 'initialize', name: 'benchHoldUnits' },
    );
  return {
    take: () => {
      const taken = { writes, reads };
      [writes, reads] = [{}, 0];
      return taken;
    },
    remove: () => void delete (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK],
  };
}

/** Runs `runs` sequential hold + settle pairs on a fresh account. */
export async function measureHolds(dynamodbEndpoint: string, runs = 200): Promise<HoldFigures> {
  const saved = { ...process.env };
  try {
    return await run(dynamodbEndpoint, runs);
  } finally {
    for (const name of ['DYNAMODB_ENDPOINT', 'KEYS_TABLE', 'ACCOUNTS_TABLE', 'LEDGER_TABLE', 'RATE_LIMIT_RPM', 'RATE_LIMIT_CONCURRENT', 'RATE_LIMIT_FREE_RPM', 'RATE_LIMIT_FREE_CONCURRENT']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

async function run(dynamodbEndpoint: string, runs: number): Promise<HoldFigures> {
  process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint;
  for (const name of ['RATE_LIMIT_RPM', 'RATE_LIMIT_CONCURRENT']) process.env[name] = '0';
  const prefix = `bench-holds-${process.pid}`;
  process.env.KEYS_TABLE = `${prefix}-keys`;
  process.env.ACCOUNTS_TABLE = `${prefix}-accounts`;
  process.env.LEDGER_TABLE = `${prefix}-ledger`;
  process.env.RESPONSES_TABLE = `${prefix}-responses`;
  (await import('../functions/shared/config/env')).reloadConfig(); // read the names and limits just set
  const { documentClient, setDocumentClient } = await import('../functions/shared/store/dynamo');
  await ensureTables(documentClient(), { keys: process.env.KEYS_TABLE, accounts: process.env.ACCOUNTS_TABLE, ledger: process.env.LEDGER_TABLE, responses: process.env.RESPONSES_TABLE });
  const units = countUnits();
  setDocumentClient(undefined); // a client made now carries the counter
  try {
    return await pairs(runs, units);
  } finally {
    units.remove();
    setDocumentClient(undefined);
  }
}

async function pairs(runs: number, units: ReturnType<typeof countUnits>): Promise<HoldFigures> {
  const { documentClient } = await import('../functions/shared/store/dynamo');
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { createAccount } = await import('../functions/shared/accounts/account-store');
  const { createKey } = await import('../functions/shared/accounts/key-store');
  const { placeHold } = await import('../functions/shared/billing/hold');
  const { planHold } = await import('../functions/shared/billing/hold-plan');
  const { viewOf } = await import('../functions/shared/billing/account-state');
  const { settleHold } = await import('../functions/shared/billing/settle');
  const { newRequestId } = await import('../functions/shared/http/request-id');
  const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000_000 });
  const { keyHash } = await createKey(accountId, 'bench');
  const demand = { promptTokens: 60, outputTokens: 500, outputLimitPerChoice: 500, choices: 1, inputPrice: 2_637_500, outputPrice: 10_550_000 };
  const entry = { publicModel: 'gpt-4o', servedModel: 'gpt-4o', provider: 'openai', promptTokens: 40, completionTokens: 20, inputPrice: 2_637_500, outputPrice: 10_550_000, usageEstimated: false, fallbackPath: [], status: 'complete' as const };
  const holds: number[] = [];
  const settles: number[] = [];
  const unitsOf = { hold: {} as Record<string, number>, settle: {} as Record<string, number>, reads: 0 };
  const addUnits = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  };
  const item = async (table: string, key: Record<string, string>) => (await documentClient().send(new GetCommand({ TableName: table, Key: key }))).Item ?? {};
  const itemBytes = { account: 0, accountFiveKeys: 0, holdsInFlight: {} as Record<number, number>, ledgerSettled: 0 };
  let cpu = 0;
  for (let i = 0; i < runs; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const h = await placeHold({ accountId, keyHash, requestId: newRequestId(), publicModel: 'gpt-4o', demand, promptTokensEstimate: 60, expiresAt: Date.now() + 60_000 }, () => undefined);
    const t1 = performance.now();
    const afterHold = units.take();
    const cpuHold = process.cpuUsage(cpu0);
    const cpu1 = process.cpuUsage();
    const t1b = performance.now();
    await settleHold(h, { kind: 'bill', entry });
    const t2 = performance.now();
    const used = process.cpuUsage(cpu1);
    const afterSettle = units.take();
    if (i >= 10) {
      addUnits(unitsOf.hold, afterHold.writes);
      addUnits(unitsOf.settle, afterSettle.writes);
      unitsOf.reads += afterHold.reads + afterSettle.reads;
      holds.push(t1 - t0);
      settles.push(t2 - t1b);
      cpu += used.user + used.system + cpuHold.user + cpuHold.system;
    }
    if (i === 0) itemBytes.ledgerSettled = dynamoItemBytes(await item(process.env.LEDGER_TABLE ?? '', { accountId, requestId: h.requestId }));
    units.take();
  }
  itemBytes.account = dynamoItemBytes(await item(process.env.ACCOUNTS_TABLE ?? '', { accountId }));
  for (let k = 1; k < 5; k++) await createKey(accountId, `bench ${k}`);
  itemBytes.accountFiveKeys = dynamoItemBytes(await item(process.env.ACCOUNTS_TABLE ?? '', { accountId }));
  itemBytes.holdsInFlight = await sizesInFlight(accountId, keyHash, demand, (key) => item(process.env.ACCOUNTS_TABLE ?? '', key));
  const perPair = (u: Record<string, number>) => Object.fromEntries(Object.entries(u).map(([k, v]) => [k, v / Math.max(1, holds.length)]));
  const state = viewOf(accountId)?.state;
  const planRuns = 10_000;
  const p0 = process.cpuUsage();
  for (let i = 0; i < planRuns && state; i++) planHold({ state, h16: keyHash.slice(0, 16), demand, limits: { rpm: 600, concurrent: 50 }, now: Date.now() });
  const planned = process.cpuUsage(p0);
  return {
    runs: holds.length,
    holdP50Ms: percentile(holds, 50),
    holdP99Ms: percentile(holds, 99),
    settleP50Ms: percentile(settles, 50),
    cpuPerPairUs: cpu / Math.max(1, holds.length),
    planCpuUs: (planned.user + planned.system) / planRuns,
    units: { hold: perPair(unitsOf.hold), settle: perPair(unitsOf.settle), readsPerPair: unitsOf.reads / Math.max(1, holds.length) },
    itemBytes,
  };
}

/** The account item's size with 0, 1, 5 and 50 holds in flight (then cancelled), bytes. */
async function sizesInFlight(accountId: string, keyHash: string, demand: HoldDemandLike, read: (key: Record<string, string>) => Promise<Record<string, unknown>>): Promise<Record<number, number>> {
  const { placeHold } = await import('../functions/shared/billing/hold');
  const { settleHold } = await import('../functions/shared/billing/settle');
  const { newRequestId } = await import('../functions/shared/http/request-id');
  const sizes: Record<number, number> = { 0: dynamoItemBytes(await read({ accountId })) };
  const placed = [];
  for (const n of [1, 5, 50]) {
    while (placed.length < n) placed.push(await placeHold({ accountId, keyHash, requestId: newRequestId(), publicModel: 'gpt-4o', demand, promptTokensEstimate: 60, expiresAt: Date.now() + 60_000 }, () => undefined));
    sizes[n] = dynamoItemBytes(await read({ accountId }));
  }
  for (const h of placed) await settleHold(h, { kind: 'cancel' });
  return sizes;
}

type HoldDemandLike = { promptTokens: number; outputTokens: number; outputLimitPerChoice: number; choices: number; inputPrice: number; outputPrice: number };

const unitsText = (u: Record<string, number>): string =>
  `${Object.values(u).reduce((a, b) => a + b, 0).toFixed(1)} (${Object.entries(u).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')})`;
const unitsTotal = (f: HoldFigures): number => [...Object.values(f.units.hold), ...Object.values(f.units.settle)].reduce((a, b) => a + b, 0);

/** The report section. */
export function renderHolds(f: HoldFigures): string {
  return [
    '## What a hold adds (issue 10)',
    '',
    `${f.runs} sequential hold + settle pairs against this run's DynamoDB Local (one account item), measured in the bench process:`,
    '',
    '| figure | value |',
    '|---|---|',
    `| hold write (UpdateItem of the account, with the inline hold), p50 / p99 | ${f.holdP50Ms.toFixed(2)} / ${f.holdP99Ms.toFixed(2)} ms |`,
    `| settle write (TransactWriteItems: ledger Put + account Update), p50 | ${f.settleP50Ms.toFixed(2)} ms |`,
    `| CPU per request for hold + settle (planning, expressions, SDK, HTTP) | ${f.cpuPerPairUs.toFixed(0)} µs |`,
    `| of which planning a hold from the view (pure CPU) | ${f.planCpuUs.toFixed(1)} µs |`,
    `| write units per hold (UpdateItem) | ${unitsText(f.units.hold)} |`,
    `| write units per settle (TransactWriteItems) | ${unitsText(f.units.settle)} |`,
    `| read units per request (account reads when the view is stale) | ${f.units.readsPerPair.toFixed(2)} |`,
    `| item sizes (DynamoDB's rule): account with 1 key / 5 keys; ledger entry | ${f.itemBytes.account} / ${f.itemBytes.accountFiveKeys} B; ${f.itemBytes.ledgerSettled} B |`,
    `| account item (5 keys) with 0 / 1 / 5 / 50 holds in flight | ${[0, 1, 5, 50].map((n) => f.itemBytes.holdsInFlight[n] ?? 0).join(' / ')} B |`,
    '',
    'A single write costs 1 write unit per KB of the item, a transactional one 2. The hold is one UpdateItem of the account',
    'item that also keeps a compact inline copy of the hold (`holds.<requestId>`, ~90 B) for the orphan sweep; the settle',
    'Puts the ledger entry and updates the account in one transaction. No index is written. While the account item stays',
    `under 1 KB (a handful of keys, a few holds in flight), that is ${unitsTotal(f)} write units per request ($${((unitsTotal(f) * 0.625)).toFixed(2)} per 1M requests at $0.625 per million write units).`,
    '',
    'Time to first token: with a fresh view of the account (the warm path) the hold is written while the upstream',
    'connects and adds max(0, hold − upstream first token), i.e. nothing when the upstream takes longer than the',
    'hold; with a cold or stale view (first request of a container, or after ACCOUNT_CACHE_TTL_MS) it adds the',
    'hold write above plus one account read. The settle runs after the last byte: it adds nothing the client waits for.',
    '',
  ].join('\n');
}

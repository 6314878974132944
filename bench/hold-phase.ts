/**
 * What a hold adds (issue 10): the hold's TransactWriteItems and its settle, measured in this process
 * against the bench's DynamoDB Local, on an account of their own. Reported: the hold's wall time
 * (p50/p99 ms) — added to time-to-first-token only when the container's view of the account cannot
 * predict it (a cold or stale view: the hold is then written before the upstream call; with a fresh
 * view it is written while the upstream connects, and adds max(0, hold − upstream first token)) —
 * and the CPU of one hold plus its settle (µs), the planning, expressions and SDK work included.
 */
import { ensureTables } from '../local/dynamodb-local';

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
  const { documentClient } = await import('../functions/shared/store/dynamo');
  await ensureTables(documentClient(), { keys: process.env.KEYS_TABLE, accounts: process.env.ACCOUNTS_TABLE, ledger: process.env.LEDGER_TABLE, responses: process.env.RESPONSES_TABLE });
  const { createAccount } = await import('../functions/shared/accounts/account-store');
  const { createKey } = await import('../functions/shared/accounts/key-store');
  const { placeHold } = await import('../functions/shared/billing/hold');
  const { planHold } = await import('../functions/shared/billing/hold-plan');
  const { viewOf } = await import('../functions/shared/billing/account-state');
  const { settleHold } = await import('../functions/shared/billing/settle');
  const { newRequestId } = await import('../functions/shared/billing/request-id');
  const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000_000 });
  const { keyHash } = await createKey(accountId, 'bench');
  const demand = { promptTokens: 60, outputTokens: 500, outputLimitPerChoice: 500, choices: 1, inputPrice: 2_637_500, outputPrice: 10_550_000 };
  const entry = { publicModel: 'gpt-4o', servedModel: 'gpt-4o', provider: 'openai', promptTokens: 40, completionTokens: 20, inputPrice: 2_637_500, outputPrice: 10_550_000, usageEstimated: false, fallbackPath: [], status: 'complete' as const };
  const holds: number[] = [];
  const settles: number[] = [];
  let cpu = 0;
  for (let i = 0; i < runs; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const h = await placeHold({ accountId, keyHash, requestId: newRequestId(), publicModel: 'gpt-4o', demand, promptTokensEstimate: 60, expiresAt: Date.now() + 60_000 }, () => undefined);
    const t1 = performance.now();
    await settleHold(h, { kind: 'bill', entry });
    const t2 = performance.now();
    const used = process.cpuUsage(cpu0);
    if (i >= 10) {
      holds.push(t1 - t0);
      settles.push(t2 - t1);
      cpu += used.user + used.system;
    }
  }
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
  };
}

/** The report section. */
export function renderHolds(f: HoldFigures): string {
  return [
    '## What a hold adds (issue 10)',
    '',
    `${f.runs} sequential hold + settle pairs against this run's DynamoDB Local (one account item), measured in the bench process:`,
    '',
    '| figure | value |',
    '|---|---|',
    `| hold write (TransactWriteItems: ledger Put + account Update), p50 / p99 | ${f.holdP50Ms.toFixed(2)} / ${f.holdP99Ms.toFixed(2)} ms |`,
    `| settle write (ledger Update + account Update), p50 | ${f.settleP50Ms.toFixed(2)} ms |`,
    `| CPU per request for hold + settle (planning, expressions, SDK, HTTP) | ${f.cpuPerPairUs.toFixed(0)} µs |`,
    `| of which planning a hold from the view (pure CPU) | ${f.planCpuUs.toFixed(1)} µs |`,
    '',
    'Time to first token: with a fresh view of the account (the warm path) the hold is written while the upstream',
    'connects and adds max(0, hold − upstream first token), i.e. nothing when the upstream takes longer than the',
    'hold; with a cold or stale view (first request of a container, or after ACCOUNT_CACHE_TTL_MS) it adds the',
    'hold write above plus one account read. The settle runs after the last byte: it adds nothing the client waits for.',
    '',
  ].join('\n');
}

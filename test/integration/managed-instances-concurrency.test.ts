import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { accountItem, ledgerEntries } from '../support/ledger';

/**
 * docs/managed-instances.md §3: on Lambda Managed Instances one execution environment
 * runs many invocations at once through ONE module instance, so the state a module keeps — credit
 * leases, circuit breakers, the account and key caches — is shared by them. Here the real chat handler,
 * imported once in this process behind the local Function URL, serves hundreds of overlapping buffered
 * and streamed invocations of several accounts (leases on, rate limits off) against DynamoDB Local and
 * the simulator, while gpt-4o-mini's upstream fails (breakers in play). Per account: nothing admitted
 * beyond what the balance held (no overdraft), Σ ledger = the balance change to the nano-dollar, each
 * answer's `usage.cost` is its own ledger entry and no entry belongs to another account's request, and
 * refused requests never reached an upstream; the shared breaker ends open for everyone.
 */
let gw: RunningGateway;
const saved = { ...process.env };

beforeAll(async () => {
  Object.assign(process.env, {
    CREDIT_LEASE_VALIDITY_MS: '60000',
    CREDIT_LEASE_IDLE_MS: '60000',
    CREDIT_LEASE_SHARE_PERCENT: '50',
    RATE_LIMIT_RPM: '0',
    RATE_LIMIT_CONCURRENT: '0',
    RATE_LIMIT_FREE_RPM: '0',
    RATE_LIMIT_FREE_CONCURRENT: '0',
  });
  gw = await startGateway({ tablePrefix: `mi-concurrency-${process.pid}` });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  process.env = { ...saved };
});

const USD = 1_000_000_000;
const sim = () => {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
};

interface Tenant {
  accountId: string;
  client: OpenAI;
  creditNanoUsd: number;
}

async function tenant(creditNanoUsd: number): Promise<Tenant> {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd });
  const key = await createKey(accountId, 'mi');
  return { accountId, creditNanoUsd, client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }) };
}

/** One answer: its request id, the model that served it and its usage.cost (nano-USD); or the refusal's status. */
type Outcome = { ok: true; requestId: string; model: string | null; costNano: number } | { ok: false; status: number | undefined; marker: string };

/** One request of `t`, buffered or streamed, with a body no other request has (`marker`). */
async function ask(t: Tenant, marker: string, stream: boolean): Promise<Outcome> {
  const base = { model: 'gpt-4o-mini', max_tokens: 500, messages: [{ role: 'user' as const, content: `question ${marker}` }] };
  try {
    if (!stream) {
      const { data, response } = await t.client.chat.completions.create(base).withResponse();
      return {
        ok: true,
        requestId: response.headers.get('x-request-id') ?? '',
        model: response.headers.get('x-modelmux-model'),
        costNano: Math.round(((data.usage as { cost?: number }).cost ?? Number.NaN) * USD),
      };
    }
    const { data, response } = await t.client.chat.completions.create({ ...base, stream: true, stream_options: { include_usage: true } }).withResponse();
    let cost = Number.NaN;
    for await (const chunk of data) cost = (chunk.usage as { cost?: number } | null)?.cost ?? cost;
    return {
      ok: true,
      requestId: response.headers.get('x-request-id') ?? '',
      model: response.headers.get('x-modelmux-model'),
      costNano: Math.round(cost * USD),
    };
  } catch (err) {
    return { ok: false, status: (err as { status?: number }).status, marker };
  }
}

async function ledgerOf(accountId: string): Promise<Array<Record<string, unknown>>> {
  return (await ledgerEntries(accountId)).filter((e) => e.status !== 'held');
}

/** Samples the account item every 20 ms until stopped; the most it held at once (nano-USD: leases and holds). */
function watchHeld(t: Tenant): { stop: () => Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, Number((await accountItem(t.accountId)).heldNanoUsd ?? 0));
      // Kept: the sampler's pace while the burst runs (it waits for no condition; it samples until stopped).
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return { stop: async () => ((running = false), await loop, peak) };
}

describe('per-environment state under N concurrent invocations through one module instance', { timeout: 240_000 }, () => {
  it('leases, breakers and caches shared by 300 overlapping invocations of 4 accounts: no overdraft, Σ ledger = debit per account, nothing crosses accounts', async () => {
    const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
    const { returnAllLeases } = await import('../../functions/shared/billing/lease');
    breaker.reset();
    sim().reset();
    // A hold of gpt-4o-mini at 500 output tokens is ~$0.0027 (its plan may fall back to claude-haiku-4-5),
    // and a lease takes half of what is available: three accounts with $1 (a lease covers ~185 at once)
    // and one with $0.05 asked for 120 at once (~$0.32 at the peak: its leases run dry, then
    // per-request holds, then 402s).
    const tenants = [await tenant(USD), await tenant(USD), await tenant(USD), await tenant(USD / 20)];
    const perTenant = [60, 60, 60, 120];
    // gpt-4o-mini's upstream is down for the whole burst: attempts fail over to the equivalent and the
    // shared breaker (same module state for every invocation) opens.
    sim().setFault({ provider: 'openai', model: 'gpt-4o-mini' }, { kind: 'status', status: 503 });
    sim().setChunkDelay(15); // answers last long enough that the invocations overlap
    const upstreamBefore = sim().requests.length;
    let outcomes: Outcome[][];
    const tight = watchHeld(tenants[3] as Tenant);
    try {
      outcomes = await Promise.all(
        tenants.map((t, ti) =>
          Promise.all(Array.from({ length: perTenant[ti] as number }, (_, i) => ask(t, `t${ti}-r${i}-${t.accountId.slice(-6)}`, i % 2 === 1))),
        ),
      );
    } finally {
      sim().setChunkDelay(0);
    }
    // What the store held for the $0.05 account (its leases and per-request holds) never passed its balance.
    expect(await tight.stop()).toBeLessThanOrEqual(USD / 20);
    const upstream = sim().requests.slice(upstreamBefore);
    sim().clearFaults();

    for (const [ti, t] of tenants.entries()) {
      const mine = outcomes[ti] as Outcome[];
      const ok = mine.filter((o): o is Extract<Outcome, { ok: true }> => o.ok);
      const refused = mine.filter((o): o is Extract<Outcome, { ok: false }> => !o.ok);
      expect(ok.length, `tenant ${ti} answered`).toBeGreaterThan(0);
      for (const r of refused) expect(r.status, `tenant ${ti} refusal`).toBe(402);
      // A refused request never reached an upstream (its body is nowhere in the simulator's log).
      for (const r of refused) expect(upstream.some((u) => JSON.stringify(u.body).includes(r.marker))).toBe(false);
      for (const o of ok) expect(Number.isInteger(o.costNano) && o.costNano > 0).toBe(true);
      // Every answer was served by the equivalent while gpt-4o-mini was down.
      for (const o of ok) expect(o.model).not.toBe('gpt-4o-mini');

      // Settles run after the answers: wait for one ledger entry per answer.
      const entries = await vi.waitFor(
        async () => {
          const found = await ledgerOf(t.accountId);
          if (found.length < ok.length) throw new Error(`tenant ${ti}: ${found.length} of ${ok.length} ledger entries`);
          return found;
        },
        { timeout: 20_000, interval: 50 },
      );
      // This account's ledger holds exactly its own answered requests, each at the cost its answer showed.
      expect(entries.map((e) => e.requestId).sort()).toEqual(ok.map((o) => o.requestId).sort());
      const costOf = new Map(entries.map((e) => [e.requestId as string, Number(e.costNanoUsd)]));
      for (const o of ok) expect(costOf.get(o.requestId), o.requestId).toBe(o.costNano);
    }
    // The leases were really used (the $1 accounts' entries name one), then everything is returned.
    for (const t of tenants.slice(0, 3)) expect((await ledgerOf(t.accountId)).some((e) => typeof e.leaseId === 'string')).toBe(true);
    await returnAllLeases();

    for (const t of tenants) {
      const entries = await ledgerOf(t.accountId);
      const sum = entries.reduce((n, e) => n + Number(e.costNanoUsd), 0);
      const item = await accountItem(t.accountId);
      expect(item.holds).toEqual({});
      expect(item.heldNanoUsd).toBe(0);
      expect(item.creditNanoUsd as number).toBeGreaterThanOrEqual(0);
      // To the nano-dollar: what left the balance is what the ledger says, and what was used.
      expect(t.creditNanoUsd - (item.creditNanoUsd as number)).toBe(sum);
      expect(item.usedNanoUsd).toBe(sum);
    }

    // The shared breaker ended open: a fifth account, which never failed, skips gpt-4o-mini untried.
    const fifth = await tenant(USD);
    const before = sim().requests.filter((r) => r.model === 'gpt-4o-mini').length;
    const after = await ask(fifth, 'fifth account', false);
    expect(after.ok && after.model).not.toBe('gpt-4o-mini');
    expect(sim().requests.filter((r) => r.model === 'gpt-4o-mini').length).toBe(before);
    await returnAllLeases();
  });
});

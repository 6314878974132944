import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAwsCalls, isWrite } from '../../bench/aws-calls';
import { SDK_CLIENT_HOOK } from '../../functions/shared/store/dynamo';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * What a request costs in DynamoDB write units, as DynamoDB Local itself reports them
 * (ReturnConsumedCapacity on every call, bench/aws-calls.ts). Held per request: the hold is one
 * UpdateItem of the account item (1 WRU while it is ≤ 1 KB), the settle one TransactWriteItems of the
 * ledger entry and the account item (2 + 2 WRU): 5 in all, where the old layout (a held ledger item in
 * a GSI) took 12. On a credit lease (the default for an account with credit, docs/credit-leases.md):
 * the request's ledger entry alone, one PutItem (1 WRU); the lease's take and return are shared by
 * the requests it admits.
 */
let gw: RunningGateway;
let counter: ReturnType<typeof countAwsCalls>;
/** Function URL invocations ended so far: an ended invocation's writes have all been answered and counted. */
let invocationsEnded = 0;

beforeAll(async () => {
  counter = countAwsCalls(); // before any client is made, so the gateway's own client reports to it
  gw = await startGateway({ tablePrefix: `wru-${process.pid}`, onInvocation: () => void invocationsEnded++ });
});

afterAll(async () => {
  await gw?.close();
  delete (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK];
});

/** Two requests of one account; the writes of the second (the first warms the container: key lookup, account view, lease). */
async function measuredWrites(account: { accountId: string }, key: string, extra: Record<string, unknown> = {}) {
  const { usageSummary } = await import('../../functions/shared/billing/ledger');
  const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 });
  const ended = invocationsEnded;
  for (let round = 0; round < 2; round++) {
    counter.take();
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: `hello ${round}` }], ...extra });
    expect(r.choices[0]?.message.content).toBeTruthy();
    await expect.poll(async () => (await usageSummary(account.accountId)).requests, { timeout: 10_000, interval: 25 }).toBe(round + 1);
    // The entry is readable once DynamoDB stored it, which can be before the gateway's client has read
    // its answer (and the units it consumed): the invocation's end says every call of it was answered.
    await expect.poll(() => invocationsEnded, { timeout: 10_000, interval: 10 }).toBe(ended + round + 1);
  }
  // The calls of the measured request (the poll above reads only: Query).
  const calls = counter.take();
  return Object.fromEntries(
    Object.entries(calls)
      .filter(([op]) => isWrite(op))
      .map(([op, c]) => [op, { calls: c.calls, units: c.capacityUnits, errors: c.errors }]),
  );
}

async function accountWithKeys(opts: { freeTokens: number; creditNanoUsd: number }) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount(opts);
  const key = await createKey(account.accountId, 'wru');
  for (let k = 1; k < 4; k++) await createKey(account.accountId, `other ${k}`);
  return { account, key: key.key };
}

describe('write units per request', () => {
  it('a buffered chat request held per request costs 5 write units end to end (hold 1 + settle 4) on an account with a handful of keys', async () => {
    // Free tokens nearly gone (fewer than two requests' most): a request may draw on free tokens and credit
    // at once, so this account holds per request (lease-settle.ts leaseTerms).
    const { account, key } = await accountWithKeys({ freeTokens: 100, creditNanoUsd: 1_000_000_000 });
    expect(await measuredWrites(account, key)).toEqual({
      'DynamoDB.UpdateItem': { calls: 1, units: 1, errors: 0 }, // the hold
      'DynamoDB.TransactWriteItems': { calls: 1, units: 4, errors: 0 }, // the settle: ledger Put + account Update
    });
  });

  it('a buffered chat request on a free-token lease costs 1 write unit too: free tokens are leased like credit', async () => {
    const { account, key } = await accountWithKeys({ freeTokens: 1_000_000, creditNanoUsd: 1_000_000_000 });
    expect(await measuredWrites(account, key)).toEqual({
      'DynamoDB.PutItem': { calls: 1, units: 1, errors: 0 }, // the ledger entry
    });
  });

  // The end user and the session on the entry (at most 64 bytes each, DATA-MODEL §4) keep it within 1 KB.
  const longestIds = { user: 'u'.repeat(64), session_id: 's'.repeat(64) };

  it('an end user and a session of the longest accepted length keep the settle at 4 write units (ledger entry ≤ 1 KB)', async () => {
    const { account, key } = await accountWithKeys({ freeTokens: 100, creditNanoUsd: 1_000_000_000 });
    expect(await measuredWrites(account, key, longestIds)).toEqual({
      'DynamoDB.UpdateItem': { calls: 1, units: 1, errors: 0 },
      'DynamoDB.TransactWriteItems': { calls: 1, units: 4, errors: 0 },
    });
  });

  it('an end user and a session of the longest accepted length keep a leased entry at 1 write unit', async () => {
    const { account, key } = await accountWithKeys({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    expect(await measuredWrites(account, key, longestIds)).toEqual({ 'DynamoDB.PutItem': { calls: 1, units: 1, errors: 0 } });
  });

  it('a buffered chat request on a credit lease costs 1 write unit: its ledger entry, nothing before the answer', async () => {
    const { account, key } = await accountWithKeys({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    expect(await measuredWrites(account, key)).toEqual({
      'DynamoDB.PutItem': { calls: 1, units: 1, errors: 0 }, // the ledger entry
    });
  });
});

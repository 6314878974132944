import OpenAI from 'openai';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { holdsReturned } from '../support/settle-queue';
import { ledgerEntries } from '../support/ledger';

/**
 * Credit leases through the whole path (the official SDK, real HTTP, the real chat handler, DynamoDB
 * Local, the simulator), with CREDIT_LEASE_VALIDITY_MS on and rate limits off: buffered and streamed
 * answers ride this gateway instance's lease, each request's `usage.cost` is its ledger entry's, and
 * once the lease is returned the account's debit is the ledger's sum to the nano-dollar.
 */
let gw: RunningGateway;
const saved = { ...process.env };

beforeAll(async () => {
  Object.assign(process.env, {
    CREDIT_LEASE_VALIDITY_MS: '60000',
    CREDIT_LEASE_IDLE_MS: '60000',
    RATE_LIMIT_RPM: '0',
    RATE_LIMIT_CONCURRENT: '0',
    RATE_LIMIT_FREE_RPM: '0',
    RATE_LIMIT_FREE_CONCURRENT: '0',
  });
  gw = await startGateway({ tablePrefix: `leases-${process.pid}` });
});

afterAll(async () => {
  await gw?.close();
  process.env = { ...saved };
});

const USD = 1_000_000_000;

describe('credit leases through the chat route', { timeout: 180_000 }, () => {
  it('30 requests (buffered and streamed) on one lease: one ledger entry each naming it, usage.cost = the entry, Σ ledger = the debit once returned', async () => {
    const { createAccount } = await import('../../functions/shared/accounts/account-store');
    const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
    const { documentClient } = await import('../../functions/shared/store/dynamo');
    const { tableNames } = await import('../../functions/shared/store/tables');
    const { accountId } = await createAccount({ freeTokens: 0, creditNanoUsd: 5 * USD });
    const key = await createKey(accountId, 'lease');
    const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 });
    const raw = async () => (await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }))).Item!;

    const costs = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        if (i % 2 === 0) {
          const r = await client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 200, messages: [{ role: 'user', content: `lease ${i}` }] });
          return { requestId: r.id, cost: (r.usage as { cost?: number } | undefined)?.cost };
        }
        const s = await client.chat.completions.create({
          model: 'gpt-4o-mini',
          max_tokens: 200,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: `lease ${i}` }],
        });
        let usage: { cost?: number } | undefined;
        for await (const c of s) usage = (c.usage as { cost?: number } | null) ?? usage;
        return { requestId: '', cost: usage?.cost };
      }),
    );
    expect(costs.every((c) => typeof c.cost === 'number' && c.cost > 0)).toBe(true);
    // While the lease is out: it is the account's only hold.
    expect(Object.keys((await raw()).holds as object).every((id) => id.startsWith('lease_'))).toBe(true);

    // The settles run after the answers: wait for the 30 ledger entries, then return the lease.
    await vi.waitFor(async () => expect((await ledgerEntries(accountId)).length).toBeGreaterThanOrEqual(30), { timeout: 10_000 });
    await holdsReturned(accountId);
    const entries = await ledgerEntries(accountId);
    expect(entries).toHaveLength(30);
    expect(entries.every((e) => typeof e.leaseId === 'string' && e.leaseId.startsWith('lease_'))).toBe(true);
    const sum = entries.reduce((n, e) => n + Number(e.costNanoUsd), 0);
    // usage.cost (USD) is each entry's cost.
    expect(Math.round(costs.reduce((n, c) => n + c.cost! * USD, 0))).toBe(sum);
    const after = await raw();
    expect(after.holds).toEqual({});
    expect(after.heldNanoUsd).toBe(0);
    expect(after.usedNanoUsd).toBe(sum);
    expect(after.creditNanoUsd).toBe(5 * USD - sum);
  });
});

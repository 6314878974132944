import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { billingAtRest } from '../support/settle-queue';
import { accountItem, ledgerEntries } from '../support/ledger';

/**
 * Free tokens leased like credit (billing/lease.ts, lease-settle.ts `leaseTerms`), through the whole
 * path (the official SDK, the real chat handler, DynamoDB Local, the simulator): 200 requests at once on
 * an account with 1,000 free tokens, and on one with free tokens and $0.01, never use more free tokens
 * or credit than the account has; once every lease is back, the account's numbers are the ledger's sums
 * to the token and the nano-dollar; a leased request is charged as the per-request path charges it.
 */
let gw: RunningGateway;
const saved = { ...process.env };

beforeAll(async () => {
  Object.assign(process.env, {
    CREDIT_LEASE_IDLE_MS: '500',
    RATE_LIMIT_RPM: '0',
    RATE_LIMIT_CONCURRENT: '0',
    RATE_LIMIT_FREE_RPM: '0',
    RATE_LIMIT_FREE_CONCURRENT: '0',
  });
  gw = await startGateway({ tablePrefix: `free-leases-${process.pid}` });
});

afterAll(async () => {
  await gw?.close();
  process.env = { ...saved };
});

const USD = 1_000_000_000;

async function account(freeTokens: number, creditNanoUsd: number) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const { accountId } = await createAccount({ freeTokens, creditNanoUsd });
  const key = await createKey(accountId, 'free lease');
  return { accountId, client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }) };
}

/** `n` buffered requests at once; the statuses (200, or the refusal's). */
async function burst(client: OpenAI, n: number, tag: string): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      client.chat.completions
        .create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: `${tag} ${i}` }] })
        .then(() => 200)
        .catch((e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? 0) : 0)),
    ),
  );
}

describe('free tokens on a lease', { timeout: 180_000 }, () => {
  it('200 requests at once on 1,000 free tokens: never more tokens used than granted; the account is the ledger to the token', async () => {
    const { accountId, client } = await account(1_000, 0);
    const statuses = await burst(client, 200, 'free');
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    await billingAtRest(gw, accountId);
    const entries = await ledgerEntries(accountId);
    expect(entries).toHaveLength(statuses.filter((s) => s === 200).length);
    // Some rode a lease (else this tests nothing), each paid by free tokens alone.
    const leased = entries.filter((e) => e.leaseId !== undefined);
    expect(leased.length).toBeGreaterThan(0);
    for (const e of leased) expect(e).toMatchObject({ costNanoUsd: 0, freeTokensUsed: e.promptTokens + e.completionTokens });
    const used = entries.reduce((n, e) => n + e.freeTokensUsed, 0);
    expect(used).toBeLessThanOrEqual(1_000);
    const after = await accountItem(accountId);
    expect(after.holds).toEqual({});
    expect(after.heldFreeTokens).toBe(0);
    expect(after.freeTokens).toBe(1_000 - used);
    expect(after.usedFreeTokens ?? 0).toBe(used);
    expect(after.creditNanoUsd).toBe(0);
  });

  it('200 requests at once on free tokens and $0.01: no more free tokens or credit used than there were; money adds up to the nano-dollar', async () => {
    const { accountId, client } = await account(2_000, USD / 100);
    const statuses = await burst(client, 200, 'mixed');
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    await billingAtRest(gw, accountId);
    const entries = await ledgerEntries(accountId);
    expect(entries).toHaveLength(statuses.filter((s) => s === 200).length);
    const free = entries.reduce((n, e) => n + e.freeTokensUsed, 0);
    const cost = entries.reduce((n, e) => n + e.costNanoUsd, 0);
    expect(free).toBeLessThanOrEqual(2_000);
    expect(cost).toBeLessThanOrEqual(USD / 100);
    expect(entries.some((e) => e.leaseId !== undefined)).toBe(true);
    const after = await accountItem(accountId);
    expect(after.holds).toEqual({});
    expect(after.heldFreeTokens).toBe(0);
    expect(after.heldNanoUsd).toBe(0);
    expect(after.freeTokens).toBe(2_000 - free);
    expect(after.creditNanoUsd).toBe(USD / 100 - cost);
    expect(after.creditNanoUsd).toBeGreaterThanOrEqual(0);
  });
});

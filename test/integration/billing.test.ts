import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { holdsReturned } from '../support/settle-queue';

/**
 * Billing through the whole path: requests answered by the simulator, ledger and account in
 * DynamoDB Local. The ledger's sum must equal what the account lost, exactly, under concurrency.
 */

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `billing-${process.pid}` });
});

afterAll(async () => {
  await gw?.close();
});

async function newClient(opts: { freeTokens: number; creditNanoUsd: number }): Promise<{ client: OpenAI; accountId: string }> {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount(opts);
  const key = await createKey(account.accountId, 'test');
  return { client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }), accountId: account.accountId };
}

/** The ledger is written after the response; wait (≤ 5 s) until `n` entries are there. */
async function waitForLedger(accountId: string, n: number) {
  const { usageSummary } = await import('../../functions/shared/billing/ledger');
  return vi.waitFor(
    async () => {
      const s = await usageSummary(accountId);
      if (s.requests < n) throw new Error(`ledger never reached ${n} entries`);
      return s;
    },
    { timeout: 5_000, interval: 50 },
  );
}

describe('billing', () => {
  it('50 concurrent billed requests leave a ledger whose sum equals the account debit exactly', async () => {
    const { getAccount } = await import('../../functions/shared/accounts/account-store');
    // A few free tokens, so some requests straddle the free/paid boundary; then $1 of credit.
    const { client, accountId } = await newClient({ freeTokens: 300, creditNanoUsd: 1_000_000_000 });
    const before = await getAccount(accountId, { consistent: true });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 === 0
          ? client.chat.completions.create({ model: 'gpt-4o', max_tokens: 200, messages: [{ role: 'user', content: `request number ${i}` }] })
          : (async () => {
              const s = await client.chat.completions.create({
                model: 'gpt-4o',
                max_tokens: 200,
                messages: [{ role: 'user', content: `stream number ${i}` }],
                stream: true,
                stream_options: { include_usage: true },
              });
              let usage: OpenAI.CompletionUsage | undefined;
              for await (const c of s) usage = c.usage ?? usage;
              return { usage };
            })(),
      ),
    );
    const billedTokens = results.reduce((sum, r) => sum + (r.usage?.prompt_tokens ?? 0) + (r.usage?.completion_tokens ?? 0), 0);
    const summary = await waitForLedger(accountId, 50);
    // Once the free tokens are spent, requests ride this gateway's credit lease: the debit is known once it is returned.
    await holdsReturned(accountId);
    const after = await getAccount(accountId, { consistent: true });
    expect(summary.requests).toBe(50);
    expect(summary.promptTokens + summary.completionTokens).toBe(billedTokens);
    expect((before?.creditNanoUsd ?? 0) - (after?.creditNanoUsd ?? 0)).toBe(summary.costNanoUsd);
    expect((before?.freeTokens ?? 0) - (after?.freeTokens ?? 0)).toBe(summary.freeTokensUsed);
    // Held free tokens count as spent while a request is in flight, so a request running beside
    // another that holds the last free tokens pays credit: free tokens are conserved, none is held after.
    expect(summary.freeTokensUsed + (after?.freeTokens ?? 0)).toBe(300);
    expect(summary.freeTokensUsed).toBeGreaterThan(0);
    expect(after?.heldFreeTokens).toBe(0);
    expect(after?.heldNanoUsd).toBe(0);
    expect(summary.costNanoUsd).toBeGreaterThan(0);
  });

  it('refuses an account with no free tokens and no credit with 402, before any upstream call', async () => {
    const { client } = await newClient({ freeTokens: 0, creditNanoUsd: 0 });
    const sim = gw.simulator;
    if (sim === undefined) throw new Error('simulator expected');
    const before = sim.requests.length;
    const err = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    const stream = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e: unknown) => e);
    expect((stream as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(sim.requests.length).toBe(before);
  });

  it('bills a stream from the upstream usage, with the served model and its fallback path', async () => {
    const { client, accountId } = await newClient({ freeTokens: 200_000, creditNanoUsd: 0 });
    const s = await client.chat.completions.create({
      model: 'minimax',
      messages: [{ role: 'user', content: 'bill this stream' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of s) usage = c.usage ?? usage;
    const summary = await waitForLedger(accountId, 1);
    expect(summary.promptTokens).toBe(usage?.prompt_tokens);
    expect(summary.completionTokens).toBe(usage?.completion_tokens);
    expect(summary.freeTokensUsed).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
    expect(summary.costNanoUsd).toBe(0);
  });
});

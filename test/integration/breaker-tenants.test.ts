import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * Through the real gateway and the simulator: requests of one account whose content
 * makes gpt-4o's upstream answer 5xx re-route that account only; a real outage (5xx for requests of
 * several accounts) still opens gpt-4o's breaker for everyone.
 */
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `breaker-tenants-${process.pid}` });
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

beforeEach(async () => {
  sim().reset();
  const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
  breaker.reset();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

async function tenant(): Promise<OpenAI> {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
  return new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(account.accountId, 'tenant')).key, maxRetries: 0 });
}

/** One gpt-4o request; which model served it. */
async function servedBy(client: OpenAI, content: string): Promise<string | null> {
  const { response } = await client.chat.completions.create({ model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content }] }).withResponse();
  return response.headers.get('x-modelmux-model');
}

describe('circuit breakers one tenant cannot trip for others', () => {
  it("account A's three content-failing requests re-route A alone; account B's gpt-4o is still served by gpt-4o", async () => {
    const [a, b] = await Promise.all([tenant(), tenant()]);
    // Only A sends while gpt-4o's upstream fails: as when A's own content makes it answer 5xx.
    sim().setFault({ provider: 'openai', model: 'gpt-4o' }, { kind: 'status', status: 500 });
    for (let i = 0; i < 3; i++) expect(await servedBy(a, `n=2 and a schema it cannot handle ${i}`)).toBe('claude-3-5-sonnet');
    sim().clearFaults();
    expect(await servedBy(b, 'an ordinary question')).toBe('gpt-4o');
    // A's own breaker is open: A keeps being served by the equivalent until its cooldown ends.
    expect(await servedBy(a, 'A again')).toBe('claude-3-5-sonnet');
  }, 60_000);

  it("a real outage, gpt-4o failing for three accounts' different requests, opens the breaker for everyone", async () => {
    const [a, b, c, d] = await Promise.all([tenant(), tenant(), tenant(), tenant()]);
    sim().setFault({ provider: 'openai', model: 'gpt-4o' }, { kind: 'status', status: 503 });
    expect(await servedBy(a, 'question one')).toBe('claude-3-5-sonnet');
    expect(await servedBy(b, 'question two')).toBe('claude-3-5-sonnet');
    expect(await servedBy(c, 'question three')).toBe('claude-3-5-sonnet');
    sim().clearFaults();
    const before = sim().requests.filter((r) => r.model === 'gpt-4o').length;
    expect(await servedBy(d, 'a fourth account, never failed')).toBe('claude-3-5-sonnet');
    expect(sim().requests.filter((r) => r.model === 'gpt-4o').length).toBe(before); // skipped, not tried
  }, 60_000);
});

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { untilSettled } from '../support/ledger';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/**
 * No free lunch: when DynamoDB cannot be reached, the client gets a clear 503 and no upstream call is
 * made, so no token is served that cannot be billed — every request writes its hold before its call,
 * warm caches or not. A request already answering when DynamoDB goes away is still billed: its settle
 * is handed to the settle queue (billing/settle-queue.ts), which applies it once DynamoDB is back
 * (test/integration/settle-durability.test.ts proves the landing). This file reaches the run's DynamoDB
 * Local through its own proxy, so it can take the store away (connections refused, open ones cut, as
 * when DynamoDB Local stops); the tests run in order, the store stays down after the first.
 */

let ddb: TcpProxy;
let gw: RunningGateway;
/** A key of another account, created while the store was up, never used: this container has not cached it. */
let freshKey: string;

const saved = { ...process.env };

beforeAll(async () => {
  // The per-request path: an account on a lease answers from its slice while the store is away, its
  // entries queued or written by the lease's return (docs/credit-leases.md); this file proves the hold.
  process.env.CREDIT_LEASE_VALIDITY_MS = '0';
  ddb = await startTcpProxy(Number(new URL(inject('dynamodbEndpoint')).port), 0);
  gw = await startGateway({ dynamodbEndpoint: ddb.endpoint, tablePrefix: `outage-${process.pid}` });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  freshKey = (await createKey((await createAccount()).accountId, 'fresh')).key;
});

afterAll(async () => {
  vi.restoreAllMocks();
  await gw?.close();
  await ddb?.close();
  process.env = { ...saved };
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

describe('DynamoDB outage', () => {
  it('a request answering when the store dies has its settle queued durably; the next one gets 503 with no upstream call', async () => {
    const { logger } = await import('../../functions/shared/observability/logger');
    const warn = vi.spyOn(logger, 'warn');
    const warm = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    // Warm the dev key's caches (key and account view) while the store is up.
    await warm.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'warm up' }] });
    await untilSettled(gw.accountId); // its settle has landed: the account holds nothing

    // A stream slow enough (~300 ms a chunk) that DynamoDB is gone before it ends and settles.
    sim().setChunkDelay(300);
    const { data: stream, response } = await warm.chat.completions
      .create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'served while the store dies' }], stream: true })
      .withResponse();
    const requestId = response.headers.get('x-request-id');
    let finished = false;
    const reading = (async () => {
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      finished = true;
      return text;
    })();
    await ddb.stop();
    expect(finished).toBe(false); // the store died mid-answer, as intended
    sim().setChunkDelay(0);
    expect(await reading).toContain('Echo: served while the store dies');

    await vi.waitFor(() => expect(warn.mock.calls.some(([m]) => m === 'settle queued')).toBe(true), { timeout: 10_000, interval: 25 });
    expect(warn).toHaveBeenCalledWith('settle queued', expect.objectContaining({ requestId, kind: 'bill' }));

    // The same warm key, its caches still fresh: the hold cannot be written → 503, no upstream call.
    const before = sim().requests.length;
    const next = await warm.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the store died' }] })
      .catch((e: unknown) => e);
    expect(next).toBeInstanceOf(OpenAI.InternalServerError);
    expect((next as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((next as Error).message).toMatch(/data store is unavailable/);
    expect(sim().requests.length).toBe(before);
  });

  it('answers 503 with no upstream call for a key this container has not seen, and for a warm key while the store is down', async () => {
    const warm = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    const cold = new OpenAI({ baseURL: gw.baseUrl, apiKey: freshKey, maxRetries: 0 });
    const before = sim().requests.length;
    const err = await cold.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err).toMatchObject({ status: 503, type: 'server_error', code: 'store_unavailable' }); // not the upstream's code
    expect((err as Error).message).toMatch(/data store is unavailable/);
    expect(sim().requests.length).toBe(before);

    const warmErr = await warm.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }], stream: true })
      .catch((e: unknown) => e);
    expect(warmErr).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(sim().requests.length).toBe(before);
  });
});

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * No free lunch: when DynamoDB cannot be reached, the client gets a clear 503 and no upstream call is
 * made, so no token is served that cannot be billed. This file owns its DynamoDB Local so it can stop it.
 *
 * The accepted, bounded exception (billing/admit.ts): a warm container that has not yet seen the store
 * fail admits a key it has cached. The request in flight when DynamoDB goes away is served; its ledger
 * write is the first store call to fail, and is logged at error level with the entry to replay; every
 * request after that gets 503 before any upstream call. The tests run in order: the store stops in the
 * first one and stays down.
 */

let ddb: Awaited<ReturnType<typeof startDynamoDbLocal>>;
let gw: RunningGateway;
/** A key of another account, created while the store was up, never used: this container has not cached it. */
let freshKey: string;

beforeAll(async () => {
  ddb = await startDynamoDbLocal();
  gw = await startGateway({ dynamodbEndpoint: ddb.endpoint, tablePrefix: 'outage' });
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/key-store');
  freshKey = (await createKey((await createAccount()).accountId, 'fresh')).key;
});

afterAll(async () => {
  vi.restoreAllMocks();
  await gw?.close();
  await ddb?.stop();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

describe('DynamoDB outage', () => {
  it('after a failed settle: the served request is logged for replay, and the next one gets 503 with no upstream call', async () => {
    const { logger } = await import('../../functions/shared/observability/logger');
    const error = vi.spyOn(logger, 'error');
    const warm = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    // Warm the dev key's caches (key and balance) while the store is up.
    await warm.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'warm up' }] });
    await new Promise((r) => setTimeout(r, 300)); // let its settle finish

    // A stream slow enough (~300 ms a chunk) that DynamoDB is gone before it ends and settles.
    sim().setChunkDelay(300);
    const { data: stream, response } = await warm.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'served while the store dies' }], stream: true }).withResponse();
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

    for (let i = 0; i < 200 && !error.mock.calls.some(([m]) => m === 'ledger write failed; replay this entry'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(error).toHaveBeenCalledWith('ledger write failed; replay this entry', expect.objectContaining({
      replayable: expect.objectContaining({ accountId: gw.accountId, requestId, publicModel: 'gpt-4o-mini', servedModel: 'gpt-4o-mini', provider: 'openai', status: 'complete' }),
    }));
    const replayable = (error.mock.calls.find(([m]) => m === 'ledger write failed; replay this entry')?.[1] as { replayable: { promptTokens: number; completionTokens: number } }).replayable;
    expect(replayable.promptTokens).toBeGreaterThan(0);
    expect(replayable.completionTokens).toBeGreaterThan(0);

    // The same warm key, its caches still fresh: the failed settle makes admission read the store → 503.
    const before = sim().requests.length;
    const next = await warm.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the failed settle' }] }).catch((e: unknown) => e);
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
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as Error).message).toMatch(/data store is unavailable/);
    expect(sim().requests.length).toBe(before);

    // The warm key: admission distrusts its caches while store calls fail, so it too gets 503 with
    // no upstream call, instead of an answer nobody can bill.
    const warmErr = await warm.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }], stream: true }).catch((e: unknown) => e);
    expect((warmErr as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(sim().requests.length).toBe(before);
  });
});

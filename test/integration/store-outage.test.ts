import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * No free lunch: when DynamoDB cannot be reached, the client gets a clear 503 and no upstream call is
 * made, so no token is served that cannot be billed. This file owns its DynamoDB Local so it can stop it.
 */

let ddb: Awaited<ReturnType<typeof startDynamoDbLocal>>;
let gw: RunningGateway;

beforeAll(async () => {
  ddb = await startDynamoDbLocal();
  gw = await startGateway({ dynamodbEndpoint: ddb.endpoint, tablePrefix: 'outage' });
});

afterAll(async () => {
  await gw?.close();
  await ddb?.stop();
});

describe('DynamoDB outage', () => {
  it('answers 503 with no upstream call for a key this container has not seen, and after a failed settle', async () => {
    const { createAccount } = await import('../../functions/shared/accounts/account-store');
    const { createKey } = await import('../../functions/shared/accounts/key-store');
    const fresh = await createKey((await createAccount()).accountId, 'fresh');
    const warm = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
    // Warm the dev key's caches (key and balance) while the store is up.
    await warm.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'warm up' }] });
    await new Promise((r) => setTimeout(r, 300)); // let its settle finish

    await ddb.stop();
    const sim = gw.simulator;
    if (!sim) throw new Error('simulator expected');

    const cold = new OpenAI({ baseURL: gw.baseUrl, apiKey: fresh.key, maxRetries: 0 });
    const before = sim.requests.length;
    const err = await cold.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as Error).message).toMatch(/data store is unavailable/);
    expect(sim.requests.length).toBe(before);

    // The warm key: the store failure above makes admission distrust its caches, so it too gets 503
    // with no upstream call, instead of an answer nobody can bill.
    const warmErr = await warm.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }], stream: true }).catch((e: unknown) => e);
    expect((warmErr as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(sim.requests.length).toBe(before);
  });
});

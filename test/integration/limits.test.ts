import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setClock } from '../../functions/shared/time/clock';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { invocationLog } from '../support/invocations';

/**
 * What a hostile tenant cannot do: spend past a key's limit, use a disabled key, make the gateway send
 * an answer that cannot fit, or change another account's routing with a request our own code chokes on.
 */

let gw: RunningGateway;
/** The gateway's ended invocations: a request's settle has run once its invocation has ended. */
const invocations = invocationLog();

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `limits-${process.pid}`, onInvocation: invocations.onInvocation });
});

afterAll(async () => {
  setClock(undefined);
  await gw?.close();
});

const sim = () => {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
};

async function newKey(opts: { freeTokens: number; creditNanoUsd: number }, keyOpts: { limitNanoUsd?: number; limitReset?: 'daily' } = {}) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount(opts);
  const key = await createKey(account.accountId, 'test', keyOpts);
  return { client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }), accountId: account.accountId, keyHash: key.keyHash };
}

async function keyEntry(accountId: string, keyHash: string) {
  const { readState } = await import('../../functions/shared/billing/account-state');
  return (await readState(accountId, { consistent: true })).keys?.[keyHash.slice(0, 16)];
}

async function ledgerCost(accountId: string) {
  const { usageSummary } = await import('../../functions/shared/billing/ledger');
  return usageSummary(accountId);
}

describe('per-key spend limits and disabled keys', () => {
  it('a key limited to $0.0001 a day never spends past it under 20 concurrent requests; the rest get 402; the next day it works again', async () => {
    const LIMIT = 100_000; // $0.0001 in nano-USD
    const { client, accountId, keyHash } = await newKey({ freeTokens: 0, creditNanoUsd: 1_000_000_000 }, { limitNanoUsd: LIMIT, limitReset: 'daily' });
    const ask = (i: number) => client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: `limited ${i}` }] });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ask(i).then(
          () => 200,
          (e: InstanceType<typeof OpenAI.APIError>) => e,
        ),
      ),
    );
    const refused = results.filter((r): r is InstanceType<typeof OpenAI.APIError> => r !== 200);
    expect(results.filter((r) => r === 200).length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const e of refused) {
      expect(`${e.status} ${e.message}`).toMatch(/^402 /);
      expect(e.message).toMatch(/this API key's spend limit of \$0\.0001 per day/);
    }
    // Spend it to the end, one at a time: until a 402 with nothing of the key in flight.
    for (let i = 0; i < 40; i++) {
      const sent = Date.now();
      const status = await ask(100 + i).then(
        () => 200,
        (e: InstanceType<typeof OpenAI.APIError>) => e.status,
      );
      await invocations.endedSince(sent); // its settle has run: the key's entry holds nothing of it
      if (status === 402 && (await keyEntry(accountId, keyHash))?.heldNanoUsd === 0) break;
    }
    const entry = await keyEntry(accountId, keyHash);
    const summary = await ledgerCost(accountId);
    expect(summary.costNanoUsd).toBeLessThanOrEqual(LIMIT);
    expect(entry?.heldNanoUsd).toBe(0);
    expect(entry?.leftNanoUsd).toBe(LIMIT - summary.costNanoUsd);
    // It was really spent, not refused from the start (each hold reserves the plan's highest price).
    expect(summary.requests).toBeGreaterThan(1);

    // Tomorrow (UTC): a new window, the full limit again.
    setClock(() => Date.now() + 24 * 3_600_000);
    try {
      const next = await ask(1_000);
      expect(next.choices[0]?.message.content).toBeTruthy();
      expect((await keyEntry(accountId, keyHash))?.window).toBe(new Date(Date.now() + 24 * 3_600_000).toISOString().slice(0, 10));
    } finally {
      setClock(undefined);
    }
  });

  it('a disabled key gets 401 at once, even where its key row is cached, and works again when enabled', async () => {
    const { updateKey } = await import('../../functions/shared/accounts/keys/api-key-update');
    // An account that holds per request (free tokens nearly gone, credit beside them): each hold reads the
    // key's entry on the account item. On a lease, a key disabled elsewhere is refused within
    // KEY_CACHE_TTL_MS instead (docs/credit-leases.md, "Staleness a lease allows").
    const { client, accountId, keyHash } = await newKey({ freeTokens: 20, creditNanoUsd: 1_000_000_000 });
    const ask = () => client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    await ask(); // the key is now cached by this container's authenticate()
    // Disable it as another container would: the row and the account's entry, without this
    // container's cache hearing of it (updateKey would also forget the key here).
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { documentClient } = await import('../../functions/shared/store/dynamo');
    const { tableNames } = await import('../../functions/shared/store/tables');
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().keys,
        Key: { keyHash },
        UpdateExpression: 'SET #s = :d',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':d': 'disabled' },
      }),
    );
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().accounts,
        Key: { accountId },
        UpdateExpression: 'SET #k.#h.#s = :d',
        ExpressionAttributeNames: { '#k': 'keys', '#h': keyHash.slice(0, 16), '#s': 'status' },
        ExpressionAttributeValues: { ':d': 'disabled' },
      }),
    );
    const before = sim().requests.length;
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(401);
    expect(err.message).toMatch(/disabled/);
    // This container's fresh view predicted the hold (the key was active a moment ago), so the upstream
    // may have been called beside it; its answer never reached the client. The refusal brought the
    // store's state into the view: from now on no upstream is called at all.
    const next = sim().requests.length;
    expect(next - before).toBeLessThanOrEqual(1);
    expect(((await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect(sim().requests.length).toBe(next);
    await updateKey(accountId, keyHash, { disabled: false });
    await expect(ask()).resolves.toBeTruthy();
  });
});

describe('answers that fit', () => {
  it('refuses 300 float embeddings of 1,536 dimensions before any upstream call, billing nothing, and says base64 fits more', async () => {
    const { client, accountId } = await newKey({ freeTokens: 200_000, creditNanoUsd: 0 });
    const before = sim().requests.length;
    const err = (await client.embeddings
      .create({ model: 'text-embedding-3-small', input: Array.from({ length: 300 }, (_, i) => `input ${i}`), encoding_format: 'float' })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'response_too_large', param: 'input' });
    expect(err.message).toMatch(/at most \d+ inputs fit as JSON floats.*With `encoding_format: "base64"` up to \d+ inputs fit/);
    expect(sim().requests.length).toBe(before);
    expect((await ledgerCost(accountId)).requests).toBe(0);
    const { getAccount } = await import('../../functions/shared/accounts/account-store');
    expect(await getAccount(accountId, { consistent: true })).toMatchObject({ freeTokens: 200_000, heldFreeTokens: 0 });
    // The same inputs as base64 fit.
    const ok = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: Array.from({ length: 300 }, (_, i) => `input ${i}`),
      encoding_format: 'base64',
    });
    expect(ok.data).toHaveLength(300);
  });

  it("refuses dimensions above the model's own", async () => {
    const { client } = await newKey({ freeTokens: 200_000, creditNanoUsd: 0 });
    const err = (await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 1e9 }).catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ param: 'dimensions' });
    expect(err.message).toMatch(/at most 1536/);
  });
});

describe('tenant isolation', () => {
  it("a request nested 5,000 deep, twice, is a 400 for its sender alone: another account's gpt-4o-mini is still served by gpt-4o-mini", async () => {
    const attacker = await newKey({ freeTokens: 200_000, creditNanoUsd: 0 });
    const victim = await newKey({ freeTokens: 200_000, creditNanoUsd: 0 });
    // Written by hand: JSON.stringify itself overflows the stack on 5,000 levels (our own code did too).
    const deep = `${'{"a":'.repeat(5_000)}"x"${'}'.repeat(5_000)}`;
    const before = sim().requests.length;
    for (const field of [
      `"prediction":{"type":"content","content":${deep}}`,
      `"response_format":{"type":"json_schema","json_schema":{"name":"deep","schema":${deep}}}`,
    ]) {
      const res = await fetch(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${attacker.client.apiKey}`, 'content-type': 'application/json' },
        body: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"deep"}],${field}}`,
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('request_too_complex');
      expect(body.error.message).toMatch(/nesting deeper than 128 levels/);
    }
    expect(sim().requests.length).toBe(before);
    const { response } = await victim.client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still routed normally?' }] })
      .withResponse();
    expect(response.headers.get('x-modelmux-model')).toBe('gpt-4o-mini');
    expect(response.headers.get('x-modelmux-attempts')).toBe('1');
  });
});

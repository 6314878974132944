import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredit } from '../../functions/shared/accounts/account-store';
import { clearByokCache } from '../../functions/shared/accounts/byok/byok-credentials';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';
import { breaker } from '../../functions/shared/routing/circuit-breaker';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, signUpAndSignIn, type SignedInUser } from '../support/cognito-user';
import { pollLedgerEntry } from '../support/ledger';

/**
 * Bring-your-own-key end to end: the simulator runs with STRICT keys (only the platform's `sim-key` and
 * the user's own key are valid), so an answer proves which key reached the upstream.
 */
const USER_OPENAI_KEY = 'sk-user-openai-0123456789abcdefWXYZ';
const WRONG_KEY = 'sk-never-issued-by-openai-000000QQQQ';

let gw: RunningGateway;
let alice: SignedInUser;
let bob: SignedInUser;
let aliceKey: string;
let bobKey: string;

async function ask(key: string): Promise<{ id: string; provider: string | null; requestId: string | null }> {
  const client = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'byok please' }] })
    .withResponse();
  return { id: data.id, provider: response.headers.get('x-modelmux-provider'), requestId: response.headers.get('x-request-id') };
}

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `byok-${process.pid}`, cognito: {}, simulator: { acceptedKeys: ['sim-key', USER_OPENAI_KEY] } });
  [alice, bob] = await Promise.all([signUpAndSignIn(gw), signUpAndSignIn(gw)]);
  aliceKey = (await call(gw, 'POST', '/v1/keys', alice.accessToken, { name: 'byok' })).body.key;
  bobKey = (await call(gw, 'POST', '/v1/keys', bob.accessToken, { name: 'plain' })).body.key;
  // Alice pays in credit only, so the ledger shows the fee in nano-USD.
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().accounts,
      Key: { accountId: alice.sub },
      UpdateExpression: 'SET freeTokens = :z',
      ExpressionAttributeValues: { ':z': 0 },
    }),
  );
  await addCredit(alice.sub, 1_000_000_000);
});

afterAll(async () => {
  await gw?.close();
});

describe('bring your own key', () => {
  it('accepts only sk- keys for BYOK providers and shows only the last 4 characters', async () => {
    expect((await call(gw, 'PUT', '/v1/byok/openai', alice.accessToken, { key: 'AIzaNotAnSkKey0123456789' })).status).toBe(400);
    expect((await call(gw, 'PUT', '/v1/byok/gemini', alice.accessToken, { key: 'sk-whatever-0123456789abc' })).body.error.code).toBe('byok_provider_unknown');
    expect((await call(gw, 'PUT', '/v1/byok/openai', bob.accessToken, { key: USER_OPENAI_KEY.slice(0, 10) })).status).toBe(400);
    expect((await call(gw, 'PUT', '/v1/byok/openai', 'sk-mux-notajwt', { key: USER_OPENAI_KEY })).status).toBe(401);
    const put = await call(gw, 'PUT', '/v1/byok/openai', alice.accessToken, { key: USER_OPENAI_KEY, allow_fallback: false });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ provider: 'openai', last4: 'WXYZ', allow_fallback: false });
    const listed = await call(gw, 'GET', '/v1/byok', alice.accessToken);
    expect(listed.body.data).toEqual([expect.objectContaining({ provider: 'openai', last4: 'WXYZ', allow_fallback: false })]);
    expect(JSON.stringify(listed.body)).not.toContain(USER_OPENAI_KEY.slice(0, 20));
    expect((await call(gw, 'GET', '/v1/byok', bob.accessToken)).body.data).toEqual([]);
    // Which models each key serves, from the catalogue: deepseek-embed is OpenAI's, not DeepSeek's.
    const served = listed.body.served_models as Record<string, string[]>;
    expect(served.openai).toEqual(expect.arrayContaining(['gpt-4o', 'deepseek-embed', 'text-embedding-3-small']));
    expect(served.deepseek).toContain('deepseek-v3');
    expect(served.deepseek).not.toContain('deepseek-embed');
    expect(served.anthropic).toEqual([...CATALOGUE.values()].filter((e) => e.targets.some((t) => t.provider === 'anthropic')).map((e) => e.id));
  });

  it('stores no plaintext key: only the ciphertext and the encrypted data key', async () => {
    const out = await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId: alice.sub }, ConsistentRead: true }));
    const stored = out.Item?.byok?.openai as Record<string, unknown>;
    expect(Object.keys(stored).sort()).toEqual(['allowFallback', 'ciphertext', 'createdAt', 'encryptedDataKey', 'last4', 'updatedAt']);
    const text = JSON.stringify(out.Item);
    expect(text).not.toContain(USER_OPENAI_KEY);
    expect(text).not.toContain(USER_OPENAI_KEY.slice(3, -4));
    expect(Buffer.from(String(stored.ciphertext), 'base64').toString('latin1')).not.toContain(USER_OPENAI_KEY.slice(3, -4));
  });

  it("sends the user's key upstream, not the platform's, and charges only the 5.5% fee", async () => {
    gw.simulator!.reset();
    const answer = await ask(aliceKey);
    expect(answer.provider).toBe('openai');
    const upstream = gw.simulator!.requests.filter((r) => r.provider === 'openai');
    expect(upstream).toHaveLength(1);
    expect(upstream[0]!.headers.authorization).toBe(`Bearer ${USER_OPENAI_KEY}`);

    const entry = await pollLedgerEntry(alice.sub, answer.requestId);
    expect(entry).toMatchObject({ byok: true, provider: 'openai', servedModel: 'gpt-4o-mini' });
    const target = CATALOGUE.get('gpt-4o-mini')!.targets[0]!;
    const feeIn = target.displayedPrice.input - target.upstreamPrice.input;
    const feeOut = target.displayedPrice.output - target.upstreamPrice.output;
    expect(entry).toMatchObject({ inputPrice: feeIn, outputPrice: feeOut });
    // 5.5% of the upstream price, exactly (upstream prices here are whole multiples of 1,000 µUSD/MTok).
    expect(feeIn * 10_000).toBe(target.upstreamPrice.input * 550);
    const p = Number(entry!.promptTokens);
    const c = Number(entry!.completionTokens);
    expect(entry!.costNanoUsd).toBe(Math.ceil((p * feeIn + c * feeOut) / 1000));
    expect(Number(entry!.costNanoUsd)).toBeGreaterThan(0);
    // Bob (no BYOK) still goes through the platform's key.
    gw.simulator!.reset();
    await ask(bobKey);
    expect(gw.simulator!.requests.find((r) => r.provider === 'openai')?.headers.authorization).toBe('Bearer sim-key');
  });

  it("a refused user key is that user's 401 naming the provider, never the platform breaker's, and other accounts route as before", async () => {
    await call(gw, 'PUT', '/v1/byok/openai', alice.accessToken, { key: WRONG_KEY, allow_fallback: false });
    for (let i = 0; i < 4; i++) {
      const err = await ask(aliceKey).then(
        () => undefined,
        (e: unknown) => e as { status: number; error: { code: string; message: string } },
      );
      expect(err?.status).toBe(401);
      expect(err?.error.code).toBe('byok_key_invalid');
      expect(err?.error.message).toContain('openai');
      expect(err?.error.message).toContain('0QQQQ'.slice(-4));
      expect(err?.error.message).not.toContain(WRONG_KEY);
    }
    expect(breaker.isOpen('openai:gpt-4o-mini')).toBe(false);
    gw.simulator!.reset();
    const bobs = await ask(bobKey);
    expect(bobs.provider).toBe('openai');
    expect(gw.simulator!.requests.filter((r) => r.provider === 'openai')).toHaveLength(1);
  });

  it('with fallback allowed, a refused user key gives way to the platform key (billed in full)', async () => {
    await call(gw, 'PATCH', '/v1/byok/openai', alice.accessToken, { allow_fallback: true });
    const answer = await ask(aliceKey);
    expect(answer.provider).toBe('openai');
    const entry = await pollLedgerEntry(alice.sub, answer.requestId);
    expect(entry?.byok).toBe(false); // every settled entry says whether it was BYOK
    expect(entry?.inputPrice).toBe(CATALOGUE.get('gpt-4o-mini')!.targets[0]!.displayedPrice.input);
  });

  it('removes a key; requests go back to the platform key', async () => {
    expect((await call(gw, 'DELETE', '/v1/byok/openai', alice.accessToken)).body).toEqual({ deleted: true });
    expect((await call(gw, 'DELETE', '/v1/byok/openai', alice.accessToken)).status).toBe(404);
    expect((await call(gw, 'GET', '/v1/byok', alice.accessToken)).body.data).toEqual([]);
    clearByokCache();
    gw.simulator!.reset();
    await ask(aliceKey);
    expect(gw.simulator!.requests.find((r) => r.provider === 'openai')?.headers.authorization).toBe('Bearer sim-key');
  });
});

import { createPrivateKey, createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CreateUserPoolClientCommand, CreateUserPoolCommand } from '@aws-sdk/client-cognito-identity-provider';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, cognitoClient, signUpAndSignIn, type SignedInUser } from '../support/cognito-user';

/**
 * The account API's keys and its authentication, through real HTTP on loopback against the Cognito
 * emulator and DynamoDB Local.
 */
let gw: RunningGateway;
let alice: SignedInUser;
let bob: SignedInUser;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `keys-api-${process.pid}`, cognito: {} });
  [alice, bob] = await Promise.all([signUpAndSignIn(gw), signUpAndSignIn(gw)]);
});

afterAll(async () => {
  await gw?.close();
});

const chat = (key: string) =>
  new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 }).chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
  });

async function accountItem(accountId: string): Promise<Record<string, any>> {
  const out = await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }));
  return out.Item as Record<string, any>;
}

async function keyRow(keyHash: string): Promise<Record<string, any>> {
  const out = await documentClient().send(new GetCommand({ TableName: tableNames().keys, Key: { keyHash }, ConsistentRead: true }));
  return out.Item as Record<string, any>;
}

describe('keys', () => {
  it('creates a key shown once, lists it without the secret, renames, disables (401 at once), enables and deletes it', async () => {
    const created = await call(gw, 'POST', '/v1/keys', alice.accessToken, { name: 'laptop' });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    expect(key).toMatch(/^sk-mux-[0-9A-Za-z]{43}$/);
    const hash: string = created.body.data.hash;
    expect(created.body.data).toMatchObject({
      name: 'laptop',
      label: `${key.slice(0, 11)}…`,
      disabled: false,
      limit: null,
      limit_remaining: null,
      limit_reset: null,
      usage: 0,
      usage_nano_usd: 0,
      last_used_at: null,
    });
    expect(await chat(key)).toMatchObject({ object: 'chat.completion' });

    const listed = await call(gw, 'GET', '/v1/keys', alice.accessToken);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { hash: string }) => k.hash)).toContain(hash);
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(11));

    const renamed = await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { name: 'desktop' });
    expect(renamed.body.data.name).toBe('desktop');
    expect((await call(gw, 'GET', `/v1/keys/${hash}`, alice.accessToken)).body.data.name).toBe('desktop');

    const disabled = await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { disabled: true });
    expect(disabled.body.data.disabled).toBe(true);
    await expect(chat(key)).rejects.toMatchObject({ status: 401 });
    // The row and the account's per-key entry changed together.
    expect((await keyRow(hash)).status).toBe('disabled');
    expect((await accountItem(alice.sub)).keys[hash.slice(0, 16)].status).toBe('disabled');

    await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { disabled: false });
    expect(await chat(key)).toMatchObject({ object: 'chat.completion' });

    const deleted = await call(gw, 'DELETE', `/v1/keys/${hash}`, alice.accessToken);
    expect(deleted).toMatchObject({ status: 200, body: { deleted: true } });
    await expect(chat(key)).rejects.toMatchObject({ status: 401 });
    expect((await call(gw, 'GET', `/v1/keys/${hash}`, alice.accessToken)).status).toBe(404);
    const account = await accountItem(alice.sub);
    expect(account.keys[hash.slice(0, 16)]).toBeUndefined();
    expect(account.keyCount).toBe(0);
  });

  it('stores a limit in the row and the account map and reports limit_remaining; null removes it', async () => {
    const created = await call(gw, 'POST', '/v1/keys', alice.accessToken, { name: 'capped', limit: 1.5, limit_reset: 'daily' });
    expect(created.body.data).toMatchObject({
      limit: 1.5,
      limit_nano_usd: 1_500_000_000,
      limit_remaining: 1.5,
      limit_remaining_nano_usd: 1_500_000_000,
      limit_reset: 'daily',
    });
    const hash: string = created.body.data.hash;
    expect(await keyRow(hash)).toMatchObject({ limitNanoUsd: 1_500_000_000, limitReset: 'daily' });
    const today = new Date().toISOString().slice(0, 10);
    expect((await accountItem(alice.sub)).keys[hash.slice(0, 16)]).toMatchObject({
      status: 'active',
      limitNanoUsd: 1_500_000_000,
      limitReset: 'daily',
      window: today,
      leftNanoUsd: 1_500_000_000,
    });

    const raised = await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { limit: 2 });
    expect(raised.body.data).toMatchObject({ limit: 2, limit_remaining_nano_usd: 2_000_000_000, limit_reset: 'daily' });
    expect((await accountItem(alice.sub)).keys[hash.slice(0, 16)]).toMatchObject({ limitNanoUsd: 2_000_000_000, leftNanoUsd: 2_000_000_000 });

    const weekly = await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { limit_reset: 'weekly' });
    expect(weekly.body.data.limit_reset).toBe('weekly');
    expect((await accountItem(alice.sub)).keys[hash.slice(0, 16)].window).toMatch(/^\d{4}-W\d{2}$/);

    const removed = await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { limit: null });
    expect(removed.body.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null });
    const row = await keyRow(hash);
    expect(row.limitNanoUsd).toBeUndefined();
    expect((await accountItem(alice.sub)).keys[hash.slice(0, 16)].limitNanoUsd).toBeUndefined();

    expect((await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { limit: -1 })).status).toBe(400);
    expect((await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { limit_reset: 'daily' })).status).toBe(400);
    expect((await call(gw, 'PATCH', `/v1/keys/${hash}`, alice.accessToken, { owner: 'x' })).body.error.code).toBe('unknown_parameter');
    await call(gw, 'DELETE', `/v1/keys/${hash}`, alice.accessToken);
  });

  it('20 concurrent creates leave exactly 5 keys; the others get 409 key_limit_exceeded', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => call(gw, 'POST', '/v1/keys', bob.accessToken, { name: `k${i}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(15);
    expect(refused[0]?.body).toEqual({
      error: { message: expect.stringContaining('5 active API keys'), type: 'invalid_request_error', param: null, code: 'key_limit_exceeded' },
    });
    expect((await call(gw, 'GET', '/v1/keys', bob.accessToken)).body.data).toHaveLength(5);
    const account = await accountItem(bob.sub);
    expect(account.keyCount).toBe(5);
    expect(Object.keys(account.keys)).toHaveLength(5);
  });

  it("another user's JWT can neither see nor change a key (404)", async () => {
    const bobKeys = (await call(gw, 'GET', '/v1/keys', bob.accessToken)).body.data as Array<{ hash: string }>;
    const target = bobKeys[0]!.hash;
    expect((await call(gw, 'GET', '/v1/keys', alice.accessToken)).body.data.map((k: { hash: string }) => k.hash)).not.toContain(target);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { disabled: true }],
      ['PATCH', { name: 'mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(gw, method, `/v1/keys/${target}`, alice.accessToken, body);
      expect(res.status, method).toBe(404);
      expect(res.body.error.code).toBe('key_not_found');
    }
    const still = (await call(gw, 'GET', `/v1/keys/${target}`, bob.accessToken)).body.data;
    expect(still).toMatchObject({ hash: target, disabled: false });
    expect(still.name).not.toBe('mine now');
  });
});

describe('authentication of the account API', () => {
  it('refuses an sk-mux- key, no token, an expired, a forged and an other-issuer JWT with 401', async () => {
    const key = (await call(gw, 'POST', '/v1/keys', alice.accessToken, { name: 'api' })).body.key as string;
    const expectUnauthorized = async (token: string | undefined) => {
      const res = await call(gw, 'GET', '/v1/keys', token);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error' });
    };
    await expectUnauthorized(key);
    await expectUnauthorized(undefined);
    await expectUnauthorized('not-a-jwt');

    // Expired: the emulator's own signing key (it ships in the npm package) with the right issuer and
    // client, but an `exp` in the past.
    const require = createRequire(import.meta.url);
    const emulatorKey = JSON.parse(readFileSync(require.resolve('cognito-local/lib/keys/cognitoLocal.private.json'), 'utf8')) as { pem: string };
    const issuer = `${gw.cognito!.endpoint}/${gw.cognito!.userPoolId}`;
    const claims = { sub: alice.sub, token_use: 'access', client_id: gw.cognito!.userPoolClientId, iss: issuer };
    const now = Math.floor(Date.now() / 1000);
    await expectUnauthorized(signJwt({ ...claims, iat: now - 7200, exp: now - 3600 }, emulatorKey.pem));
    // No exp at all, or issued an hour from now: refused.
    await expectUnauthorized(signJwt({ ...claims, iat: now }, emulatorKey.pem));
    await expectUnauthorized(signJwt({ ...claims, iat: now + 3600, exp: now + 7200 }, emulatorKey.pem));
    // The same token unexpired passes (so the refusals above are for the reason tested).
    expect((await call(gw, 'GET', '/v1/keys', signJwt({ ...claims, iat: now, exp: now + 600 }, emulatorKey.pem))).status).toBe(200);

    // Forged: same claims and kid, signed with another key.
    const { generateKeyPairSync } = await import('node:crypto');
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    await expectUnauthorized(signJwt({ ...claims, iat: now, exp: now + 600 }, other));
    // Tampered payload of a real token.
    const [h, , s] = alice.accessToken.split('.');
    await expectUnauthorized(`${h}.${Buffer.from(JSON.stringify({ ...claims, sub: bob.sub, exp: now + 600 })).toString('base64url')}.${s}`);

    // Other issuer: a real token of another pool of the same emulator (same signing key, other `iss`).
    const client = cognitoClient(gw);
    const pool = await client.send(new CreateUserPoolCommand({ PoolName: 'elsewhere', UsernameAttributes: ['email'] }));
    const app = await client.send(
      new CreateUserPoolClientCommand({ UserPoolId: pool.UserPool!.Id!, ClientName: 'x', ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH'] }),
    );
    client.destroy();
    await expectUnauthorized(signJwt({ ...claims, iss: `${gw.cognito!.endpoint}/${pool.UserPool!.Id}`, iat: now, exp: now + 600 }, emulatorKey.pem));
    // Another app client of our pool: right issuer, wrong client id.
    await expectUnauthorized(signJwt({ ...claims, client_id: app.UserPoolClient!.ClientId, iat: now, exp: now + 600 }, emulatorKey.pem));
    // An id token works like an access token (aud = our client).
    expect((await call(gw, 'GET', '/v1/keys', alice.idToken)).status).toBe(200);
  });

  it('serves /config.json publicly with the pool, the client and the emulator endpoint', async () => {
    const res = await call(gw, 'GET', '/config.json', undefined);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      region: 'local',
      userPoolId: gw.cognito!.userPoolId,
      userPoolClientId: gw.cognito!.userPoolClientId,
      cognitoEndpoint: gw.cognito!.endpoint,
    });
  });
});

/** An RS256 JWT with the emulator's key id. */
function signJwt(payload: Record<string, unknown>, pem: string): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg: 'RS256', typ: 'JWT', kid: 'CognitoLocal' })}.${enc(payload)}`;
  const sig = createSign('RSA-SHA256').update(input).sign(createPrivateKey(pem)).toString('base64url');
  return `${input}.${sig}`;
}

import { AdminConfirmSignUpCommand, ConfirmSignUpCommand, DeleteUserCommand, SignUpCommand } from '@aws-sdk/client-cognito-identity-provider';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { isDisposableEmail } from '../../functions/shared/accounts/disposable-domain';
import { freeGrantIdentity } from '../../functions/shared/accounts/grant-email';
import { freeGrantMarkerId } from '../../functions/shared/accounts/self-serve-account';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, cognitoClient, GOOD_PASSWORD, newEmail, signIn, signUpAndSignIn } from '../support/cognito-user';
import { pollLedgerEntry } from '../support/ledger';

/** Sign-up through the Cognito emulator, and the 200,000 free tokens granted exactly once. */
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `signup-${process.pid}`, cognito: {} });
});

afterAll(async () => {
  await gw?.close();
});

async function freeTokens(accountId: string): Promise<number | undefined> {
  const out = await documentClient().send(new GetCommand({ TableName: tableNames().accounts, Key: { accountId }, ConsistentRead: true }));
  return out.Item?.freeTokens as number | undefined;
}

describe('sign-up and the account', () => {
  it('sign-up → confirm → sign-in gives tokens, and the account has 200,000 free tokens', async () => {
    const user = await signUpAndSignIn(gw);
    expect(user.accessToken.split('.')).toHaveLength(3);
    expect(user.refreshToken.length).toBeGreaterThan(0);
    const res = await call(gw, 'GET', '/v1/account', user.accessToken);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: user.sub,
      email: user.email,
      free_tokens: 200_000,
      free_tokens_held: 0,
      credit: 0,
      credit_nano_usd: 0,
      key_count: 0,
      key_limit: 5,
      is_free_tier: true,
      total_usage_nano_usd: 0,
    });
  });

  it('a race of 20 first calls creates the account once, with 200,000 free tokens', async () => {
    const user = await signUpAndSignIn(gw);
    expect(await freeTokens(user.sub)).toBeUndefined();
    const results = await Promise.all(Array.from({ length: 20 }, () => call(gw, 'GET', '/v1/account', user.accessToken)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.data.created_at)).size).toBe(1);
    expect(results.every((r) => r.body.data.free_tokens === 200_000)).toBe(true);
    expect(await freeTokens(user.sub)).toBe(200_000);
  });

  it('a second confirmation, a new sign-in, or the same email signing up again never grants them twice', async () => {
    const user = await signUpAndSignIn(gw);
    const key = (await call(gw, 'POST', '/v1/keys', user.accessToken, { name: 'spend' })).body.key as string;
    const { response } = await new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'spend some' }] })
      .withResponse();
    await pollLedgerEntry(user.sub, response.headers.get('x-request-id'));
    const left = await freeTokens(user.sub);
    expect(left).toBeLessThan(200_000);

    const client = cognitoClient(gw);
    const confirmAgain = await client
      .send(new ConfirmSignUpCommand({ ClientId: gw.cognito!.userPoolClientId, Username: user.email, ConfirmationCode: '000000' }))
      .then(
        () => 'ok',
        (e: Error) => e.name,
      );
    expect(typeof confirmAgain).toBe('string');
    await client.send(new AdminConfirmSignUpCommand({ UserPoolId: gw.cognito!.userPoolId, Username: user.email })).catch(() => undefined);
    const again = await signIn(gw, user.email);
    expect((await call(gw, 'GET', '/v1/account', again.accessToken)).body.data.free_tokens).toBe(left);

    // The user deletes themselves and signs up again with the same email: a new account, no new grant.
    await client.send(new DeleteUserCommand({ AccessToken: again.accessToken }));
    const up = await client.send(new SignUpCommand({ ClientId: gw.cognito!.userPoolClientId, Username: user.email, Password: GOOD_PASSWORD }));
    await client.send(
      new ConfirmSignUpCommand({
        ClientId: gw.cognito!.userPoolClientId,
        Username: user.email,
        ConfirmationCode: await gw.cognito!.confirmationCode(user.email),
      }),
    );
    client.destroy();
    expect(up.UserSub).not.toBe(user.sub);
    const reborn = await signIn(gw, user.email);
    const account = (await call(gw, 'GET', '/v1/account', reborn.accessToken)).body.data;
    expect(account).toMatchObject({ id: up.UserSub, free_tokens: 0 });
    const marker = await documentClient().send(
      new GetCommand({ TableName: tableNames().accounts, Key: { accountId: freeGrantMarkerId(user.email) }, ConsistentRead: true }),
    );
    expect(marker.Item).toMatchObject({ grantedTo: user.sub, freeTokens: 200_000 });
  });

  it('an access token (no email claim) creates the account with the email from Cognito', async () => {
    const email = newEmail('Mixed.Case');
    const user = await signUpAndSignIn(gw, email);
    const res = await call(gw, 'GET', '/v1/account', user.accessToken);
    expect(res.body.data.email).toBe(email.toLowerCase());
  });

  it('one grant per person: a +tag or Gmail dots do not earn a second one', async () => {
    const name = `farmer${randomBytes(4).toString('hex')}`;
    const first = await signUpAndSignIn(gw, `${name}+1@gmail.com`);
    expect((await call(gw, 'GET', '/v1/account', first.accessToken)).body.data).toMatchObject({ free_tokens: 200_000, email: `${name}+1@gmail.com` });
    for (const alias of [`${name}+2@gmail.com`, `${name.slice(0, 3)}.${name.slice(3)}@googlemail.com`, `${name.toUpperCase()}+x@Gmail.com`]) {
      const other = await signUpAndSignIn(gw, alias);
      expect((await call(gw, 'GET', '/v1/account', other.accessToken)).body.data, alias).toMatchObject({
        free_tokens: 0,
        free_grant_withheld: 'already_granted',
      });
    }
    // Another person at another domain with the same local part still gets theirs.
    const stranger = await signUpAndSignIn(gw, `${name}+1@example.com`);
    expect((await call(gw, 'GET', '/v1/account', stranger.accessToken)).body.data).toMatchObject({ free_tokens: 200_000, free_grant_withheld: null });
  });

  it('a disposable email domain (or a subdomain of one) gets an account with no free tokens, says why, and puts no grant marker', async () => {
    for (const domain of ['mailinator.com', 'Eu.Mailinator.com', 'guerrillamail.com']) {
      const email = `burner${randomBytes(4).toString('hex')}@${domain}`;
      const user = await signUpAndSignIn(gw, email);
      const data = (await call(gw, 'GET', '/v1/account', user.accessToken)).body.data;
      expect(data, email).toMatchObject({ free_tokens: 0, free_grant_withheld: 'disposable_domain', credit_nano_usd: 0 });
      const marker = await documentClient().send(
        new GetCommand({ TableName: tableNames().accounts, Key: { accountId: freeGrantMarkerId(email) }, ConsistentRead: true }),
      );
      expect(marker.Item, email).toBeUndefined();
      // The account works otherwise: it can make a key (and pay for requests once it has credit).
      expect((await call(gw, 'POST', '/v1/keys', user.accessToken, { name: 'burner' })).status).toBe(201);
    }
  });
});

describe('isDisposableEmail', () => {
  it.each([
    ['someone@mailinator.com', true],
    [' SOMEONE@MAILINATOR.COM ', true],
    ['a@x.y.mailinator.com', true],
    ['a@example.com', false],
    ['a@gmail.com', false],
    ['a@mailinator.com.example.org', false],
    ['no-at-sign', false],
  ])('%s → %s', (email, disposable) => {
    expect(isDisposableEmail(email)).toBe(disposable);
  });
});

describe('freeGrantIdentity', () => {
  it.each([
    ['Me@Example.com', 'me@example.com'],
    [' me+newsletter@example.com ', 'me@example.com'],
    ['m.e@example.com', 'm.e@example.com'],
    ['M.E+spam@gmail.com', 'me@gmail.com'],
    ['m.e@googlemail.com', 'me@gmail.com'],
    ['+only@example.com', '+only@example.com'],
    ['no-at-sign', 'no-at-sign'],
    ['a@b@gmail.com', 'a@b@gmail.com'],
  ])('%s → %s', (email, identity) => {
    expect(freeGrantIdentity(email)).toBe(identity);
  });
});

import { AdminConfirmSignUpCommand, ConfirmSignUpCommand, DeleteUserCommand, SignUpCommand } from '@aws-sdk/client-cognito-identity-provider';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { clientAddress } from '../../functions/shared/account-api/client-address';
import { isDisposableEmail } from '../../functions/shared/accounts/disposable-domain';
import { freeGrantIdentity } from '../../functions/shared/accounts/grant-email';
import { ensureSelfServeAccount, freeGrantMarkerId } from '../../functions/shared/accounts/self-serve-account';
import { signupCounterId, signupNetwork } from '../../functions/shared/accounts/signup-network';
import { reloadConfig } from '../../functions/shared/config/env';
import { VIEWER_ADDRESS_HEADER } from '../../functions/shared/config/stack-contract';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, cognitoClient, GOOD_PASSWORD, newEmail, signIn, signUpAndSignIn } from '../support/cognito-user';
import { pollLedgerEntry } from '../support/ledger';

/** Sign-up through the Cognito emulator, the 200,000 free tokens granted exactly once, and the grants per client network. */
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

/** GET /v1/account from the local address `from` (any of 127.0.0.0/8 reaches the gateway on Linux), with extra headers. */
function accountFrom(from: string, token: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${gw.origin}/v1/account`, { localAddress: from, headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A new self-serve account (a new `sub` and address) created by a sign-up from `clientAddress`. */
async function signUpFrom(clientAddress: string, email = newEmail('net')) {
  const { account } = await ensureSelfServeAccount(`sub-${randomBytes(8).toString('hex')}`, async () => email, { clientAddress });
  return account;
}

/** The grants counted today for `network`. */
async function grantsCounted(network: string): Promise<number | undefined> {
  const out = await documentClient().send(
    new GetCommand({ TableName: tableNames().accounts, Key: { accountId: signupCounterId(network, Date.now()) }, ConsistentRead: true }),
  );
  return out.Item?.grants as number | undefined;
}

/** A documentation address (RFC 5737 TEST-NET-3) no other test uses. */
const testNet = () => `203.0.113.${1 + ((randomBytes(1)[0] ?? 0) % 254)}`;
/** An IPv6 documentation /64 (RFC 3849) no other test uses: its first 64 bits, e.g. `2001:db8:1a2b:3c4d`. */
const docPrefix = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;

describe('free grants per client network (SIGNUP_GRANTS_PER_IP_PER_DAY = 3)', () => {
  beforeAll(() => {
    process.env.SIGNUP_GRANTS_PER_IP_PER_DAY = '3';
    reloadConfig();
  });
  afterAll(() => {
    process.env.SIGNUP_GRANTS_PER_IP_PER_DAY = '0';
    reloadConfig();
  });

  it('through the gateway: the 4th sign-up from one address gets no grant (a forged viewer header changes nothing), another address still does', async () => {
    const from = `127.0.0.${2 + ((randomBytes(1)[0] ?? 0) % 250)}`;
    const users = [];
    for (let i = 0; i < 4; i++) users.push(await signUpAndSignIn(gw));
    const seen = [];
    // Without the origin check, x-viewer-address is anyone's to send: the source IP counts.
    for (const [i, u] of users.entries()) seen.push((await accountFrom(from, u.accessToken, { [VIEWER_ADDRESS_HEADER]: `198.51.100.${i + 1}` })).body.data);
    expect(seen.map((d) => [d.free_tokens, d.free_grant_withheld])).toEqual([
      [200_000, null],
      [200_000, null],
      [200_000, null],
      [0, 'ip_limit'],
    ]);
    expect(await grantsCounted(from)).toBe(3);
    const other = await signUpAndSignIn(gw);
    const otherFrom = from === '127.0.0.254' ? '127.0.0.253' : '127.0.0.254';
    expect((await accountFrom(otherFrom, other.accessToken)).body.data).toMatchObject({ free_tokens: 200_000, free_grant_withheld: null });
    // The withheld account is an account like any other: a later call reads it as it is.
    expect((await accountFrom(from, users[3]!.accessToken)).body.data).toMatchObject({ free_tokens: 0, free_grant_withheld: 'ip_limit' });
  });

  it('IPv6 addresses in one /64 count together; the next /64 is another network', async () => {
    const p = docPrefix();
    const granted = [];
    for (const a of [`${p}::1`, `${p}:ffff:ffff:ffff:ffff`, `${p.toUpperCase()}:0:0:0:abcd`, `${p}:1234::5`])
      granted.push((await signUpFrom(a)).freeGrantWithheld ?? null);
    expect(granted).toEqual([null, null, null, 'ip_limit']);
    expect(await grantsCounted(signupNetwork(`${p}::1`)!)).toBe(3);
    expect((await signUpFrom(`${p.replace(/[0-9a-f]$/, (d) => (d === 'f' ? 'e' : 'f'))}::1`)).freeTokens).toBe(200_000);
  });

  it('a sign-up withheld as disposable_domain or already_granted takes no slot', async () => {
    const ip = testNet();
    const before = (await grantsCounted(ip)) ?? 0;
    const repeat = newEmail('again');
    await signUpFrom(`${docPrefix()}::1`, repeat); // the person's grant, taken elsewhere
    expect((await signUpFrom(ip, repeat)).freeGrantWithheld).toBe('already_granted');
    expect((await signUpFrom(ip, `burner${randomBytes(4).toString('hex')}@mailinator.com`)).freeGrantWithheld).toBe('disposable_domain');
    expect((await grantsCounted(ip)) ?? 0).toBe(before);
  });

  it('8 sign-ups racing from one address: exactly 3 get the grant, the counter says 3', async () => {
    const ip = `${docPrefix()}::7`;
    const accounts = await Promise.all(Array.from({ length: 8 }, () => signUpFrom(ip)));
    expect(accounts.filter((a) => a.freeTokens === 200_000)).toHaveLength(3);
    expect(accounts.filter((a) => a.freeTokens === 0 && a.freeGrantWithheld === 'ip_limit')).toHaveLength(5);
    expect(await grantsCounted(signupNetwork(ip)!)).toBe(3);
    for (const a of accounts) expect(await freeTokens(a.accountId), a.accountId).toBe(a.freeTokens);
  });

  it('2 sign-ups racing for the last slot: exactly one gets it', async () => {
    const ip = `${docPrefix()}::9`;
    await signUpFrom(ip);
    await signUpFrom(ip);
    const racing = await Promise.all([signUpFrom(ip), signUpFrom(ip)]);
    expect(racing.map((a) => a.freeTokens).sort((x, y) => x - y)).toEqual([0, 200_000]);
    expect(await grantsCounted(signupNetwork(ip)!)).toBe(3);
  });

  it('0 turns the limit off; an unknown address is not counted', async () => {
    const ip = `${docPrefix()}::1`;
    process.env.SIGNUP_GRANTS_PER_IP_PER_DAY = '0';
    reloadConfig();
    try {
      for (let i = 0; i < 4; i++) expect((await signUpFrom(ip)).freeTokens).toBe(200_000);
      expect(await grantsCounted(signupNetwork(ip)!)).toBeUndefined();
    } finally {
      process.env.SIGNUP_GRANTS_PER_IP_PER_DAY = '3';
      reloadConfig();
    }
    for (let i = 0; i < 4; i++) expect((await signUpFrom('not an address')).freeTokens).toBe(200_000);
  });
});

describe('clientAddress', () => {
  afterAll(() => {
    delete process.env.ORIGIN_SECRET_ARN;
    reloadConfig();
  });

  it('without the origin check: the source IP, whatever the viewer header says', () => {
    delete process.env.ORIGIN_SECRET_ARN;
    reloadConfig();
    expect(clientAddress({ headers: { [VIEWER_ADDRESS_HEADER]: '198.51.100.1' }, sourceIp: '203.0.113.9' })).toBe('203.0.113.9');
  });

  it("behind CloudFront (origin check on): the viewer header, never CloudFront's source IP", () => {
    process.env.ORIGIN_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:OriginSecret-AbC123';
    reloadConfig();
    expect(clientAddress({ headers: { [VIEWER_ADDRESS_HEADER]: ' 2001:db8::1 ' }, sourceIp: '130.176.0.1' })).toBe('2001:db8::1');
    expect(clientAddress({ headers: {}, sourceIp: '130.176.0.1' })).toBeUndefined();
  });
});

describe('signupNetwork', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    [' 203.0.113.9 ', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::ffff:cb00:7109', '203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002::abcd', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['2001:db8:0:0:1::', '2001:db8::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['::1', '::/64'],
    ['2001:db8:1:2:3:4:1.2.3.4', '2001:db8:1:2::/64'],
    ['not an address', undefined],
    ['203.0.113.9:443', undefined],
    ['', undefined],
  ])('%s → %s', (address, network) => {
    expect(signupNetwork(address)).toBe(network);
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

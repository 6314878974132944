import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addCredit } from '../../functions/shared/accounts/account-store';
import { documentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, signUpAndSignIn, type SignedInUser } from '../support/cognito-user';
import { holdsReturned } from '../support/settle-queue';
import { ledgerEntries } from '../support/ledger';

/**
 * `GET /v1/key`, `GET /v1/credits`, `GET /v1/activity` and `GET /v1/account` against the ledger itself,
 * to the nano-dollar, after a mix of buffered, streamed and embedding requests on two keys (part paid
 * with free tokens, part with credit).
 */
let gw: RunningGateway;
let user: SignedInUser;
const keys: Array<{ key: string; hash: string }> = [];
const CREDIT = 2_000_000_000;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `usage-${process.pid}`, cognito: {} });
  user = await signUpAndSignIn(gw);
  for (const name of ['one', 'two']) {
    const created = (await call(gw, 'POST', '/v1/keys', user.accessToken, { name })).body;
    keys.push({ key: created.key, hash: created.data.hash });
  }
  // A few free tokens left, so the first request is split between free tokens and credit.
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().accounts,
      Key: { accountId: user.sub },
      UpdateExpression: 'SET freeTokens = :f',
      ExpressionAttributeValues: { ':f': 30 },
    }),
  );
  await addCredit(user.sub, CREDIT);
  const sdk = (k: string) => new OpenAI({ baseURL: gw.baseUrl, apiKey: k, maxRetries: 0 });
  const [a, b] = [sdk(keys[0]!.key), sdk(keys[1]!.key)];
  await a.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'one two three' }] });
  const stream = await b.chat.completions.create({ model: 'claude-3-5-sonnet', messages: [{ role: 'user', content: 'stream it' }], stream: true });
  for await (const chunk of stream) void chunk;
  await b.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
  await a.chat.completions.create({ model: 'deepseek-v3', messages: [{ role: 'user', content: 'and four' }] });
  // A prompt the (simulated) provider reads mostly from its cache: 3/4 of it at the cached price.
  await a.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `[cached] ${'words '.repeat(400)}` }] });
  // Each request's ledger item exists from its hold on; wait until all five are settled.
  await vi.waitFor(async () => expect((await ledgerEntries(user.sub)).filter((e) => e.status !== 'held').length).toBeGreaterThanOrEqual(5), { timeout: 5_000 });
  // Requests paid by credit rode this gateway's credit lease: the account's and keys' usage counters
  // move when it is returned (docs/credit-leases.md, "Staleness"), here at once instead of when idle.
  await holdsReturned(user.sub);
});

afterAll(async () => {
  await gw?.close();
});

describe('usage agrees with the ledger', () => {
  it('GET /v1/key gives each key its own ledger total', async () => {
    const entries = await ledgerEntries(user.sub);
    expect(entries).toHaveLength(5);
    for (const { key, hash } of keys) {
      const mine = entries.filter((e) => e.keyHash === hash).reduce((s, e) => s + e.costNanoUsd, 0);
      expect(mine).toBeGreaterThan(0);
      const res = await fetch(`${gw.baseUrl}/key`, { headers: { authorization: `Bearer ${key}` } });
      const info = (await res.json()) as { data: Record<string, unknown> };
      expect(info.data).toMatchObject({
        label: `${key.slice(0, 11)}…`,
        usage_nano_usd: mine,
        usage: mine / 1e9,
        limit: null,
        limit_remaining: null,
        limit_reset: null,
        is_free_tier: false,
      });
      expect(info.data.rate_limit).toMatchObject({ interval: '1m' });
    }
    expect((await fetch(`${gw.baseUrl}/key`, { headers: { authorization: `Bearer ${user.accessToken}` } })).status).toBe(401);
  });

  it('GET /v1/credits and /v1/account: usage = Σ ledger costs, credits − usage = balance', async () => {
    const total = (await ledgerEntries(user.sub)).reduce((s, e) => s + e.costNanoUsd, 0);
    const credits = (await call(gw, 'GET', '/v1/credits', user.accessToken)).body.data;
    expect(credits).toEqual({ total_credits: CREDIT / 1e9, total_credits_nano_usd: CREDIT, total_usage: total / 1e9, total_usage_nano_usd: total });
    const account = (await call(gw, 'GET', '/v1/account', user.accessToken)).body.data;
    expect(account).toMatchObject({
      credit_nano_usd: CREDIT - total,
      total_usage_nano_usd: total,
      month_usage_nano_usd: total,
      free_tokens: 0,
      key_count: 2,
      is_free_tier: false,
    });
  });

  it('GET /v1/activity groups by day × model × key and sums to the ledger', async () => {
    const entries = await ledgerEntries(user.sub);
    const res = await call(gw, 'GET', '/v1/activity?days=30', user.accessToken);
    expect(res.status).toBe(200);
    const rows = res.body.data as Array<Record<string, any>>;
    expect(rows.reduce((s, r) => s + r.usage_nano_usd, 0)).toBe(entries.reduce((s, e) => s + e.costNanoUsd, 0));
    expect(rows.reduce((s, r) => s + r.requests, 0)).toBe(5);
    expect(rows.reduce((s, r) => s + r.prompt_tokens, 0)).toBe(entries.reduce((s, e) => s + e.promptTokens, 0));
    for (const e of entries) {
      const row = rows.find((r) => r.model === e.servedModel && r.key_hash === e.keyHash);
      expect(row).toMatchObject({
        date: String(e.createdAt).slice(0, 10),
        provider_name: e.provider,
        key_name: e.keyHash === keys[0]!.hash ? 'one' : 'two',
        byok_requests: 0,
      });
    }
    // Prompt caching, from the entries' stored buckets: cached tokens, writes, and what the reads saved.
    const cached = entries.filter((e) => (e.cachedTokens ?? 0) > 0);
    expect(cached).toHaveLength(1);
    const e = cached[0]!;
    const row = rows.find((r) => r.model === e.servedModel && r.key_hash === e.keyHash)!;
    const saved = Math.floor((e.cachedTokens * (e.inputPrice - e.cachedInputPrice)) / 1000);
    expect(saved).toBeGreaterThan(0);
    expect(row).toMatchObject({ cached_tokens: e.cachedTokens, cache_write_tokens: 0, cache_discount_nano_usd: saved, cache_discount: saved / 1e9 });
    expect(e.cachedTokens).toBe(Math.floor(e.promptTokens * 0.75));
    expect(rows.reduce((s, r) => s + r.cached_tokens, 0)).toBe(e.cachedTokens);
    for (const r of rows.filter((x) => x !== row)) expect(r).toMatchObject({ cached_tokens: 0, cache_write_tokens: 0, cache_discount_nano_usd: 0 });
    expect((await call(gw, 'GET', '/v1/activity?days=0', user.accessToken)).status).toBe(400);
    expect((await call(gw, 'GET', '/v1/activity?days=abc', user.accessToken)).status).toBe(400);
  });
});

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredit } from '../../functions/shared/accounts/account-store';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { call, signUpAndSignIn, type SignedInUser } from '../support/cognito-user';
import { pollLedgerEntry } from '../support/ledger';

/**
 * The caller's end user and session on the ledger entry (docs/DATA-MODEL.md §4), from each surface's
 * own fields, through the official openai and Anthropic SDKs against the real handlers, DynamoDB
 * Local and the simulator; shown by `GET /v1/generation` (OpenRouter's `external_user`, `session_id`)
 * and counted and filtered by `GET /v1/activity`. A value longer than the ledger keeps is a 400 in the
 * caller's protocol, and reaches no upstream.
 */
let gw: RunningGateway;
let user: SignedInUser;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `caller-ids-${process.pid}`, cognito: {} });
  user = await signUpAndSignIn(gw);
  key = (await call(gw, 'POST', '/v1/keys', user.accessToken, { name: 'ids' })).body.key;
  await addCredit(user.sub, 1_000_000_000);
  openai = new OpenAI({ baseURL: gw.baseUrl, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.baseUrl.replace(/\/v1$/, ''), apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

const sim = () => gw.simulator!;
const LONG = 'x'.repeat(65);

/** The settled ledger entry of a request, by its `x-request-id`. */
async function entryOf(response: Response): Promise<Record<string, unknown>> {
  const entry = await pollLedgerEntry(user.sub, response.headers.get('x-request-id'));
  expect(entry).toBeDefined();
  return entry!;
}

async function generation(response: Response): Promise<Record<string, unknown>> {
  const res = await fetch(`${gw.baseUrl}/generation?id=${response.headers.get('x-request-id')}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

describe('end user and session on the ledger entry', () => {
  it('chat completions: `user` and OpenRouter’s `session_id`, buffered and streamed', async () => {
    const buffered = await openai.chat.completions
      .create({ model: 'gpt-4o-mini', max_tokens: 8, user: 'end-user-1', messages: [{ role: 'user', content: 'hi' }], session_id: 'sess-chat' } as never)
      .withResponse();
    expect(await entryOf(buffered.response)).toMatchObject({ user: 'end-user-1', sessionId: 'sess-chat' });
    expect(await generation(buffered.response)).toMatchObject({ external_user: 'end-user-1', session_id: 'sess-chat' });
    // Streamed, with the session in OpenRouter's header and OpenAI's `safety_identifier` (which wins over `user`).
    const stream = await openai.chat.completions
      .create(
        { model: 'gpt-4o-mini', max_tokens: 8, stream: true, user: 'old-style', safety_identifier: 'safe-2', messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-session-id': 'sess-chat' } },
      )
      .withResponse();
    for await (const chunk of stream.data) void chunk;
    expect(await entryOf(stream.response)).toMatchObject({ user: 'safe-2', sessionId: 'sess-chat' });
    // A request naming neither has neither, and generation says null.
    const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const entry = await entryOf(plain.response);
    expect(entry.user).toBeUndefined();
    expect(entry.sessionId).toBeUndefined();
    expect(await generation(plain.response)).toMatchObject({ external_user: null, session_id: null });
  });

  it('Responses API: `user`, and the session from its header', async () => {
    const r = await openai.responses
      .create({ model: 'gpt-4o-mini', max_output_tokens: 16, user: 'end-user-r', input: 'hi' }, { headers: { 'x-session-id': 'sess-resp' } })
      .withResponse();
    expect(await entryOf(r.response)).toMatchObject({ user: 'end-user-r', sessionId: 'sess-resp' });
  });

  it('Messages API: Claude Code’s metadata.user_id and x-claude-code-session-id', async () => {
    const session = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
    const device = 'f0'.repeat(32);
    const r = await anthropic.messages
      .create(
        {
          model: 'claude-sonnet-4-6',
          max_tokens: 16,
          metadata: { user_id: JSON.stringify({ device_id: device, account_uuid: '', session_id: session }) },
          messages: [{ role: 'user', content: 'hi' }],
        },
        { headers: { 'x-claude-code-session-id': session } },
      )
      .withResponse();
    expect(await entryOf(r.response)).toMatchObject({ user: device, sessionId: session });
    // Claude Code's older format names the same end user (its hash) and session.
    const legacy = await anthropic.messages
      .create({
        model: 'claude-sonnet-4-6',
        max_tokens: 16,
        metadata: { user_id: `user_${device}_account__session_${session}` },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    expect(await entryOf(legacy.response)).toMatchObject({ user: device, sessionId: session });
    // Any other user id is the end user as sent; the header alone names the session.
    const other = await anthropic.messages
      .create(
        { model: 'gpt-4o-mini', max_tokens: 16, metadata: { user_id: 'opaque-user' }, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'x-claude-code-session-id': 'cc-2' } },
      )
      .withResponse();
    expect(await entryOf(other.response)).toMatchObject({ user: 'opaque-user', sessionId: 'cc-2' });
  });

  it('GET /v1/activity counts the distinct end users and sessions, and filters by either', async () => {
    const all = (await call(gw, 'GET', '/v1/activity?days=1', user.accessToken)).body.data as Array<Record<string, number>>;
    const sum = (rows: Array<Record<string, number>>, k: string) => rows.reduce((s, r) => s + r[k]!, 0);
    expect(sum(all, 'requests')).toBeGreaterThanOrEqual(7);
    expect(sum(all, 'sessions')).toBeGreaterThanOrEqual(3);
    const chat = (await call(gw, 'GET', '/v1/activity?days=1&session_id=sess-chat', user.accessToken)).body.data as Array<Record<string, number>>;
    expect(sum(chat, 'requests')).toBe(2);
    expect(chat.map((r) => [r.sessions, r.external_users])).toEqual([[1, 2]]);
    const one = (await call(gw, 'GET', '/v1/activity?days=1&external_user=end-user-1&session_id=sess-chat', user.accessToken)).body.data;
    expect(sum(one, 'requests')).toBe(1);
    expect((await call(gw, 'GET', '/v1/activity?days=1&external_user=nobody', user.accessToken)).body.data).toEqual([]);
    const bad = await call(gw, 'GET', `/v1/activity?session_id=${LONG}`, user.accessToken);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'session_id' });
  });
});

describe('an over-long end user or session is a 400 in the caller’s protocol', () => {
  it('chat completions and Responses: OpenAI’s error, naming the parameter', async () => {
    const before = sim().requests.length;
    const cases: Array<[string, () => Promise<unknown>]> = [
      ['user', () => openai.chat.completions.create({ model: 'gpt-4o-mini', user: LONG, messages: [{ role: 'user', content: 'hi' }] })],
      ['session_id', () => openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], session_id: LONG } as never)],
      [
        'x-session-id',
        () => openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-session-id': LONG } }),
      ],
      ['user', () => openai.responses.create({ model: 'gpt-4o-mini', user: LONG, input: 'hi' })],
      // 33 characters, 66 bytes: the bound is on what the ledger stores.
      ['user', () => openai.chat.completions.create({ model: 'gpt-4o-mini', user: 'é'.repeat(33), messages: [{ role: 'user', content: 'hi' }] })],
    ];
    for (const [param, send] of cases) {
      const err = await send().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.param).toBe(param);
      expect(e.message).toMatch(/64 bytes/);
    }
    expect(sim().requests.length).toBe(before);
  });

  it('Codex’s generic `session-id` header names the session, and an over-long one is ignored rather than refused', async () => {
    const codex = await openai.responses
      .create({ model: 'gpt-4o-mini', max_output_tokens: 16, input: 'hi' }, { headers: { 'session-id': 'codex-thread-1' } })
      .withResponse();
    expect(await entryOf(codex.response)).toMatchObject({ sessionId: 'codex-thread-1' });
    const other = await openai.responses
      .create({ model: 'gpt-4o-mini', max_output_tokens: 16, input: 'hi' }, { headers: { 'session-id': LONG } })
      .withResponse();
    expect((await entryOf(other.response)).sessionId).toBeUndefined();
  });

  it('Messages API: Anthropic’s invalid_request_error', async () => {
    const before = sim().requests.length;
    const sends = [
      () => anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 16, metadata: { user_id: LONG }, messages: [{ role: 'user', content: 'hi' }] }),
      () =>
        anthropic.messages.create(
          { model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
          { headers: { 'x-claude-code-session-id': LONG } },
        ),
    ];
    for (const send of sends) {
      const err = await send().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const e = err as InstanceType<typeof Anthropic.BadRequestError>;
      expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(e.message).toMatch(/64 bytes/);
    }
    expect(sim().requests.length).toBe(before);
  });
});

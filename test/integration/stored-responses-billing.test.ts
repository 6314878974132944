import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadConfig } from '../../functions/shared/config/env';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { pollLedgerEntry, untilSettled } from '../support/ledger';

/**
 * Stored responses and money, through the official openai SDK, the real handlers, DynamoDB Local and
 * the simulator: a request continued with `previous_response_id` or `item_reference` is held before
 * its upstream call for the prompt actually sent — the replayed conversation included — so an account
 * with funds for a short prompt but not for the long stored conversation gets a 402 and no upstream
 * call; an affordable continuation is settled like any chat request, at the upstream's count of the
 * whole conversation; and a responses table that refuses the write neither breaks the answer nor
 * changes its bill.
 */

let gw: RunningGateway;

/** A long user text: `words` words, one simulator token each, about one o200k token each. */
const WORDS = ['river', 'stone', 'lantern', 'meadow', 'copper', 'harbor', 'willow', 'ember', 'falcon', 'orchard'];
const longText = (words: number): string => Array.from({ length: words }, (_, i) => WORDS[i % WORDS.length]).join(' ');
/** The simulator's prompt count of one message (local/simulator/token-count.ts): 4 + its words. */
const simTokens = (text: string): number => 4 + (text.match(/\S+/g)?.length ?? 0);

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `stored-bill-${process.pid}` });
});

afterAll(async () => {
  await gw?.close();
});

const sim = () => {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
};

async function newAccount(freeTokens: number, creditNanoUsd = 0) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const { accountId } = await createAccount({ freeTokens, creditNanoUsd });
  const key = await createKey(accountId, 'test');
  return { client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }), accountId };
}

async function account(accountId: string) {
  const { getAccount } = await import('../../functions/shared/accounts/account-store');
  const a = await getAccount(accountId, { consistent: true });
  if (a === undefined) throw new Error('no account');
  return a;
}

/** The output text of a response as events carry it (the SDK adds `output_text` only to `create`'s result). */
const textOf = (r: OpenAI.Responses.Response | undefined): string =>
  (r?.output ?? []).flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('');

/** Waits (≤ 10 s) until the account holds nothing (every settle landed). */
const settled = (accountId: string) => untilSettled(accountId, { timeout: 10_000, interval: 30 });

/** Runs `call`, which must fail with 402 before any upstream call, leaving the account as it was. */
async function refusedWithoutUpstream(accountId: string, call: () => Promise<unknown>): Promise<void> {
  const before = await settled(accountId);
  const upstreamBefore = sim().requests.length;
  const err = (await call().then(
    () => undefined,
    (e: unknown) => e,
  )) as InstanceType<typeof OpenAI.APIError> | undefined;
  expect(err?.status).toBe(402);
  expect(err?.code).toBe('insufficient_quota');
  expect(sim().requests.length).toBe(upstreamBefore);
  const after = await account(accountId);
  expect({ free: after.freeTokens, held: after.heldFreeTokens, credit: after.creditNanoUsd }).toEqual({
    free: before.freeTokens,
    held: 0,
    credit: before.creditNanoUsd,
  });
}

describe('the hold of a continued conversation', () => {
  it('previous_response_id: free tokens for a short prompt but not for the stored conversation is a 402 with no upstream call', async () => {
    const text = longText(6_000);
    // Enough for the first turn's hold (our count × 1.35, framing, 16 output tokens), and after it
    // ~0.35 × the text: plenty for a short prompt, far from the replayed text again.
    const { client, accountId } = await newAccount(Math.ceil(countTokens(text) * 1.35) + 400);
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: text, max_output_tokens: 16 });
    expect(first.id).toMatch(/^resp_/);

    await refusedWithoutUpstream(accountId, () =>
      client.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'And then?', max_output_tokens: 16 }),
    );
    await refusedWithoutUpstream(accountId, async () => {
      const stream = await client.responses.create({
        model: 'gpt-4o-mini',
        previous_response_id: first.id,
        input: 'And then?',
        max_output_tokens: 16,
        stream: true,
      });
      for await (const event of stream) void event;
    });

    // The same account can still pay for the short prompt on its own.
    const short = await client.responses.create({ model: 'gpt-4o-mini', input: 'And then?', max_output_tokens: 16, store: false });
    expect(short.output_text).toMatch(/^Echo: And then/);
  });

  it('item_reference: a reference to a long stored answer is held at its length: 402 with no upstream call', async () => {
    const { client, accountId } = await newAccount(6_000 + 2_000);
    // One long answer (4,000 words), paid for by the first turn. The simulator counts a word as a token;
    // our tokenizer counts its filler words at ~1.4 tokens each, so the answer stays inside the output
    // its hold covers (usage/output-meter.ts cuts an answer there) with max_output_tokens 6,000.
    // gpt-4o, not gpt-4o-mini: the catalogue hedges gpt-4o-mini after 2 s, and on a loaded machine the
    // hedge's other target (no fault there) could answer first with a short echo.
    sim().setFault({ model: 'gpt-4o' }, { kind: 'paced', everyMs: 0, words: 4_000 }, { times: 1 });
    const first = await client.responses.create({ model: 'gpt-4o', input: 'Tell me everything.', max_output_tokens: 6_000 });
    const answer = first.output.find((o) => o.type === 'message');
    if (answer?.type !== 'message') throw new Error('no message');
    expect(first.output_text.split(' ')).toHaveLength(4_000);

    const input: OpenAI.Responses.ResponseInput = [
      { type: 'item_reference', id: answer.id },
      { role: 'user', content: 'Summarise that.' },
    ];
    await refusedWithoutUpstream(accountId, () => client.responses.create({ model: 'gpt-4o-mini', input, max_output_tokens: 16 }));
    const short = await client.responses.create({ model: 'gpt-4o-mini', input: 'Summarise that.', max_output_tokens: 16, store: false });
    expect(short.output_text).toMatch(/^Echo/);
  });
});

describe('the settle of a continued conversation', () => {
  it('bills the whole conversation sent upstream, once, buffered and streamed, previous_response_id and item_reference alike', async () => {
    const { client, accountId } = await newAccount(1_000_000);
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'Remember the word harbor.', max_output_tokens: 40 });
    const history = simTokens('Remember the word harbor.') + simTokens(first.output_text);

    const { data: second, response: r2 } = await client.responses
      .create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'Which word?', max_output_tokens: 40 })
      .withResponse();
    expect(second.usage?.input_tokens).toBe(history + simTokens('Which word?'));

    const stream = await client.responses
      .create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'Which word again?', max_output_tokens: 40, stream: true })
      .withResponse();
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream.data) if (event.type === 'response.completed' || event.type === 'response.incomplete') completed = event.response;
    expect(completed?.usage?.input_tokens).toBe(history + simTokens('Which word again?'));

    const message = first.output.find((o) => o.type === 'message');
    if (message?.type !== 'message') throw new Error('no message');
    const { data: referenced, response: r4 } = await client.responses
      .create({
        model: 'gpt-4o-mini',
        input: [
          { role: 'user', content: 'Remember the word harbor.' },
          { type: 'item_reference', id: message.id },
          { role: 'user', content: 'Which word?' },
        ],
        max_output_tokens: 40,
      })
      .withResponse();
    expect(referenced.usage?.input_tokens).toBe(history + simTokens('Which word?'));

    const answers = [
      { requestId: r2.headers.get('x-request-id'), usage: second.usage },
      { requestId: stream.response.headers.get('x-request-id'), usage: completed?.usage },
      { requestId: r4.headers.get('x-request-id'), usage: referenced.usage },
    ];
    for (const a of answers) {
      const entry = await pollLedgerEntry(accountId, a.requestId);
      expect(entry).toMatchObject({
        status: 'complete',
        publicModel: 'gpt-4o-mini',
        promptTokens: a.usage?.input_tokens,
        completionTokens: a.usage?.output_tokens,
        usageEstimated: false,
      });
    }
    // Free tokens paid it all: the debit is exactly the four requests' tokens, nothing held.
    const total = [first.usage, ...answers.map((a) => a.usage)].reduce((s, u) => s + (u?.input_tokens ?? 0) + (u?.output_tokens ?? 0), 0);
    const after = await settled(accountId);
    expect(1_000_000 - after.freeTokens).toBe(total);
    expect(after.usedFreeTokens).toBe(total);
  });
});

describe('a responses table that refuses the write', () => {
  it('still answers, buffered and streamed, and bills each request exactly once as if it were stored', async () => {
    const { client, accountId } = await newAccount(1_000_000);
    const table = process.env.RESPONSES_TABLE;
    // Every write and read of stored responses now fails (ResourceNotFoundException); billing is untouched.
    process.env.RESPONSES_TABLE = `missing-${process.pid}`;
    reloadConfig();
    let buffered: { data: OpenAI.Responses.Response; requestId: string | null };
    let streamed: { response: OpenAI.Responses.Response | undefined; requestId: string | null };
    try {
      const b = await client.responses.create({ model: 'gpt-4o-mini', input: 'Store me if you can.', max_output_tokens: 30 }).withResponse();
      buffered = { data: b.data, requestId: b.response.headers.get('x-request-id') };
      const s = await client.responses.create({ model: 'gpt-4o-mini', input: 'Stream me.', max_output_tokens: 30, stream: true }).withResponse();
      const types: string[] = [];
      let last: OpenAI.Responses.Response | undefined;
      for await (const event of s.data) {
        types.push(event.type);
        if (event.type === 'response.completed' || event.type === 'response.incomplete') last = event.response;
      }
      expect(types.at(-1)).toMatch(/^response\.(completed|incomplete)$/);
      streamed = { response: last, requestId: s.response.headers.get('x-request-id') };
    } finally {
      process.env.RESPONSES_TABLE = table;
      reloadConfig();
    }
    expect(buffered.data.output_text).toMatch(/^Echo: Store me if you can/);
    expect(textOf(streamed.response)).toMatch(/^Echo: Stream me/);
    let total = 0;
    for (const { requestId, usage } of [
      { requestId: buffered.requestId, usage: buffered.data.usage },
      { requestId: streamed.requestId, usage: streamed.response?.usage },
    ]) {
      const entry = await pollLedgerEntry(accountId, requestId);
      expect(entry).toMatchObject({ status: 'complete', promptTokens: usage?.input_tokens, completionTokens: usage?.output_tokens });
      total += (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0);
    }
    const after = await settled(accountId);
    expect(1_000_000 - after.freeTokens).toBe(total);
    // Not stored: with the table back, neither response can be continued or retrieved.
    await expect(client.responses.retrieve(buffered.data.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.create({ model: 'gpt-4o-mini', previous_response_id: buffered.data.id, input: 'next' })).rejects.toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
    });
  });
});

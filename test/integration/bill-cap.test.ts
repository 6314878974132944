import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import { outputCutAt } from '../../functions/shared/usage/output-meter';
import { accountItem, ledgerEntries } from '../support/ledger';

/**
 * A bill never exceeds its hold. Through the whole path (real HTTP, the real
 * handlers, DynamoDB Local, the simulator misbehaving on demand: tool arguments that follow the schema
 * past `max_tokens`, `[runaway]` replies and reasoning, `[overreport]` usage): the answer is cut where
 * its held output runs out (`finish_reason: "length"`, the upstream request stopped), the charge is
 * min(reported, held) to the nano-dollar, no account, free-token balance or key limit goes below zero,
 * and what a lying upstream reported beyond the hold is recorded as the platform's loss.
 */

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ tablePrefix: `billcap-${process.pid}` });
});

afterAll(async () => {
  await gw?.close();
});

const USD = 1_000_000_000;

const sim = () => {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
};

/** The attack: max_tokens 1 and a tool whose schema asks for 20,000 ten-word items (~180,000 tokens of arguments). */
const ATTACK = {
  model: 'gpt-4o',
  max_tokens: 1,
  messages: [{ role: 'user', content: 'call f' }],
  tools: [
    {
      type: 'function',
      function: {
        name: 'f',
        parameters: {
          type: 'object',
          required: ['x'],
          properties: { x: { type: 'array', minItems: 20000, items: { type: 'string', enum: ['a b c d e f g h i j'] } } },
        },
      },
    },
  ],
};

async function newAccount(opts: { freeTokens: number; creditNanoUsd: number; limitNanoUsd?: number }) {
  const { createAccount } = await import('../../functions/shared/accounts/account-store');
  const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
  const account = await createAccount({ freeTokens: opts.freeTokens, creditNanoUsd: opts.creditNanoUsd });
  const key = await createKey(account.accountId, 'test', opts.limitNanoUsd === undefined ? {} : { limitNanoUsd: opts.limitNanoUsd });
  return {
    accountId: account.accountId,
    key: key.key,
    h16: key.keyHash.slice(0, 16),
    client: new OpenAI({ baseURL: gw.baseUrl, apiKey: key.key, maxRetries: 0 }),
  };
}

async function post(key: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${gw.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, `[DONE]` excluded. */
function events(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

/**
 * Waits for every hold of the account to settle (a credit lease of this process is returned at once, as
 * at shutdown, instead of after its idle time); its ledger entries and the raw account item.
 */
async function settled(accountId: string) {
  const { returnAllLeases } = await import('../../functions/shared/billing/lease');
  const account = await vi.waitFor(
    async () => {
      await returnAllLeases();
      const item = await accountItem(accountId);
      if (item.heldNanoUsd !== 0 || item.heldFreeTokens !== 0) throw new Error('holds not settled yet');
      return item;
    },
    { timeout: 15_000, interval: 50 },
  );
  return { account, ledger: await ledgerEntries(accountId) };
}

/** The one ledger entry of the account, after checking that the debit equals it and nothing is below zero. */
async function oneEntry(accountId: string, start: { credit: number; free: number }) {
  const { account, ledger } = await settled(accountId);
  expect(ledger).toHaveLength(1);
  const e = ledger[0]!;
  expect(Number(account.creditNanoUsd)).toBeGreaterThanOrEqual(0);
  expect(Number(account.freeTokens)).toBeGreaterThanOrEqual(0);
  expect(start.credit - Number(account.creditNanoUsd)).toBe(e.costNanoUsd);
  expect(start.free - Number(account.freeTokens)).toBe(e.freeTokensUsed);
  // The bill never exceeds the hold: money and free tokens, to the nano-dollar and the token.
  expect(Number(e.costNanoUsd)).toBeLessThanOrEqual(Number(e.holdNanoUsd));
  expect(Number(e.freeTokensUsed)).toBeLessThanOrEqual(Number(e.holdFreeTokens));
  return { entry: e, account };
}

/** The simulator's log line of the last upstream request: was it stopped before it finished? */
function lastUpstream() {
  const r = sim().requests.at(-1);
  if (r === undefined) throw new Error('no upstream request');
  return r;
}

/** Expects that the simulator sees the last request's client go away (polled for up to 5 s). */
const expectUpstreamAborted = () => expect.poll(() => lastUpstream().aborted, { timeout: 5_000, interval: 50 }).toBe(true);

describe('the attack: max_tokens 1 and 180,000 tokens of tool arguments, on $0.05', () => {
  it('streamed: cut at the held output (length), upstream stopped, charge ≤ hold, balance ≥ 0', async () => {
    const a = await newAccount({ freeTokens: 0, creditNanoUsd: 0.05 * USD });
    sim().setChunkDelay(20);
    try {
      const res = await post(a.key, '/chat/completions', { ...ATTACK, stream: true, stream_options: { include_usage: true } });
      expect(res.status).toBe(200);
      const chunks = events(await res.text());
      const args = chunks
        .flatMap((c) =>
          (c.choices as Array<{ delta: { tool_calls?: Array<{ function?: { arguments?: string } }> } }>).flatMap((ch) => ch.delta.tool_calls ?? []),
        )
        .map((t) => t.function?.arguments ?? '')
        .join('');
      expect(args.length).toBeGreaterThan(0);
      expect(args.length).toBeLessThan(4 * outputCutAt(1));
      const finishes = chunks.flatMap((c) => (c.choices as Array<{ finish_reason: string | null }>).map((ch) => ch.finish_reason)).filter((f) => f !== null);
      expect(finishes).toEqual(['length']);
      const usage = chunks.at(-1)?.usage as { completion_tokens: number; cost: number };
      expect(usage.completion_tokens).toBeGreaterThan(0);
      expect(usage.completion_tokens).toBeLessThanOrEqual(outputCutAt(1));
      await expectUpstreamAborted();
      const { entry } = await oneEntry(a.accountId, { credit: 0.05 * USD, free: 0 });
      expect(usage.cost).toBe(Number(entry.costNanoUsd) / USD);
      expect(entry).toMatchObject({ maxCompletionTokens: 1, status: 'complete', usageEstimated: true, completionTokens: usage.completion_tokens });
    } finally {
      sim().setChunkDelay(0);
    }
  });

  it('buffered (which streams upstream too): the same cap', async () => {
    const a = await newAccount({ freeTokens: 0, creditNanoUsd: 0.05 * USD });
    sim().setChunkDelay(20);
    try {
      const res = await post(a.key, '/chat/completions', ATTACK);
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        choices: Array<{ finish_reason: string; message: { tool_calls?: Array<{ function: { arguments: string } }> } }>;
        usage: { completion_tokens: number; cost: number };
      };
      expect(body.choices[0]?.finish_reason).toBe('length');
      expect((body.choices[0]?.message.tool_calls?.[0]?.function.arguments ?? '').length).toBeLessThan(4 * outputCutAt(1));
      expect(body.usage.completion_tokens).toBeLessThanOrEqual(outputCutAt(1));
      await expectUpstreamAborted();
      const { entry } = await oneEntry(a.accountId, { credit: 0.05 * USD, free: 0 });
      expect(body.usage.cost).toBe(Number(entry.costNanoUsd) / USD);
    } finally {
      sim().setChunkDelay(0);
    }
  });

  it('a key with a $0.01 spend limit never spends past it', async () => {
    const a = await newAccount({ freeTokens: 0, creditNanoUsd: 5 * USD, limitNanoUsd: 0.01 * USD });
    for (const stream of [false, true]) expect((await post(a.key, '/chat/completions', { ...ATTACK, stream })).status).toBe(200);
    const { account, ledger } = await settled(a.accountId);
    const key = (account.keys as Record<string, { usedNanoUsd: number; leftNanoUsd: number }>)[a.h16]!;
    expect(ledger).toHaveLength(2);
    expect(key.usedNanoUsd).toBe(ledger.reduce((s, e) => s + Number(e.costNanoUsd), 0));
    expect(key.usedNanoUsd).toBeLessThanOrEqual(0.01 * USD);
    expect(key.leftNanoUsd).toBe(0.01 * USD - key.usedNanoUsd);
    for (const e of ledger) expect(Number(e.costNanoUsd)).toBeLessThanOrEqual(Number(e.holdNanoUsd));
  });
});

describe('a lying upstream: [overreport] usage with normal output', () => {
  it('streamed and buffered: charged the hold, never more; the rest is the platform loss (ledger field; the metric: test/observability/metrics.test.ts)', async () => {
    const { computeCharge } = await import('../../functions/shared/money/price');
    for (const stream of [false, true]) {
      const a = await newAccount({ freeTokens: 0, creditNanoUsd: 1 * USD });
      const res = await post(a.key, '/chat/completions', {
        model: 'gpt-4o',
        max_tokens: 20,
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        messages: [{ role: 'user', content: 'hello [overreport]' }],
      });
      expect(res.status).toBe(200);
      const usage = (stream ? events(await res.text()).at(-1)?.usage : ((await res.json()) as { usage: unknown }).usage) as {
        prompt_tokens: number;
        completion_tokens: number;
        cost: number;
      };
      const { entry } = await oneEntry(a.accountId, { credit: 1 * USD, free: 0 });
      // The upstream's own (inflated) counts are on record; the charge is the hold, the rest the loss.
      expect(entry.completionTokens).toBe(usage.completion_tokens);
      expect(entry.completionTokens).toBeGreaterThan(Number(entry.maxCompletionTokens));
      const reported = computeCharge({
        promptTokens: Number(entry.promptTokens),
        completionTokens: Number(entry.completionTokens),
        freeTokensAvailable: 0,
        inputPrice: Number(entry.inputPrice),
        outputPrice: Number(entry.outputPrice),
      });
      expect(entry.costNanoUsd).toBe(entry.holdNanoUsd);
      expect(entry.lossNanoUsd).toBe(reported.costNanoUsd - Number(entry.holdNanoUsd));
      expect(usage.cost).toBe(Number(entry.costNanoUsd) / USD);
    }
  });

  it('a request held in free tokens never spills into credit, however much is reported', async () => {
    const a = await newAccount({ freeTokens: 200_000, creditNanoUsd: 0.05 * USD });
    const res = await post(a.key, '/chat/completions', { model: 'gpt-4o', max_tokens: 20, messages: [{ role: 'user', content: 'hello [overreport]' }] });
    expect(res.status).toBe(200);
    const { entry, account } = await oneEntry(a.accountId, { credit: 0.05 * USD, free: 200_000 });
    expect(entry.holdNanoUsd).toBe(0);
    expect(entry.costNanoUsd).toBe(0);
    expect(account.creditNanoUsd).toBe(0.05 * USD);
    expect(entry.freeTokensUsed).toBe(entry.holdFreeTokens);
    expect(Number(entry.lossNanoUsd)).toBeGreaterThan(0);
    // And the attack on a free-token account: cut at the held output, no credit touched.
    const b = await newAccount({ freeTokens: 200_000, creditNanoUsd: 0 });
    expect((await post(b.key, '/chat/completions', { ...ATTACK, stream: true })).status).toBe(200);
    const attacked = await oneEntry(b.accountId, { credit: 0, free: 200_000 });
    expect(attacked.entry.costNanoUsd).toBe(0);
    expect(attacked.account.freeTokens).toBeGreaterThan(199_000);
  });

  it('embeddings: the charge never exceeds the hold', async () => {
    const a = await newAccount({ freeTokens: 0, creditNanoUsd: 1 * USD });
    const res = await post(a.key, '/embeddings', { model: 'text-embedding-3-small', input: 'some text to embed [overreport]' });
    expect(res.status).toBe(200);
    const { entry } = await oneEntry(a.accountId, { credit: 1 * USD, free: 0 });
    expect(entry.costNanoUsd).toBe(entry.holdNanoUsd);
    expect(Number(entry.lossNanoUsd)).toBeGreaterThan(0);
  });
});

describe('an upstream that ignores max_tokens: [runaway] text, reasoning, n = 2, the Responses API', () => {
  it('n = 2, streamed: both choices end at the held output (2 × max_tokens in all)', async () => {
    const a = await newAccount({ freeTokens: 0, creditNanoUsd: 1 * USD });
    const s = await a.client.chat.completions.create({
      model: 'gpt-4o',
      max_tokens: 8,
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'go [runaway]' }],
    });
    const text = ['', ''];
    const finish: Array<string | null> = [null, null];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of s) {
      for (const ch of c.choices) {
        text[ch.index] += ch.delta.content ?? '';
        if (ch.finish_reason) finish[ch.index] = ch.finish_reason;
      }
      usage = c.usage ?? usage;
    }
    expect(finish).toEqual(['length', 'length']);
    expect(usage?.completion_tokens).toBeLessThanOrEqual(outputCutAt(16));
    expect(text.join(' ').split(/\s+/).length).toBeLessThan(outputCutAt(16));
    const { entry } = await oneEntry(a.accountId, { credit: 1 * USD, free: 0 });
    expect(entry).toMatchObject({ maxCompletionTokens: 16, completionTokens: usage?.completion_tokens });
  });

  it('reasoning past max_tokens (deepseek-r1, buffered): cut, charge ≤ hold', async () => {
    const a = await newAccount({ freeTokens: 0, creditNanoUsd: 1 * USD });
    const r = await a.client.chat.completions.create({ model: 'deepseek-r1', max_tokens: 30, messages: [{ role: 'user', content: 'think [runaway]' }] });
    expect(r.choices[0]?.finish_reason).toBe('length');
    const reasoning = (r.choices[0]?.message as { reasoning_content?: string }).reasoning_content ?? '';
    expect(reasoning.length).toBeGreaterThan(0);
    expect(reasoning.split(/\s+/).length).toBeLessThan(outputCutAt(30));
    expect(r.usage?.completion_tokens).toBeLessThanOrEqual(outputCutAt(30));
    await oneEntry(a.accountId, { credit: 1 * USD, free: 0 });
  });

  it('the Responses API, buffered and streamed: incomplete at max_output_tokens, charge ≤ hold', async () => {
    for (const stream of [false, true]) {
      const a = await newAccount({ freeTokens: 0, creditNanoUsd: 1 * USD });
      let response: OpenAI.Responses.Response;
      if (!stream) {
        response = await a.client.responses.create({ model: 'gpt-4o', max_output_tokens: 16, store: false, input: 'go [runaway]' });
      } else {
        const s = await a.client.responses.create({ model: 'gpt-4o', max_output_tokens: 16, store: false, input: 'go [runaway]', stream: true });
        let last: OpenAI.Responses.Response | undefined;
        for await (const e of s) if (e.type === 'response.incomplete' || e.type === 'response.completed') last = e.response;
        if (last === undefined) throw new Error('no final event');
        response = last;
      }
      expect(response.status).toBe('incomplete');
      expect(response.incomplete_details?.reason).toBe('max_output_tokens');
      expect(response.usage?.output_tokens).toBeLessThanOrEqual(outputCutAt(16));
      const { entry } = await oneEntry(a.accountId, { credit: 1 * USD, free: 0 });
      expect(entry.completionTokens).toBe(response.usage?.output_tokens);
    }
  });
});

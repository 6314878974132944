import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../local/gateway';
import type { Fault, FaultMatch } from '../../local/simulator';
import { pollLedgerEntry } from '../support/ledger';

/**
 * What a user of `npm start` gets with the DEFAULT time limits (routing/timeouts.ts LATENCY_TABLE,
 * BUFFERED_CHAT_BUDGET_MS 55 s, STREAM_COMMIT_AFTER_MS 10 s — nothing shortened here), through the
 * whole gateway with the official openai SDK, buffered and streamed:
 *
 * - a hanging, stalled or slow-starting primary → the client has the other target's answer within
 *   15 s (the `standard` first-token limit is 8 s);
 * - a long legitimate generation (a token a second for over a minute) is never cut, streamed or
 *   buffered (the buffered one is held past the 55 s budget with JSON-whitespace beats);
 * - hedged models (gpt-4o-mini after 2 s, claude-haiku-4-5 after 3 s) race their next target.
 *
 * The slow cases run concurrently (one minute in all); each uses its own upstream targets, so the
 * faults of one never touch another: gpt-4o (openai:gpt-4o → anthropic:claude-sonnet-4-6),
 * deepseek-v3 (deepseek → together 70B), claude-opus-4-6 (anthropic:opus-4-6 → the Opus tier's first, opus-5-5),
 * claude-sonnet-5-5 (paced, served by itself), and the hedged pair (anthropic:haiku, openai:gpt-4o-mini,
 * gemini:flash-lite).
 */

/** The client's wait for a fallback answer, with the default limits (ms). */
const TARGET_MS = 15_000;

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  for (const v of ['UPSTREAM_TIMEOUTS_MS', 'STREAM_COMMIT_AFTER_MS', 'BUFFERED_CHAT_BUDGET_MS']) {
    if (process.env[v] !== undefined) throw new Error(`${v} must not be set for the default-timeouts test`);
  }
  gw = await startGateway({ tablePrefix: `defaults-${process.pid}`, devFreeTokens: 100_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

const ask = (tag: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content: `defaults ${tag}` }];

interface Answer {
  text: string;
  ms: number;
  model: string | null;
  requestId: string | null;
  finish: string | null | undefined;
}

async function buffered(model: string, tag: string): Promise<Answer> {
  const started = Date.now();
  const { data, response } = await client.chat.completions.create({ model, messages: ask(tag) }).withResponse();
  return {
    text: data.choices[0]?.message.content ?? '',
    ms: Date.now() - started,
    model: response.headers.get('x-modelmux-model'),
    requestId: response.headers.get('x-request-id'),
    finish: data.choices[0]?.finish_reason,
  };
}

async function streamed(model: string, tag: string): Promise<Answer> {
  const started = Date.now();
  const { data: stream, response } = await client.chat.completions.create({ model, messages: ask(tag), stream: true }).withResponse();
  let text = '';
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, ms: Date.now() - started, model: response.headers.get('x-modelmux-model'), requestId: response.headers.get('x-request-id'), finish };
}

/** Both modes at once, for one fault on one upstream target. */
async function bothModes(model: string, tag: string, match: FaultMatch, fault: Fault): Promise<Answer[]> {
  sim().setFault(match, fault, { times: 2 });
  return Promise.all([buffered(model, `${tag} b`), streamed(model, `${tag} s`)]);
}

const fallbackPath = async (requestId: string | null): Promise<string[]> =>
  ((await pollLedgerEntry(gw.accountId, requestId)) as { fallbackPath: string[] } | undefined)?.fallbackPath ?? [];

describe.concurrent('the default time limits', () => {
  it('a hanging primary: the equivalent answers within 15 s, buffered and streamed', async () => {
    const answers = await bothModes('gpt-4o', 'hang', { provider: 'openai', model: 'gpt-4o' }, { kind: 'hang' });
    for (const a of answers) {
      expect(a.model).toBe('claude-3-5-sonnet');
      expect(a.text).toContain('Echo: defaults hang');
      expect(a.ms).toBeGreaterThanOrEqual(7_500); // the 8 s first-token limit bit…
      expect(a.ms).toBeLessThan(TARGET_MS); // …and nothing longer did
      expect(await fallbackPath(a.requestId)).toEqual([expect.stringMatching(/^gpt-4o@openai\/gpt-4o:timeout$/), expect.stringMatching(/:ok$/)]);
    }
  }, 60_000);

  it('a primary that stalls after its headers and role preamble: the equivalent answers within 15 s', async () => {
    const answers = await bothModes('deepseek-v3', 'stall', { provider: 'deepseek' }, { kind: 'stall-after-chunks', chunks: 0 });
    for (const a of answers) {
      expect(a.model).toBe('llama-3-70b');
      expect(a.text).toContain('Echo: defaults stall');
      expect(a.ms).toBeGreaterThanOrEqual(7_500);
      expect(a.ms).toBeLessThan(TARGET_MS);
    }
  }, 60_000);

  it('a slow start: past the first-token limit the next target answers within 15 s; within it, the primary serves', async () => {
    const slow = await bothModes('claude-opus-4-6', 'slow', { provider: 'anthropic', model: 'claude-opus-4-6' }, { kind: 'slow-headers', delayMs: 30_000 });
    for (const a of slow) {
      expect(a.model).toBe('claude-opus-5-5');
      expect(a.ms).toBeLessThan(TARGET_MS);
    }
    // A first token after 5 s is slow but legitimate: not cut.
    const late = await bothModes('claude-opus-4-6', 'late', { provider: 'anthropic', model: 'claude-opus-4-6' }, { kind: 'slow-headers', delayMs: 5_000 });
    for (const a of late) {
      expect(a.model).toBe('claude-opus-4-6');
      expect(a.text).toContain('Echo: defaults late');
      expect(a.ms).toBeGreaterThanOrEqual(5_000);
    }
  }, 60_000);

  it('a long legitimate generation — a token a second for over a minute — completes untouched, streamed and buffered', async () => {
    // 90 words in 60 pieces, 1 s apart (and the Anthropic events around them): ~65 s. The buffered
    // answer outlives the 55 s budget: its 200 is committed then, with JSON whitespace until the body.
    const answers = await bothModes(
      'claude-sonnet-5-5',
      'long',
      { provider: 'anthropic', model: 'claude-sonnet-5-5' },
      { kind: 'paced', everyMs: 1_000, words: 90 },
    );
    for (const a of answers) {
      expect(a.text).toMatch(/^Echo: defaults long [bs]( \S+){86}$/);
      expect(a.finish).toBe('stop');
      expect(a.ms).toBeGreaterThanOrEqual(60_000);
      const entry = await pollLedgerEntry(gw.accountId, a.requestId);
      expect(entry).toMatchObject({ servedModel: 'claude-sonnet-5-5', status: 'complete', usageEstimated: false, completionTokens: 90 });
      expect((entry as { fallbackPath: string[] }).fallbackPath).toHaveLength(1);
    }
    const [b, s] = answers;
    expect(b?.model).toBeNull(); // held past the budget: committed before routing ended
    expect(s?.model).toBe('claude-sonnet-5-5');
    expect(
      sim()
        .requests.filter((r) => r.model === 'claude-sonnet-5-5')
        .every((r) => r.completed && !r.aborted),
    ).toBe(true);
  }, 120_000);

  it("hedging: the first target to produce a token wins, the other is stopped and listed; one ledger entry, at the winner's price", async () => {
    const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
    // claude-haiku-4-5 hedges after 3 s: its partner (gpt-4o-mini) answers at once and wins.
    sim().setFault({ provider: 'anthropic', model: 'claude-haiku-4-5' }, { kind: 'slow-headers', delayMs: 7_000 }, { times: 2 });
    for (const a of await Promise.all([buffered('claude-haiku-4-5', 'hedge win b'), streamed('claude-haiku-4-5', 'hedge win s')])) {
      expect(a.model).toBe('gpt-4o-mini');
      expect(a.text).toContain('Echo: defaults hedge win');
      expect(a.ms).toBeGreaterThanOrEqual(2_900);
      expect(a.ms).toBeLessThan(6_000);
      const entry = await pollLedgerEntry(gw.accountId, a.requestId);
      expect(entry).toMatchObject({ publicModel: 'claude-haiku-4-5', servedModel: 'gpt-4o-mini', status: 'complete' });
      expect((entry as { fallbackPath: string[] }).fallbackPath).toEqual([
        'claude-haiku-4-5@anthropic/claude-haiku-4-5:hedge-lost',
        'gpt-4o-mini@openai/gpt-4o-mini:ok',
      ]);
    }
    // gpt-4o-mini hedges after 2 s; its partner (gemini flash-lite) is slower still: the primary wins.
    sim().setFault({ provider: 'openai', model: 'gpt-4o-mini' }, { kind: 'slow-headers', delayMs: 3_000 }, { times: 2 });
    sim().setFault({ provider: 'gemini', model: 'gemini-2.5-flash-lite' }, { kind: 'slow-headers', delayMs: 7_000 }, { times: 2 });
    for (const a of await Promise.all([buffered('gpt-4o-mini', 'hedge lose b'), streamed('gpt-4o-mini', 'hedge lose s')])) {
      expect(a.model).toBe('gpt-4o-mini');
      expect(a.ms).toBeGreaterThanOrEqual(2_900);
      expect(a.ms).toBeLessThan(6_000);
      expect(await fallbackPath(a.requestId)).toEqual(['gemini-2.0-flash@gemini/gemini-2.5-flash-lite:hedge-lost', 'gpt-4o-mini@openai/gpt-4o-mini:ok']);
    }
    const stopped = sim().requests.filter((r) => (r.model === 'claude-haiku-4-5' || r.model === 'gemini-2.5-flash-lite') && r.fault !== undefined);
    expect(stopped).toHaveLength(4);
    expect(stopped.every((r) => r.aborted)).toBe(true);
    // Losers stopped by us are not failures.
    for (const key of ['anthropic:claude-haiku-4-5', 'gemini:gemini-2.5-flash-lite', 'openai:gpt-4o-mini']) expect(breaker.isOpen(key)).toBe(false);
  }, 60_000);
});

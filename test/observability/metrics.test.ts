import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PROVIDER_NAMES } from '../../functions/shared/providers/manifest';
import { tokenUsage } from '../../functions/shared/usage/token-usage';
import type { RunningGateway } from '../../local/gateway';
import { captureEmf, type EmfMetric } from '../support/emf';
import { pollLedgerEntry } from '../support/ledger';
import { closedPort } from '../support/loopback';

/**
 * Each metric of functions/shared/observability/metrics.ts, read from the EMF lines Powertools really
 * writes to stdout, on the code path that should emit it: the real handlers behind the Function URL
 * stand-in (local/gateway.ts), DynamoDB Local and the upstream simulator. The handlers flush once per
 * invocation, after the settle, so each test waits for its request's lines.
 *
 * Plans used: gpt-4o-mini → openai:gpt-4o-mini, then its equivalents (another provider) on failure.
 */

const SERVICE = 'metrics-test';
let gw: RunningGateway;
let client: OpenAI;
let emf: ReturnType<typeof captureEmf>;
let metricsModule: typeof import('../../functions/shared/observability/metrics');

beforeAll(async () => {
  // Read when the first metric buffer is made (worker-env.ts turns metrics off for other test files).
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  process.env.POWERTOOLS_SERVICE_NAME = SERVICE;
  process.env.UPSTREAM_TIMEOUTS_MS = JSON.stringify({
    stream: { connectMs: 1000, headersMs: 700, firstTokenMs: 700, idleMs: 500 },
    buffered: { connectMs: 1000, headersMs: 700, idleMs: 500 },
  });
  const { startGateway } = await import('../../local/gateway');
  gw = await startGateway({ tablePrefix: `metrics-${process.pid}`, devFreeTokens: 100_000_000 });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0 });
  metricsModule = await import('../../functions/shared/observability/metrics');
  emf = captureEmf();
}, 60_000);

afterAll(async () => {
  emf?.stop();
  await gw?.close();
});

beforeEach(async () => {
  sim().reset();
  sim().setChunkDelay(0);
  const { breaker } = await import('../../functions/shared/routing/circuit-breaker');
  breaker.reset();
  emf.clear();
});

function sim() {
  if (!gw.simulator) throw new Error('simulator expected');
  return gw.simulator;
}

/**
 * Waits until `count` invocations have published (their `Requests` lines), then returns every metric
 * seen; with `requestId`, only that request's lines (each carries its request id as metadata).
 */
function published(count = 1, requestId?: string | null): Promise<EmfMetric[]> {
  return vi.waitFor(
    () => {
      const found = emf.metrics().filter((m) => requestId === undefined || m.requestId === requestId);
      if (found.filter((m) => m.name === 'Requests').length < count)
        throw new Error(`no Requests metric published; saw ${JSON.stringify(emf.metrics().map((m) => m.name))}`);
      return found;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** The metric `name` published with exactly the dimension names `dims` (service first). */
function metric(all: EmfMetric[], name: string, dims: string[] = ['service']): EmfMetric[] {
  return all.filter((m) => m.name === name && JSON.stringify(m.dimensions) === JSON.stringify([dims]));
}

function expectOne(all: EmfMetric[], name: string, dims: string[] = ['service']): EmfMetric {
  const found = metric(all, name, dims);
  expect(found, `${name} ${dims.join(',')}`).toHaveLength(1);
  const m = found[0] as EmfMetric;
  expect(m.namespace).toBe('modelmux');
  expect(m.dimensionValues.service).toBe(SERVICE);
  return m;
}

const ask = (tag: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content: `metrics ${tag}` }];

describe('request metrics (edge)', () => {
  it('counts a refused request in Requests, ClientErrors and Errors by statusCode', async () => {
    const bad = new OpenAI({ baseURL: gw.baseUrl, apiKey: 'sk-mux-not-a-real-key', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
    const all = await published();
    expect(expectOne(all, 'Requests').values).toEqual([1]);
    expect(expectOne(all, 'ClientErrors').values).toEqual([1]);
    const errors = expectOne(all, 'Errors', ['service', 'statusCode']);
    expect(errors).toMatchObject({ unit: 'Count', values: [1], dimensionValues: { statusCode: '401' } });
    expect(metric(all, 'ServerErrors')).toEqual([]);
  });

  it('counts an answer that no upstream could give in ServerErrors and Errors{statusCode=503}', async () => {
    for (const provider of PROVIDER_NAMES) {
      sim().setFault({ provider }, { kind: 'status', status: 503 });
    }
    await expect(client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('all down') })).rejects.toMatchObject({ status: 503 });
    const all = await published();
    expect(expectOne(all, 'ServerErrors').values).toEqual([1]);
    expect(expectOne(all, 'Errors', ['service', 'statusCode']).dimensionValues.statusCode).toBe('503');
    expect(metric(all, 'ClientErrors')).toEqual([]);
  });

  it('on Lambda, also counts Requests and ServerErrors by function and version (what a canary rollback alarm reads)', async () => {
    for (const provider of PROVIDER_NAMES) sim().setFault({ provider }, { kind: 'status', status: 503 });
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'Modelmux-Chat';
    process.env.AWS_LAMBDA_FUNCTION_VERSION = '7';
    try {
      await expect(client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('canary down') })).rejects.toMatchObject({ status: 503 });
      const all = await published();
      for (const name of ['Requests', 'ServerErrors']) {
        const byVersion = expectOne(all, name, ['service', 'function', 'version']);
        expect(byVersion).toMatchObject({ values: [1], dimensionValues: { function: 'Modelmux-Chat', version: '7' } });
        expect(expectOne(all, name).values).toEqual([1]);
      }
      expect(metric(all, 'ClientErrors', ['service', 'function', 'version'])).toEqual([]);
    } finally {
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
      delete process.env.AWS_LAMBDA_FUNCTION_VERSION;
    }
  });

  it('counts a successful request in Requests only', async () => {
    await client.models.list();
    const all = await published();
    expect(expectOne(all, 'Requests').values).toEqual([1]);
    expect(all.filter((m) => /Errors$/.test(m.name))).toEqual([]);
  });
});

describe('routing metrics', () => {
  it('records a Fallback in total and by requested model when another target answers', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'status', status: 500 });
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('fallback') }).withResponse();
    expect(response.headers.get('x-modelmux-provider')).not.toBe('openai');
    const all = await published();
    expect(expectOne(all, 'Fallbacks').values).toEqual([1]);
    expect(expectOne(all, 'Fallbacks', ['service', 'model']).dimensionValues.model).toBe('gpt-4o-mini');
  });

  it('records no Fallback when the first target answers', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('no fallback') });
    expect(metric(await published(), 'Fallbacks')).toEqual([]);
  });

  it('records BreakerOpened with the target when a target keeps failing', async () => {
    // A reset connection is not caused by the request's content, so it counts against the target for
    // every account (a 5xx from one account alone would open only that account's breaker: circuit-breaker.ts).
    sim().setFault({ provider: 'openai' }, { kind: 'reset-before-headers' });
    // Each request fails openai:gpt-4o-mini twice (one retry); the third failure opens its breaker.
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('breaker 1') });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('breaker 2') });
    const all = await published(2);
    expect(expectOne(all, 'BreakerOpened').values).toEqual([1]);
    expect(expectOne(all, 'BreakerOpened', ['service', 'target']).dimensionValues.target).toBe('openai:gpt-4o-mini');
  });

  it('records TimeToFirstToken for a stream, within the time the client waited', async () => {
    sim().setChunkDelay(5);
    const started = Date.now();
    const { data: stream, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('ttft'), stream: true }).withResponse();
    let firstChunkAfter = Number.NaN;
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content && Number.isNaN(firstChunkAfter)) firstChunkAfter = Date.now() - started;
    const ttft = expectOne(await published(1, response.headers.get('x-request-id')), 'TimeToFirstToken');
    expect(ttft.unit).toBe('Milliseconds');
    expect(ttft.values[0]).toBeGreaterThanOrEqual(0);
    expect(ttft.values[0]).toBeLessThanOrEqual(firstChunkAfter);
  });

  it('records Overhead without the upstream time: a 400 ms upstream leaves it well under 400 ms', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'slow-headers', delayMs: 400 });
    const started = Date.now();
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('overhead') });
    const elapsed = Date.now() - started;
    const overhead = expectOne(await published(), 'Overhead');
    expect(overhead.unit).toBe('Milliseconds');
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(overhead.values[0]).toBeGreaterThanOrEqual(0);
    expect(overhead.values[0]).toBeLessThan(elapsed - 350);
  });
});

describe('billing metrics', () => {
  it("records UpstreamOverHoldNanoUsd, the ledger entry's lossNanoUsd, when an upstream reports more than the hold covers", async () => {
    const { createAccount } = await import('../../functions/shared/accounts/account-store');
    const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
    const account = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    const paying = new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(account.accountId, 'metrics')).key, maxRetries: 0 });
    // The simulator's [overreport] marker: 100 × the true usage (local/simulator/README.md).
    const { response } = await paying.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: ask('[overreport]') }).withResponse();
    const entry = await pollLedgerEntry(account.accountId, response.headers.get('x-request-id'));
    const all = await published(1, response.headers.get('x-request-id'));
    expect(entry?.lossNanoUsd).toBeGreaterThan(0);
    expect(expectOne(all, 'UpstreamOverHoldNanoUsd')).toMatchObject({ unit: 'None', values: [entry?.lossNanoUsd] });
    expect(expectOne(all, 'CostNanoUsd').values).toEqual([entry?.costNanoUsd]);
  });

  it('records the settled tokens and cost exactly as the ledger entry has them, not estimated', async () => {
    // An account paying in credit (free tokens would make the cost 0).
    const { createAccount } = await import('../../functions/shared/accounts/account-store');
    const { createKey } = await import('../../functions/shared/accounts/keys/api-key-store');
    const account = await createAccount({ freeTokens: 0, creditNanoUsd: 1_000_000_000 });
    const paying = new OpenAI({ baseURL: gw.baseUrl, apiKey: (await createKey(account.accountId, 'metrics')).key, maxRetries: 0 });
    const { response } = await paying.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('billed') }).withResponse();
    const entry = await pollLedgerEntry(account.accountId, response.headers.get('x-request-id'));
    const all = await published(1, response.headers.get('x-request-id'));
    expect(expectOne(all, 'PromptTokens').values).toEqual([entry?.promptTokens]);
    expect(expectOne(all, 'CompletionTokens').values).toEqual([entry?.completionTokens]);
    const cost = expectOne(all, 'CostNanoUsd');
    expect(cost).toMatchObject({ unit: 'None', values: [entry?.costNanoUsd] });
    expect(cost.values[0]).toBeGreaterThan(0);
    expect(metric(all, 'UsageEstimated')).toEqual([]);
  });

  it('records UsageEstimated when a cut stream is billed from our tokenizer', async () => {
    sim().setFault({ provider: 'openai' }, { kind: 'reset-after-chunks', chunks: 3 }, { times: 1 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: ask('cut'), stream: true });
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toThrow();
    const all = await published();
    expect(expectOne(all, 'UsageEstimated').values).toEqual([1]);
    expect(expectOne(all, 'CompletionTokens').values[0]).toBeGreaterThan(0);
  });

  it('records SettleFailures when the ledger write cannot land in-process (it is queued, or left to the sweep)', async () => {
    const { settleRequest, usageEntry } = await import('../../functions/shared/app/settle-request');
    const { settleDurably } = await import('../../functions/shared/billing/settle-queue');
    const { createDocumentClient, setDocumentClient } = await import('../../functions/shared/store/dynamo');
    const { CATALOGUE, getModel } = await import('../../functions/shared/catalogue/catalogue');
    const { planAttempts } = await import('../../functions/shared/routing/attempt-plan');
    const attempt = planAttempts(getModel('gpt-4o', 'chat'), CATALOGUE, { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9' })[0];
    if (attempt === undefined) throw new Error('no attempt');
    const hold = {
      ownerAccountId: 'acct_x',
      accountId: 'acct_x',
      shard: 0,
      requestId: `req_${Date.now()}`,
      keyHash: 'a'.repeat(64),
      holdFreeTokens: 0,
      holdNanoUsd: 1_000,
      keyLimited: false,
      accountSlot: false,
      keySlot: false,
      promptTokensEstimate: 10,
      promptTokensHeld: 10,
      maxCompletionTokens: 5,
      holdInputPrice: 1,
      holdOutputPrice: 1,
      publicModel: 'gpt-4o',
      createdAt: new Date().toISOString(),
      holdExpiresAt: Date.now() + 60_000,
    };
    const queueUrl = process.env.SETTLE_QUEUE_URL;
    delete process.env.SETTLE_QUEUE_URL;
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}`, maxAttempts: 1 }));
    try {
      const entry = usageEntry({
        requestedModel: 'gpt-4o',
        attempt,
        attempts: [{ publicModel: 'gpt-4o', provider: 'openai', upstreamModel: 'gpt-4o', outcome: 'ok', status: 200, ms: 5 }],
        usage: { tokens: tokenUsage({ prompt: 10, completion: 5 }), estimated: false },
        status: 'complete',
      });
      const failing = { settle: (e: typeof entry) => settleDurably(hold, { kind: 'bill', entry: e }, 200) };
      await settleRequest(failing as never, entry, { requestId: hold.requestId, receivedAt: Date.now(), attempts: 1 });
    } finally {
      setDocumentClient(undefined);
      if (queueUrl !== undefined) process.env.SETTLE_QUEUE_URL = queueUrl;
    }
    metricsModule.publishMetrics();
    const all = emf.metrics();
    expect(expectOne(all, 'SettleFailures').values).toEqual([1]);
    expect(metric(all, 'CostNanoUsd')).toEqual([]);
  });

  it('defines HoldsPending, HoldsOverdue and SettlesRetried for the settle path', () => {
    metricsModule.recordPendingHolds({ pending: 7, overdue: 2 });
    metricsModule.recordSettlesRetried(3);
    metricsModule.publishMetrics();
    const all = emf.metrics();
    expect(expectOne(all, 'HoldsPending').values).toEqual([7]);
    expect(expectOne(all, 'HoldsOverdue').values).toEqual([2]);
    expect(expectOne(all, 'SettlesRetried').values).toEqual([3]);
  });

  it('writes nothing when an invocation recorded nothing', () => {
    metricsModule.publishMetrics();
    expect(emf.metrics()).toEqual([]);
  });
});

describe('metrics of overlapping invocations (one module instance, as on Lambda Managed Instances)', () => {
  it("counts each of 8 overlapping requests once, and names a request on a line only when every value on it is that request's", async () => {
    sim().setChunkDelay(40); // the 8 streams overlap: each records Overhead and TimeToFirstToken before the others publish
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 20, stream: true, messages: ask(`overlap ${i}`) });
        for await (const _chunk of stream) void _chunk;
      }),
    );
    await published(1);
    await vi.waitFor(
      () => {
        if (metric(emf.metrics(), 'Requests').flatMap((m) => m.values).length < 8) throw new Error('fewer than 8 Requests values yet');
      },
      { timeout: 10_000, interval: 20 },
    );
    const all = emf.metrics();
    expect(metric(all, 'Requests').flatMap((m) => m.values)).toEqual(Array(8).fill(1));
    // Each request records each of these once: a line naming a request carries one value of each.
    const named = all.filter((m) => m.requestId !== undefined);
    for (const m of named) expect(m.values, `${m.name} on ${m.requestId}`).toHaveLength(1);
  });
});

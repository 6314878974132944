import { createServer, type Server } from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { settleRequest, type SettleInput } from '../../functions/shared/app/settle-request';
import { CATALOGUE, getModel } from '../../functions/shared/catalogue/catalogue';
import { logger } from '../../functions/shared/observability/logger';
import { planAttempts } from '../../functions/shared/routing/attempt-plan';
import { storeCall, storeOutageSuspected } from '../../functions/shared/store/store-errors';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { authenticate } from '../../functions/shared/accounts/key-store';
import { generateApiKey } from '../../functions/shared/accounts/api-key';
import { admit } from '../../functions/shared/billing/admit';
import { LedgerWriteError, newRequestId, settle } from '../../functions/shared/billing/ledger';
import { UpstreamUnavailableError } from '../../functions/shared/openai/errors';
import { createDocumentClient, setDocumentClient } from '../../functions/shared/store/dynamo';

/** A port nothing listens on: connections are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const hanging: Server[] = [];
afterEach(() => {
  setDocumentClient(undefined);
  vi.restoreAllMocks();
});

/** A TCP server that accepts connections and never answers: a DynamoDB that hangs. */
async function hangingPort(): Promise<number> {
  const server = createServer(() => {});
  hanging.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

function settleInput(): SettleInput {
  const attempt = planAttempts(getModel('gpt-4o', 'chat'), CATALOGUE, { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9' })[0]!;
  return {
    accountId: 'acct_x', requestId: newRequestId(), requestedModel: 'gpt-4o', attempt,
    attempts: [{ publicModel: 'gpt-4o', provider: 'openai', upstreamModel: 'gpt-4o', outcome: 'ok', status: 200, ms: 5 }],
    usage: { promptTokens: 10, completionTokens: 5, estimated: false }, status: 'complete', receivedAt: Date.now(),
  };
}
afterAll(() => hanging.forEach((s) => s.close()));

async function expect503(p: Promise<unknown>) {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(UpstreamUnavailableError);
  expect((err as UpstreamUnavailableError).status).toBe(503);
  expect((err as UpstreamUnavailableError).message).toMatch(/data store is unavailable/);
}

describe('when DynamoDB is unreachable', () => {
  it('authenticate, admit and createAccount fail fast with 503 (the gateway makes no upstream call)', async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const started = Date.now();
    await expect503(authenticate(generateApiKey().key));
    await expect503(admit('acct_missing'));
    await expect503(createAccount());
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('settle throws LedgerWriteError carrying the whole entry for replay', async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const entry = {
      accountId: 'acct_x', requestId: newRequestId(), publicModel: 'gpt-4o', servedModel: 'gpt-4o', provider: 'openai',
      promptTokens: 10, completionTokens: 5, inputPrice: 2_637_500, outputPrice: 10_550_000, usageEstimated: false, fallbackPath: [],
    };
    const err = await settle(entry).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerWriteError);
    expect((err as LedgerWriteError).entry).toEqual(entry);
    expect((err as LedgerWriteError).cause).toBeInstanceOf(UpstreamUnavailableError);
  });

  it('settleRequest logs a failed ledger write at error level with the entry to replay', async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const error = vi.spyOn(logger, 'error');
    const input = settleInput();
    await settleRequest(input);
    expect(error).toHaveBeenCalledWith('ledger write failed; replay this entry', expect.objectContaining({
      replayable: expect.objectContaining({
        accountId: 'acct_x', requestId: input.requestId, servedModel: 'gpt-4o', provider: 'openai', promptTokens: 10, completionTokens: 5,
        inputPrice: input.attempt.target.displayedPrice.input, outputPrice: input.attempt.target.displayedPrice.output, status: 'complete',
      }),
    }));
  });

  it('settleRequest bills the served target at its own displayed price, its long-prompt tier included', async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const error = vi.spyOn(logger, 'error');
    const attempt = planAttempts(getModel('gemini-2.5-pro', 'chat'), CATALOGUE, { GEMINI_API_KEY: 'k', GEMINI_BASE_URL: 'http://127.0.0.1:9' })[0]!;
    const priced = async (promptTokens: number) => {
      error.mockClear();
      await settleRequest({ ...settleInput(), attempt, usage: { promptTokens, completionTokens: 5, estimated: false } });
      return (error.mock.calls[0]?.[1] as { replayable: { inputPrice: number; outputPrice: number } }).replayable;
    };
    // Gemini 2.5 Pro: $1.25 / $10 per 1M tokens, $2.50 / $15 over 200K prompt tokens; × 1.055 displayed.
    expect(await priced(200_000)).toMatchObject({ inputPrice: 1_318_750, outputPrice: 10_550_000 });
    expect(await priced(200_001)).toMatchObject({ inputPrice: 2_637_500, outputPrice: 15_825_000 });
  });

  it('settleRequest gives up on a write that outlasts its limit: logs the entry for replay, distrusts the caches', async () => {
    // A store call that succeeds clears the suspicion an earlier test left.
    await storeCall(async () => undefined);
    expect(storeOutageSuspected()).toBe(false);
    // The SDK's defaults would retry 3 × 3 s: far past the function's settle reserve.
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await hangingPort()}` }));
    const error = vi.spyOn(logger, 'error');
    const input = settleInput();
    const started = Date.now();
    await settleRequest(input, 300);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error).toHaveBeenCalledWith('ledger write did not finish in time; replay this entry', expect.objectContaining({
      replayable: expect.objectContaining({ requestId: input.requestId, accountId: 'acct_x', completionTokens: 5 }),
      timeoutMs: 300,
    }));
    expect(storeOutageSuspected()).toBe(true);
  });

  it('maps a DynamoDB that accepts connections but never answers to 503 once the request timeout passes', async () => {
    const port = await hangingPort();
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${port}`, requestTimeoutMs: 200, maxAttempts: 2 }));
    const started = Date.now();
    await expect503(authenticate(generateApiKey().key));
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

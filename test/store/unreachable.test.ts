import { createServer, type Server } from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../functions/shared/observability/logger';
import { storeRecentlyFailed } from '../../functions/shared/store/store-errors';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { authenticate } from '../../functions/shared/accounts/authenticate';
import { generateApiKey } from '../../functions/shared/accounts/api-key';
import { settleDurably } from '../../functions/shared/billing/settle-queue';
import type { HoldRecord } from '../../functions/shared/billing/hold-record';
import { newRequestId } from '../../functions/shared/http/request-id';
import { StoreUnavailableError } from '../../functions/shared/errors/gateway-errors';
import { createDocumentClient, setDocumentClient } from '../../functions/shared/store/dynamo';
import { demandOf, entryOf, hold } from '../support/billing';
import { closedPort } from '../support/loopback';

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

function heldRecord(): HoldRecord {
  return {
    ownerAccountId: 'acct_x',
    accountId: 'acct_x',
    shard: 0,
    requestId: newRequestId(),
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
}
afterAll(() => hanging.forEach((s) => s.close()));

async function expect503(p: Promise<unknown>) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreUnavailableError);
  expect((err as StoreUnavailableError).status).toBe(503);
  expect((err as StoreUnavailableError).message).toMatch(/data store is unavailable/);
}

describe('when DynamoDB is unreachable', () => {
  it('authenticate, a hold and createAccount fail fast with 503 (the gateway makes no upstream call)', async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const started = Date.now();
    await expect503(authenticate(generateApiKey().key));
    await expect503(hold('acct_missing', 'a'.repeat(64), demandOf(10, 10)));
    await expect503(createAccount());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(storeRecentlyFailed()).toBe(true);
  });

  it('a settle that cannot land in-process is handed to the settle queue; with no queue it is left to the orphan sweep, loudly', async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const error = vi.spyOn(logger, 'error');
    const record = heldRecord();
    const started = Date.now();
    expect(await settleDurably(record, { kind: 'bill', entry: entryOf(10, 5) }, 300)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error).toHaveBeenCalledWith(
      'settle could not be queued; the orphan sweep will settle the hold',
      expect.objectContaining({ requestId: record.requestId }),
    );
  });

  it("a settle that hangs is given up within its budget, not after the SDK's own retries", async () => {
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${await hangingPort()}` }));
    vi.spyOn(logger, 'error');
    const started = Date.now();
    expect(await settleDurably(heldRecord(), { kind: 'bill', entry: entryOf(10, 5) }, 300)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('maps a DynamoDB that accepts connections but never answers to 503 once the request timeout passes', async () => {
    const port = await hangingPort();
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${port}`, requestTimeoutMs: 200, maxAttempts: 2 }));
    const started = Date.now();
    await expect503(authenticate(generateApiKey().key));
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

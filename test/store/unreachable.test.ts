import { createServer, type Server } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
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
afterEach(() => setDocumentClient(undefined));
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

  it('maps a DynamoDB that accepts connections but never answers to 503 once the request timeout passes', async () => {
    const server = createServer(() => {}); // accepts, never replies
    hanging.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    setDocumentClient(createDocumentClient({ endpoint: `http://127.0.0.1:${port}`, requestTimeoutMs: 200, maxAttempts: 2 }));
    const started = Date.now();
    await expect503(authenticate(generateApiKey().key));
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

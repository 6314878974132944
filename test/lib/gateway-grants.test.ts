import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clearViews } from '../../functions/shared/billing/account-state';
import { abandonLeasesForTests } from '../../functions/shared/billing/lease';
import { isLeaseId } from '../../functions/shared/http/request-id';
import { setClock } from '../../functions/shared/time/clock';
import { accountItem } from '../support/ledger';
import { settleHold } from '../../functions/shared/billing/settle';
import { createAccount } from '../../functions/shared/accounts/account-store';
import { createKey } from '../../functions/shared/accounts/keys/api-key-store';
import { hashApiKey } from '../../functions/shared/accounts/api-key';
import { documentClient } from '../../functions/shared/store/dynamo';
import { demandOf, entryOf, hold } from '../support/billing';
import { recordGrantUse, type GrantUse } from '../support/grant-use';
import { tableNames } from '../../functions/shared/store/tables';
import { GATEWAY_TABLE_ACTIONS, RESPONSES_TABLE_ACTIONS } from '../../lib/constructs/data-tables';
import { startGateway, type RunningGateway } from '../../local/gateway';

/**
 * The IAM grants of the gateway functions (GATEWAY_TABLE_ACTIONS, and the chat function's
 * RESPONSES_TABLE_ACTIONS) against what their code really does: every DynamoDB operation of the request
 * path — buffered and streamed chat, embeddings, Responses API requests that are stored, continued
 * (`previous_response_id`, `item_reference`), retrieved, listed and deleted, a cancelled hold, a
 * repeated settle, and the billing entry of a key written before per-key state — is recorded at
 * the SDK's middleware stack, turned into
 * the IAM action each one needs (transaction items each need their own: DynamoDB Developer Guide, "Using
 * IAM with DynamoDB transactions"), and must be granted; and every granted action must be used.
 */

let gw: RunningGateway;
let client: OpenAI;
let legacyKey: { key: string };
let grantUse: GrantUse;

/**
 * The requests the test's clients sent, and the Function URL invocations that have ended: an invocation
 * ends when its handler returns, after the settle that follows its response.
 */
let sent = 0;
let invocationsEnded = 0;
const countingFetch: typeof fetch = (input, init) => {
  sent++;
  return fetch(input, init);
};

beforeAll(async () => {
  // Before any client is made, so the gateway's own client (its SDK side and its JSON-protocol side,
  // store/lean-document-client.ts) records too.
  grantUse = recordGrantUse();
  gw = await startGateway({ tablePrefix: `grants-${process.pid}`, onInvocation: () => void invocationsEnded++ });
  client = new OpenAI({ baseURL: gw.baseUrl, apiKey: gw.apiKey, maxRetries: 0, fetch: countingFetch });
  // Set up before recording (operator actions, not the request path): an account as written before
  // per-key state, without its `keys` map (nor the `holds` map of holds in flight).
  const legacy = await createAccount();
  legacyKey = await createKey(legacy.accountId, 'legacy');
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().accounts,
      Key: { accountId: legacy.accountId },
      UpdateExpression: 'REMOVE #k, #h',
      ExpressionAttributeNames: { '#k': 'keys', '#h': 'holds' },
    }),
  );
  grantUse.recording = true;
});

afterAll(async () => {
  await gw?.close();
  grantUse?.uninstall();
});

describe('gateway table grants', () => {
  it('cover every DynamoDB action the request path performs, and nothing it does not', async () => {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'grants' }] });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'grants' }], stream: true });
    for await (const chunk of stream) void chunk;
    await client.embeddings.create({ model: 'text-embedding-3-small', input: 'grants' });

    // The Responses API: stored, continued both ways, retrieved, listed, deleted.
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'grants' });
    const next = await client.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'more', stream: true });
    for await (const event of next) void event;
    const message = first.output.find((o) => o.type === 'message');
    await client.responses.create({
      model: 'gpt-4o-mini',
      input: [
        { type: 'item_reference', id: message?.id ?? '' },
        { role: 'user', content: 'again' },
      ],
      store: false,
    });
    await client.responses.retrieve(first.id);
    await client.responses.inputItems.list(first.id);
    await client.responses.delete(first.id);

    // A hold cancelled (no answer), and a settle repeated (idempotent on the request id).
    clearViews();
    const keyHash = hashApiKey(gw.apiKey);
    const h = await hold(gw.accountId, keyHash, demandOf(3, 2));
    await settleHold(h, { kind: 'cancel' });
    const h2 = await hold(gw.accountId, keyHash, demandOf(3, 2));
    await settleHold(h2, { kind: 'bill', entry: entryOf(3, 2) });
    expect((await settleHold(h2, { kind: 'bill', entry: entryOf(3, 2) })).alreadySettled).toBe(true);
    // A cancel of a hold already settled (a late cancel after the settle landed) reads what it charged.
    expect(await settleHold(h2, { kind: 'cancel' })).toMatchObject({ alreadySettled: true, costNanoUsd: expect.any(Number) });

    // An account written before per-key state: its key's entry is added on the first request.
    const legacyClient = new OpenAI({ baseURL: gw.baseUrl, apiKey: legacyKey.key, maxRetries: 0, fetch: countingFetch });
    await legacyClient.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'legacy' }] });

    // A lease left on the account by a container that stopped (frozen, killed), past its expiry: the
    // next request's lease take reconciles it from the ledger entries that name it (billing/lease-reclaim.ts).
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'lease' }] });
    await vi.waitFor(async () => expect(Object.keys((await accountItem(gw.accountId)).holds as object).some(isLeaseId)).toBe(true));
    abandonLeasesForTests();
    clearViews();
    setClock(() => Date.now() + 60 * 60_000);
    try {
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'reclaim' }] });
      expect(grantUse.used).toContain('ledger dynamodb:Query');
    } finally {
      setClock(undefined);
    }

    // Settles run after the response, inside the invocation: wait until every invocation sent has ended.
    await vi.waitFor(() => expect(invocationsEnded).toBe(sent), { timeout: 10_000, interval: 20 });
    const granted = [...Object.entries(GATEWAY_TABLE_ACTIONS), ['responses', RESPONSES_TABLE_ACTIONS] as const].flatMap(([table, actions]) =>
      actions.map((a) => `${table} ${a}`),
    );
    expect([...grantUse.used].sort()).toEqual(granted.sort());
  });
});

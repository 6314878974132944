/** Per-test-file tables in the run's shared DynamoDB Local. */
import { randomBytes } from 'node:crypto';
import { ensureTables } from '../../local/dynamodb-local';
import { createDocumentClient, documentClient } from '../../functions/shared/store/dynamo';
import { TABLE_ENV } from '../../functions/shared/store/table-schemas';
import type { TableNames } from '../../functions/shared/store/tables';
import { reloadConfig } from '../../functions/shared/config/env';

/**
 * Creates the tables with names unique to this call (`<prefix>-<random>-keys` …), points the store at
 * them through KEYS_TABLE / ACCOUNTS_TABLE / LEDGER_TABLE / RESPONSES_TABLE, and returns the names.
 * Call in `beforeAll`; needs worker-env.ts to have set DYNAMODB_ENDPOINT.
 */
export async function createTestTables(prefix = 'test'): Promise<TableNames> {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set: is test/support/worker-env.ts in setupFiles?');
  const id = `${prefix}-${randomBytes(4).toString('hex')}`;
  const names: TableNames = { keys: `${id}-keys`, accounts: `${id}-accounts`, ledger: `${id}-ledger`, responses: `${id}-responses` };
  const client = createDocumentClient({ endpoint });
  try {
    await ensureTables(client, names);
  } finally {
    client.destroy();
  }
  process.env[TABLE_ENV.keys] = names.keys;
  process.env[TABLE_ENV.accounts] = names.accounts;
  process.env[TABLE_ENV.ledger] = names.ledger;
  process.env[TABLE_ENV.responses] = names.responses;
  reloadConfig();
  return names;
}

/**
 * Counts every DynamoDB call the container's client makes from now on, at the SDK's middleware stack
 * (so the store itself is not mocked). Read `.calls` before and after the code under test.
 */
export function countStoreCalls(): { readonly calls: number } {
  const counter = { calls: 0 };
  documentClient().middlewareStack.add(
    (next) => async (args) => {
      counter.calls++;
      return next(args);
    },
    { step: 'initialize', name: `countStoreCalls${randomBytes(4).toString('hex')}` },
  );
  return counter;
}

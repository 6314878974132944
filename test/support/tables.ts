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

/**
 * Counts the items DynamoDB read for the container's client from now on, from its answers: a Query's
 * `Count`, a Scan's `ScannedCount` (what it was billed for), a BatchGetItem's responses, a GetItem's
 * item; and which commands ran. Read `.items` / `.commands` before and after the code under test.
 */
export function countItemsRead(): { items: number; readonly commands: string[] } {
  const counter = { items: 0, commands: [] as string[] };
  documentClient().middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const out = result.output as { Count?: number; ScannedCount?: number; Responses?: Record<string, unknown[]>; Item?: unknown };
      const command = String((context as { commandName?: string }).commandName ?? '');
      counter.commands.push(command);
      if (command.startsWith('Scan')) counter.items += out.ScannedCount ?? 0;
      else if (command.startsWith('Query')) counter.items += out.Count ?? 0;
      else if (command.startsWith('BatchGet')) counter.items += Object.values(out.Responses ?? {}).reduce((n, items) => n + items.length, 0);
      else if (command.startsWith('Get') && out.Item !== undefined) counter.items += 1;
      return result;
    },
    { step: 'initialize', name: `countItemsRead${randomBytes(4).toString('hex')}` },
  );
  return counter;
}

/**
 * Physical table names. The deployed stack sets `KEYS_TABLE`, `ACCOUNTS_TABLE`, `LEDGER_TABLE`,
 * `RESPONSES_TABLE` (names in {@link TABLE_ENV}, read through config/env.ts, whose defaults
 * are the names `npm start` creates in DynamoDB Local).
 */
import { config } from '../config/env';

/** Physical names of the four tables. */
export interface TableNames {
  keys: string;
  accounts: string;
  ledger: string;
  /** Stored Responses API responses (responses/response-store.ts). */
  responses: string;
}

/**
 * The table names from the container's config (config/env.ts). A
 * test that points the store at its own tables sets the variables and calls `reloadConfig()`
 * (test/support/tables.ts does).
 */
export function tableNames(): TableNames {
  const c = config();
  return { keys: c.KEYS_TABLE, accounts: c.ACCOUNTS_TABLE, ledger: c.LEDGER_TABLE, responses: c.RESPONSES_TABLE };
}

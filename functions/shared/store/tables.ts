/**
 * Physical table names. The deployed stack sets `KEYS_TABLE`, `ACCOUNTS_TABLE`, `LEDGER_TABLE`,
 * `RESPONSES_TABLE` (names in {@link TABLE_ENV}); locally the defaults below match what `npm start` creates.
 */
import { TABLE_ENV } from './table-schemas';

/** Physical names of the four tables. */
export interface TableNames {
  keys: string;
  accounts: string;
  ledger: string;
  /** Stored Responses API responses (responses/response-store.ts). */
  responses: string;
}

/** Names used when the environment sets none (DynamoDB Local). */
export const LOCAL_TABLE_NAMES: Readonly<TableNames> = {
  keys: 'modelmux-keys',
  accounts: 'modelmux-accounts',
  ledger: 'modelmux-ledger',
  responses: 'modelmux-responses',
};

/**
 * The table names from the environment, read on every call: a `process.env` lookup costs nanoseconds,
 * and reading late lets a test file point the store at its own tables.
 */
export function tableNames(): TableNames {
  return {
    keys: process.env[TABLE_ENV.keys] || LOCAL_TABLE_NAMES.keys,
    accounts: process.env[TABLE_ENV.accounts] || LOCAL_TABLE_NAMES.accounts,
    ledger: process.env[TABLE_ENV.ledger] || LOCAL_TABLE_NAMES.ledger,
    responses: process.env[TABLE_ENV.responses] || LOCAL_TABLE_NAMES.responses,
  };
}

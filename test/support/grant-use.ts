/**
 * What IAM actions code really needs on the tables, recorded at the SDK's middleware stack of every
 * store client (functions/shared/store/dynamo.ts `SDK_CLIENT_HOOK`), for the grant tests
 * (test/lib/gateway-grants.test.ts, test/lib/settle-grants.test.ts) to hold the stack's grants to.
 */
import { randomBytes } from 'node:crypto';
import { SDK_CLIENT_HOOK, setDocumentClient } from '../../functions/shared/store/dynamo';
import { tableNames } from '../../functions/shared/store/tables';

/** IAM action per DynamoDB operation (the SDK's command names). */
export const ACTION_OF_COMMAND: Readonly<Record<string, string>> = {
  GetItemCommand: 'dynamodb:GetItem',
  BatchGetItemCommand: 'dynamodb:BatchGetItem',
  BatchWriteItemCommand: 'dynamodb:BatchWriteItem',
  PutItemCommand: 'dynamodb:PutItem',
  UpdateItemCommand: 'dynamodb:UpdateItem',
  DeleteItemCommand: 'dynamodb:DeleteItem',
  QueryCommand: 'dynamodb:Query',
  ScanCommand: 'dynamodb:Scan',
};

/**
 * IAM action per TransactWriteItems item kind: each item is authorised by its own action (DynamoDB
 * Developer Guide, "Using IAM with DynamoDB transactions"), TransactWriteItems itself by none.
 */
export const ACTION_OF_TRANSACT_ITEM: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

/** The recorder's state: what was used while `recording` was true. */
export interface GrantUse {
  /**
   * `<table> <action>`, or `<table>/<index> <action>` for a call that names an index (a Query or Scan
   * of a GSI, authorised on the index's ARN); tables by logical name (`keys`, `accounts`, …), an
   * unknown one as `unknown-table:<name>`, an unknown command as `unknown:<command>`.
   */
  readonly used: Set<string>;
  /** Whether calls are recorded now (false at first: set-up is not the code under test). */
  recording: boolean;
  /** Stops giving new clients the recorder. */
  uninstall(): void;
}

type Middleware = (next: (args: { input: object }) => Promise<unknown>, context: { commandName?: unknown }) => (args: { input: object }) => Promise<unknown>;

/**
 * Gives every store client made from now on (both paths: its SDK side and its JSON-protocol side) a
 * recorder, and forgets the container's shared client so the next one is made with it. Call before the
 * code under test makes its clients (a client made earlier records nothing).
 */
export function recordGrantUse(): GrantUse {
  const state: GrantUse = {
    used: new Set<string>(),
    recording: false,
    uninstall: () => void delete (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK],
  };
  const record: Middleware = (next, context) => async (args) => {
    if (state.recording) for (const use of usesOf(String(context.commandName), args.input)) state.used.add(use);
    return next(args);
  };
  (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK] = (c: { middlewareStack: { add: (mw: Middleware, o: object) => void } }) =>
    c.middlewareStack.add(record, { step: 'initialize', name: `recordGrantUse${randomBytes(4).toString('hex')}` });
  setDocumentClient(undefined);
  return state;
}

/** The `<table>[/<index>] <action>` uses of one call. */
function usesOf(command: string, input: object): string[] {
  const i = input as {
    TableName?: string;
    IndexName?: string;
    RequestItems?: Record<string, unknown>;
    TransactItems?: Array<Record<string, { TableName?: string }>>;
  };
  if (command === 'TransactWriteItemsCommand')
    return (i.TransactItems ?? []).flatMap((item) =>
      Object.entries(item).map(([kind, op]) => `${logicalName(op.TableName)} ${ACTION_OF_TRANSACT_ITEM[kind] ?? `unknown:${kind}`}`),
    );
  const action = ACTION_OF_COMMAND[command] ?? `unknown:${command}`;
  // Batch operations name their tables as keys; each needs the batch action on each table.
  if (i.RequestItems !== undefined) return Object.keys(i.RequestItems).map((table) => `${logicalName(table)} ${action}`);
  return [`${logicalName(i.TableName)}${i.IndexName === undefined ? '' : `/${i.IndexName}`} ${action}`];
}

/** A physical table name's logical name (`tableNames()`). */
function logicalName(table: string | undefined): string {
  const names = tableNames();
  const found = (Object.keys(names) as Array<keyof typeof names>).find((k) => names[k] === table);
  return found ?? `unknown-table:${table}`;
}

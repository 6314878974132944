/**
 * Counts the DynamoDB calls a process makes, by operation, with an SDK middleware on the document
 * client (the store itself is untouched, like test/support/tables.ts `countStoreCalls`). Installed in
 * the gateway child before any handler runs.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Calls of one DynamoDB operation. */
export interface OperationCounts {
  /** Commands sent (SDK retries of one command count once). */
  calls: number;
  /** Commands that ended in an error, by error name (e.g. TransactionCanceledException). */
  errors: Record<string, number>;
  /** Sum of wall time from send to result, ms (SDK retries included). */
  totalMs: number;
}

/** Everything counted since the last reset. */
export interface StoreCallSnapshot {
  /** Operation name (GetItem, TransactWriteItems, …) → counts. */
  operations: Record<string, OperationCounts>;
  reads: number;
  writes: number;
  /** Commands sent and not yet answered (e.g. ledger writes still running after the response). */
  inFlight: number;
}

/** Read operations of the DynamoDB API; everything else the gateway sends writes. */
const READ_OPERATIONS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems', 'DescribeTable', 'ListTables']);

/** True for operations that only read (GetItem, Query, …). */
export function isReadOperation(operation: string): boolean {
  return READ_OPERATIONS.has(operation);
}

/** `TransactWriteItemsCommand` → `TransactWriteItems`; lib-dynamodb names (`GetCommand`) map to the API's. */
function operationName(commandName: string): string {
  const base = commandName.replace(/Command$/, '');
  const docClientNames: Record<string, string> = {
    Get: 'GetItem',
    Put: 'PutItem',
    Update: 'UpdateItem',
    Delete: 'DeleteItem',
    TransactWrite: 'TransactWriteItems',
    TransactGet: 'TransactGetItems',
    BatchGet: 'BatchGetItem',
    BatchWrite: 'BatchWriteItem',
  };
  return docClientNames[base] ?? base;
}

/** A live counter: read with `snapshot()`, zero with `reset()`. */
export interface StoreCallCounter {
  snapshot(): StoreCallSnapshot;
  reset(): void;
}

/** Adds the counting middleware to `client` (idempotence is the caller's job: install once). */
export function installStoreCallCounter(client: DynamoDBDocumentClient): StoreCallCounter {
  let operations: Record<string, OperationCounts> = {};
  let inFlight = 0;
  const entry = (name: string): OperationCounts => (operations[name] ??= { calls: 0, errors: {}, totalMs: 0 });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const counts = entry(operationName(String(context.commandName ?? 'Unknown')));
      counts.calls++;
      inFlight++;
      const started = performance.now();
      try {
        return await next(args);
      } catch (err) {
        const name = err instanceof Error ? err.name : 'Error';
        counts.errors[name] = (counts.errors[name] ?? 0) + 1;
        throw err;
      } finally {
        counts.totalMs += performance.now() - started;
        inFlight--;
      }
    },
    { step: 'initialize', name: 'benchStoreCallCounter' },
  );
  return {
    snapshot: () => {
      const copy = structuredClone(operations);
      let reads = 0;
      let writes = 0;
      for (const [name, c] of Object.entries(copy)) {
        if (READ_OPERATIONS.has(name)) reads += c.calls;
        else writes += c.calls;
      }
      return { operations: copy, reads, writes, inFlight };
    },
    reset: () => {
      operations = {};
    },
  };
}

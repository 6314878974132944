/**
 * Counts the AWS calls of the gateway process at an SDK middleware, installed through the store's
 * client hook (functions/shared/store/dynamo.ts SDK_CLIENT_HOOK) so it reaches the clients inside the
 * bundles too. DynamoDB calls ask for `ReturnConsumedCapacity: INDEXES`, so the capacity units are the
 * ones DynamoDB (Local) itself charged: item sizes rounded up to 1 KB (writes) / 4 KB (reads), ×2 for
 * transactions, ½ for eventually consistent reads, index writes included.
 */
import { SDK_CLIENT_HOOK } from '../functions/shared/store/dynamo';

/** Calls of one operation since the last take. */
export interface OperationCount {
  calls: number;
  /** Calls that ended in an error (their capacity is unknown: DynamoDB returns none with an error). */
  errors: number;
  /** Wall time from send to answer, SDK retries included, ms. */
  totalMs: number;
  /** Capacity units DynamoDB reported. */
  capacityUnits: number;
}

/** `DynamoDB.TransactWriteItems` → counts. */
export type AwsCalls = Record<string, OperationCount>;

/** lib-dynamodb command names → the API's operation names. */
const DOCUMENT_COMMANDS: Record<string, string> = {
  Get: 'GetItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', TransactWrite: 'TransactWriteItems',
  TransactGet: 'TransactGetItems', BatchGet: 'BatchGetItem', BatchWrite: 'BatchWriteItem',
};

interface MiddlewareStackLike {
  add(middleware: (next: (args: { input: object }) => Promise<{ output: object }>, context: { clientName?: string; commandName?: string }) => (args: { input: object }) => Promise<{ output: object }>, options: object): void;
}

function capacityOf(output: object): number {
  const consumed = (output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed];
  return list.reduce((sum: number, c: { CapacityUnits?: number }) => sum + (c.CapacityUnits ?? 0), 0);
}

/** True for operations billed in read units. */
export function isRead(operation: string): boolean {
  return /\.(GetItem|BatchGetItem|Query|Scan|TransactGetItems)$/.test(operation);
}

/** True for operations billed in write units. */
export function isWrite(operation: string): boolean {
  return /^DynamoDB\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/.test(operation);
}

/**
 * Installs the counter for every client made from now on. `take()` returns the counts since the last
 * take and starts again.
 */
export function countAwsCalls(): { take(): AwsCalls } {
  let counts: AwsCalls = {};
  (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK] = (client: { middlewareStack: MiddlewareStackLike }) => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const service = (context.clientName ?? 'Unknown').replace(/Client$/, '');
        const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const name = `${service}.${DOCUMENT_COMMANDS[command] ?? command}`;
        if (service === 'DynamoDB') (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity ??= 'INDEXES';
        const entry = (counts[name] ??= { calls: 0, errors: 0, totalMs: 0, capacityUnits: 0 });
        entry.calls++;
        const started = performance.now();
        try {
          const result = await next(args);
          entry.capacityUnits += capacityOf(result.output);
          return result;
        } catch (err) {
          entry.errors++;
          throw err;
        } finally {
          entry.totalMs += performance.now() - started;
        }
      },
      { step: 'initialize', name: 'benchAwsCallCounter', priority: 'high' },
    );
  };
  return {
    take: () => {
      const taken = counts;
      counts = {};
      return taken;
    },
  };
}

/**
 * Counts the AWS calls of the gateway process at an SDK middleware, installed through the store's
 * client hook (functions/shared/store/dynamo.ts SDK_CLIENT_HOOK) so it reaches the clients inside the
 * bundles too. DynamoDB calls ask for `ReturnConsumedCapacity: INDEXES`, so the capacity units are the
 * ones DynamoDB (Local) itself charged: item sizes rounded up to 1 KB (writes) / 4 KB (reads), ×2 for
 * transactions, ½ for eventually consistent reads, index writes included.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { SDK_CLIENT_HOOK } from '../functions/shared/store/dynamo';

/**
 * Calls of one operation since the last take: calls, those that failed (no capacity is reported for them),
 * wall time from send to answer (SDK retries included, ms), the capacity units DynamoDB reported, and the
 * same by table (`accounts`, `ledger`, …; an index as `accounts (byEmail)`; the bench's prefixes cut off).
 */
export interface OperationCount {
  calls: number;
  errors: number;
  totalMs: number;
  capacityUnits: number;
  byTable?: Record<string, number>;
}

/** `DynamoDB.TransactWriteItems` → counts. */
export type AwsCalls = Record<string, OperationCount>;

/** lib-dynamodb command names → the API's operation names (`Get` → `GetItem`, `TransactWrite` → `TransactWriteItems`). */
const operation = (command: string): string =>
  /^(Get|Put|Update|Delete)$/.test(command) ? `${command}Item` : /^(Transact|Batch)(Get|Write)$/.test(command) ? `${command}Items` : command;

type Next = (args: { input: object }) => Promise<{ output: object }>;
type MiddlewareStackLike = { add(middleware: (next: Next, context: { clientName?: string; commandName?: string }) => Next, options: object): void };

type Consumed = {
  TableName?: string;
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
};

/** Adds the units of `output` to `entry`, in all and by table and index. */
function addCapacity(entry: OperationCount, output: object): void {
  const consumed = (output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity;
  for (const c of ([] as Consumed[]).concat(consumed ?? [])) {
    entry.capacityUnits += c.CapacityUnits ?? 0;
    const table = (c.TableName ?? '?').replace(/^.*-(?=keys$|accounts$|ledger$|responses$)/, '');
    const by = (entry.byTable ??= {});
    by[table] = (by[table] ?? 0) + (c.Table?.CapacityUnits ?? c.CapacityUnits ?? 0);
    for (const [index, i] of Object.entries(c.GlobalSecondaryIndexes ?? {}))
      by[`${table} (${index})`] = (by[`${table} (${index})`] ?? 0) + (i.CapacityUnits ?? 0);
  }
}

/** An item's size as DynamoDB bills it (Developer Guide, "Item sizes"): names + values; numbers ~ digits/2 + 1; lists and maps 3 B + 1 B per element. */
export function dynamoItemBytes(item: Record<string, unknown>): number {
  const size = (v: Record<string, unknown>): number => {
    const [type, value] = Object.entries(v)[0] ?? ['NULL', true];
    if (type === 'S') return Buffer.byteLength(String(value));
    if (type === 'N') return Math.ceil(String(value).replace(/^-|\./g, '').replace(/^0+/, '').length / 2) + 1;
    if (type === 'BOOL' || type === 'NULL') return 1;
    if (type === 'L') return 3 + (value as Record<string, unknown>[]).reduce((n: number, e) => n + 1 + size(e), 0);
    if (type === 'M')
      return 3 + Object.entries(value as Record<string, Record<string, unknown>>).reduce((n, [k, e]) => n + 1 + Buffer.byteLength(k) + size(e), 0);
    return Buffer.byteLength(JSON.stringify(value));
  };
  return Object.entries(marshall(item, { removeUndefinedValues: true })).reduce(
    (n, [k, v]) => n + Buffer.byteLength(k) + size(v as unknown as Record<string, unknown>),
    0,
  );
}

/** True for operations billed in write units. */
export function isWrite(operation: string): boolean {
  return /^DynamoDB\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/.test(operation);
}

/** Installs the counter for every client made from now on; `take()` returns the counts since the last take. */
export function countAwsCalls(): { take(): AwsCalls } {
  let counts: AwsCalls = {};
  (globalThis as Record<symbol, unknown>)[SDK_CLIENT_HOOK] = (client: { middlewareStack: MiddlewareStackLike }) => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const service = (context.clientName ?? 'Unknown').replace(/Client$/, '');
        const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const name = `${service}.${operation(command)}`;
        if (service === 'DynamoDB') (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity ??= 'INDEXES';
        const entry = (counts[name] ??= { calls: 0, errors: 0, totalMs: 0, capacityUnits: 0 });
        entry.calls++;
        const started = performance.now();
        try {
          const result = await next(args);
          addCapacity(entry, result.output);
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
  return { take: () => [counts, (counts = {})][0] as AwsCalls };
}

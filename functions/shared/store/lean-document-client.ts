/**
 * The store's document client: lib-dynamodb's, except that the single-item and transaction writes of
 * the request path (GetItem, PutItem, UpdateItem, DeleteItem, TransactWriteItems) go over DynamoDB's
 * JSON protocol directly (store/dynamo-json.ts), about half the CPU per call on Node 24
 * (docs/dynamodb-client.md). Callers keep sending lib-dynamodb commands
 * (`send(new UpdateCommand(...))`) and get the same outputs and errors; every other command (Query,
 * Scan, BatchGet, table operations) goes through the SDK as before.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import type { DynamoJsonClient } from './dynamo-json';

type Plain = Record<string, NativeAttributeValue>;
type Marshalled = Record<string, unknown>;

/**
 * lib-dynamodb's marshalling of this client (store/dynamo.ts): optional fields may be `undefined`. A new
 * object for each use: lib-dynamodb writes its own defaults into the options it is given.
 */
const marshallOptions = () => ({ removeUndefinedValues: true });
const LEAN_MARSHALL = { ...marshallOptions(), convertTopLevelContainer: false };
const toWire = (x: unknown): Marshalled | undefined => (x === undefined ? undefined : (binaryOut(marshall(x as Plain, LEAN_MARSHALL)) as Marshalled));
const fromWire = (x: unknown): Plain | undefined => (x === undefined ? undefined : unmarshall(binaryMapIn(x as Record<string, Wire>) as Parameters<typeof unmarshall>[0]));

/**
 * Binary values (`B`, `BS`) travel as base64 strings in DynamoDB's JSON protocol (DynamoDB API Reference,
 * "AttributeValue"), where the SDK's marshalled form holds Uint8Arrays: every Uint8Array of a marshalled
 * value becomes base64 on the way out (only B and BS hold them), and B/BS come back as Uint8Arrays.
 */
function binaryOut(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (Array.isArray(v)) return v.map(binaryOut);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, binaryOut(x)]));
  return v;
}

/** One wire attribute value (the members binaryIn looks into). */
type Wire = { B?: unknown; BS?: unknown; M?: Record<string, Wire>; L?: Wire[] } & Record<string, unknown>;

const bytes = (b64: string): Uint8Array => {
  const buf = Buffer.from(b64, 'base64');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
};

function binaryIn(av: Wire): Wire {
  if (typeof av.B === 'string') return { B: bytes(av.B) };
  if (Array.isArray(av.BS)) return { BS: (av.BS as string[]).map(bytes) };
  if (av.M !== undefined) return { M: binaryMapIn(av.M) };
  if (Array.isArray(av.L)) return { L: av.L.map(binaryIn) };
  return av;
}

function binaryMapIn(m: Record<string, Wire>): Record<string, Wire> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, binaryIn(v)]));
}

/** One item operation's members that carry items: marshalled on the way out. */
function marshalled(op: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...op };
  for (const field of ['Key', 'Item', 'ExpressionAttributeValues'] as const) if (op[field] !== undefined) out[field] = toWire(op[field]);
  return out;
}

/** The JSON-protocol operation and marshalled input of `command`, or undefined when the SDK should send it. */
function route(command: unknown): { operation: string; input: Record<string, unknown> } | undefined {
  const input = (command as { input?: Record<string, unknown> }).input;
  // The legacy parameters (Expected, AttributeUpdates) nest item values differently: the SDK handles them.
  if (input === undefined || 'Expected' in input || 'AttributeUpdates' in input) return undefined;
  if (command instanceof UpdateCommand) return { operation: 'UpdateItem', input: marshalled(input) };
  if (command instanceof GetCommand) return { operation: 'GetItem', input: marshalled(input) };
  if (command instanceof PutCommand) return { operation: 'PutItem', input: marshalled(input) };
  if (command instanceof DeleteCommand) return { operation: 'DeleteItem', input: marshalled(input) };
  if (command instanceof TransactWriteCommand) {
    const items = (input.TransactItems ?? []) as Array<Record<string, Record<string, unknown> | undefined>>;
    const TransactItems = items.map((item) => Object.fromEntries(Object.entries(item).map(([kind, op]) => [kind, op === undefined ? op : marshalled(op)])));
    return { operation: 'TransactWriteItems', input: { ...input, TransactItems } };
  }
  return undefined;
}

/** A middleware as the SDK's `initialize` step sees it (what SDK_CLIENT_HOOK's callers add). */
type Middleware = (next: (args: { input: object }) => Promise<{ output: object }>, context: { clientName: string; commandName: string }) => (args: { input: object }) => Promise<{ output: object }>;

/** The JSON-protocol side of a {@link StoreDocumentClient}, with its instrumentation (store/dynamo.ts SDK_CLIENT_HOOK). */
export class LeanPath {
  private readonly middlewares: Array<{ mw: Middleware; name?: string }> = [];
  /**
   * What SDK_CLIENT_HOOK is given for this path: the part of an SDK client's middleware stack it uses
   * (every middleware runs as an `initialize` step: it sees the command's name and marshalled input).
   */
  readonly middlewareStack = {
    add: (mw: Middleware, opts?: { name?: string }): void => void this.middlewares.push({ mw, name: opts?.name }),
    remove: (name: string): boolean => {
      const at = this.middlewares.findIndex((m) => m.name === name);
      if (at >= 0) this.middlewares.splice(at, 1);
      return at >= 0;
    },
  };

  constructor(private readonly client: DynamoJsonClient) {}

  /** Closes its connections. */
  destroy(): void {
    this.client.destroy();
  }

  /** Sends `command` over the JSON protocol, or returns undefined when it is not one of ours. */
  trySend(command: unknown, abortSignal?: AbortSignal): Promise<unknown> | undefined {
    const routed = route(command);
    if (routed === undefined) return undefined;
    const base = async (args: { input: object }): Promise<{ output: object }> => {
      const { body, $metadata } = await this.client.call(routed.operation, args.input, abortSignal);
      const output: Record<string, unknown> = { ...body, $metadata };
      if (body.Item !== undefined) output.Item = fromWire(body.Item);
      if (body.Attributes !== undefined) output.Attributes = fromWire(body.Attributes);
      return { output };
    };
    const context = { clientName: 'DynamoDBClient', commandName: `${routed.operation}Command` };
    const handler = this.middlewares.reduceRight((next, { mw }) => mw(next, context), base);
    return handler({ input: routed.input }).then((r) => r.output);
  }
}

/**
 * lib-dynamodb's document client with the request path's calls on a {@link LeanPath} (when given), and
 * whose `destroy()` also destroys the client it wraps (lib-dynamodb's own is a no-op: "destroy the
 * client you passed to from()"), so a test or tool that destroys its client closes its connections.
 */
export class StoreDocumentClient extends DynamoDBDocumentClient {
  constructor(private readonly inner: DynamoDBClient, private readonly lean?: LeanPath) {
    super(inner, { marshallOptions: marshallOptions() });
    if (lean === undefined) return;
    // An `initialize` middleware added to this client once it is made (a test's call counter or fault,
    // a tool's instrumentation) sees the calls of both paths, and `remove(name)` takes it off both.
    const stack = this.middlewareStack;
    const add = stack.add.bind(stack);
    const remove = stack.remove.bind(stack);
    stack.add = ((mw: Middleware, opts?: { step?: string; name?: string }) => {
      add(mw as never, opts as never);
      if ((opts?.step ?? 'initialize') === 'initialize') lean.middlewareStack.add(mw, opts);
    }) as unknown as typeof stack.add;
    stack.remove = ((toRemove: unknown) => {
      const removed = remove(toRemove as never);
      return (typeof toRemove === 'string' && lean.middlewareStack.remove(toRemove)) || removed;
    }) as typeof stack.remove;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- lib-dynamodb's overloads, one implementation
  override send(command: any, options?: any, cb?: any): any {
    const leanSend = this.lean !== undefined && cb === undefined && typeof options !== 'function';
    const sent = leanSend ? this.lean?.trySend(command, (options as { abortSignal?: AbortSignal } | undefined)?.abortSignal) : undefined;
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- passed through unchanged
    return sent ?? super.send(command, options, cb);
  }

  override destroy(): void {
    this.inner.destroy();
    this.lean?.destroy();
  }
}

/**
 * The store's DynamoDB commands: lib-dynamodb's inputs and outputs (items as plain JS values), sent by
 * the store client (store/dynamo.ts `documentClient().send(new UpdateCommand({...}))`) over DynamoDB's
 * JSON protocol (aws/aws-json.ts). Same names and shapes as `@aws-sdk/lib-dynamodb`'s commands, whose
 * classes are not imported here: each of them pulls the whole SDK DynamoDB client into a bundle
 * (~185 KB of the chat bundle; docs/dynamodb-client.md). Only their types are used.
 */
import type * as Doc from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';

type Plain = Record<string, NativeAttributeValue>;
type Json = Record<string, unknown>;

/** lib-dynamodb's marshalling of the store: optional fields may be `undefined`. */
const MARSHALL = { removeUndefinedValues: true, convertTopLevelContainer: false } as const;

/**
 * Binary values (`B`, `BS`) travel as base64 strings in DynamoDB's JSON protocol (DynamoDB API Reference,
 * "AttributeValue"), where marshalled values hold Uint8Arrays: every Uint8Array of a marshalled value
 * becomes base64 on the way out (only B and BS hold them), and B/BS come back as Uint8Arrays. Both
 * walks copy only the maps and lists on the way to a binary value and return the rest as given: most
 * items hold none, and copying every map of an account item (its keys and holds) at every call cost
 * more CPU than the call's signing.
 */
function binaryOut(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = binaryOut(v[i]);
      if (x !== v[i]) (out ??= [...v])[i] = x;
    }
    return out ?? v;
  }
  if (v !== null && typeof v === 'object') {
    let out: Json | undefined;
    for (const [k, x] of Object.entries(v)) {
      const y = binaryOut(x);
      if (y !== x) (out ??= { ...v })[k] = y;
    }
    return out ?? v;
  }
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
  if (av.M !== undefined) {
    const M = binaryMapIn(av.M);
    return M === av.M ? av : { M };
  }
  if (Array.isArray(av.L)) {
    let L: Wire[] | undefined;
    for (let i = 0; i < av.L.length; i++) {
      const x = binaryIn(av.L[i] as Wire);
      if (x !== av.L[i]) (L ??= [...av.L])[i] = x;
    }
    return L === undefined ? av : { L };
  }
  return av;
}

function binaryMapIn(m: Record<string, Wire>): Record<string, Wire> {
  let out: Record<string, Wire> | undefined;
  for (const [k, v] of Object.entries(m)) {
    const x = binaryIn(v);
    if (x !== v) (out ??= { ...m })[k] = x;
  }
  return out ?? m;
}

/** A plain item (or key, or value map) → the wire's attribute-value map. */
const toWire = (x: unknown): Json | undefined => (x === undefined ? undefined : (binaryOut(marshall(x as Plain, MARSHALL)) as Json));
/** The wire's attribute-value map → a plain item. */
const fromWire = (x: unknown): Plain | undefined =>
  x === undefined ? undefined : unmarshall(binaryMapIn(x as Record<string, Wire>) as Parameters<typeof unmarshall>[0]);

/** One operation's members that carry items or keys, marshalled on the way out. */
function itemsOut(op: Json): Json {
  const out: Json = { ...op };
  for (const field of ['Key', 'Item', 'ExpressionAttributeValues', 'ExclusiveStartKey'] as const) if (op[field] !== undefined) out[field] = toWire(op[field]);
  return out;
}

/** The members of an answer that carry items, unmarshalled (lib-dynamodb's output shapes). */
function itemsIn(body: Json): Json {
  const out: Json = { ...body };
  for (const field of ['Item', 'Attributes', 'LastEvaluatedKey'] as const) if (body[field] !== undefined) out[field] = fromWire(body[field]);
  if (Array.isArray(body.Items)) out.Items = body.Items.map(fromWire);
  return out;
}

/**
 * A command of the store: the DynamoDB operation it calls, its lib-dynamodb-shaped input, and how both
 * cross the wire. `Output` is the answer's type (phantom: never set).
 */
export abstract class StoreCommand<Input extends object, Output extends object> {
  /** DynamoDB's operation name (`X-Amz-Target`), e.g. `UpdateItem`. */
  abstract readonly operation: string;
  /** lib-dynamodb's name for this command (the SDK path of store/sdk-document-client.ts sends that class). */
  abstract readonly sdkName: string;
  declare readonly __output?: Output;
  constructor(readonly input: Input) {}
  /** The low-level (marshalled) input. */
  wireInput(): Json {
    return itemsOut(this.input as Json);
  }
  /** The output of the low-level answer's body. */
  output(body: Json): Output {
    return itemsIn(body) as Output;
  }
}

/** GetItem (DynamoDB API Reference). */
export class GetCommand extends StoreCommand<Doc.GetCommandInput, Doc.GetCommandOutput> {
  readonly operation = 'GetItem';
  readonly sdkName = 'GetCommand';
}
/** PutItem. */
export class PutCommand extends StoreCommand<Doc.PutCommandInput, Doc.PutCommandOutput> {
  readonly operation = 'PutItem';
  readonly sdkName = 'PutCommand';
}
/** UpdateItem. */
export class UpdateCommand extends StoreCommand<Doc.UpdateCommandInput, Doc.UpdateCommandOutput> {
  readonly operation = 'UpdateItem';
  readonly sdkName = 'UpdateCommand';
}
/** DeleteItem. */
export class DeleteCommand extends StoreCommand<Doc.DeleteCommandInput, Doc.DeleteCommandOutput> {
  readonly operation = 'DeleteItem';
  readonly sdkName = 'DeleteCommand';
}
/** Query (one page; the caller follows `LastEvaluatedKey`). */
export class QueryCommand extends StoreCommand<Doc.QueryCommandInput, Doc.QueryCommandOutput> {
  readonly operation = 'Query';
  readonly sdkName = 'QueryCommand';
}
/** Scan (one page). */
export class ScanCommand extends StoreCommand<Doc.ScanCommandInput, Doc.ScanCommandOutput> {
  readonly operation = 'Scan';
  readonly sdkName = 'ScanCommand';
}

/** BatchGetItem: keys out per table, items (and unprocessed keys) back per table. */
export class BatchGetCommand extends StoreCommand<Doc.BatchGetCommandInput, Doc.BatchGetCommandOutput> {
  readonly operation = 'BatchGetItem';
  readonly sdkName = 'BatchGetCommand';
  override wireInput(): Json {
    const tables = Object.entries((this.input.RequestItems ?? {}) as Record<string, Json & { Keys?: unknown[] }>);
    return { ...this.input, RequestItems: Object.fromEntries(tables.map(([table, req]) => [table, { ...req, Keys: (req.Keys ?? []).map(toWire) }])) };
  }
  override output(body: Json): Doc.BatchGetCommandOutput {
    const out: Json = { ...body };
    if (body.Responses !== undefined)
      out.Responses = Object.fromEntries(Object.entries(body.Responses as Record<string, unknown[]>).map(([table, items]) => [table, items.map(fromWire)]));
    if (body.UnprocessedKeys !== undefined) {
      const unprocessed = Object.entries(body.UnprocessedKeys as Record<string, Json & { Keys?: unknown[] }>);
      out.UnprocessedKeys = Object.fromEntries(unprocessed.map(([table, req]) => [table, { ...req, Keys: (req.Keys ?? []).map(fromWire) }]));
    }
    return out as Doc.BatchGetCommandOutput;
  }
}

/** TransactWriteItems: each item's operation marshalled; cancellation reasons come back marshalled (as the SDK leaves them). */
export class TransactWriteCommand extends StoreCommand<Doc.TransactWriteCommandInput, Doc.TransactWriteCommandOutput> {
  readonly operation = 'TransactWriteItems';
  readonly sdkName = 'TransactWriteCommand';
  override wireInput(): Json {
    const items = (this.input.TransactItems ?? []) as Array<Record<string, Json | undefined>>;
    return {
      ...this.input,
      TransactItems: items.map((item) => Object.fromEntries(Object.entries(item).map(([kind, op]) => [kind, op === undefined ? op : itemsOut(op)]))),
    };
  }
}

import { BatchGetCommand, DeleteCommand, PutCommand } from '../store/dynamo-commands';
import { documentClient } from '../store/dynamo';
import { toStoreError } from '../store/store-errors';
import { retrying, TryAgain, type RetryPolicy } from '../retry/retry';
import { tableNames } from '../store/tables';
import type { InputItem } from './request';
import type { ResponseObject } from './response-object';
import { CHUNK_BYTES, INLINE_BYTES, MAX_STORED_BYTES, compressJson, decompressJson, forStorage, joinBytes, splitBytes } from './stored-codec';

/**
 * Stored Responses API responses (`store: true`, OpenAI's default), in the responses table
 * (store/table-schemas.ts): pk `accountId`, sk `responseId`. Every read and write names the caller's
 * account in the key, so one account can never read, reference or delete another's responses.
 *
 * One item per response — the head — holding, brotli-compressed (stored-codec.ts):
 *
 * | attribute | meaning |
 * |---|---|
 * | `out` | the response object (`output` items included, log probabilities left out) |
 * | `in` | its input items as received and validated (`item_reference` items kept as references; a `previous_response_id` turn's history prepended) — when response and input together compress to ≤ 64 KiB |
 * | `outParts`, `inParts` | otherwise: how many part items (`<responseId>#o1…`, `#i1…`) hold the rest of `out` and all of `in`, 350,000 bytes each |
 * | `inputOmitted` | true when the two together would pass 8 MiB compressed: the response is kept (its output can be referenced and retrieved) but not its input (so it cannot be continued with `previous_response_id`) |
 * | `createdAt`, `model`, `status`, `bytes` | Unix seconds, the model asked for, the response's status, compressed size |
 * | `expiresAt` | DynamoDB TTL: Unix seconds, creation + RESPONSE_RETENTION_DAYS |
 *
 * Nothing here is logged: the content is the customer's. The table is encrypted at rest (DynamoDB's
 * default SSE, AWS-managed key) and has no point-in-time recovery, so DELETE and the TTL really end it.
 */

/** A read would pass its byte budget (see {@link getStoredResponses}). */
export class StoredReadTooLargeError extends Error {
  constructor(readonly budgetBytes: number) {
    super(`stored responses over ${budgetBytes} bytes`);
    this.name = 'StoredReadTooLargeError';
  }
}

/** What {@link putStoredResponse} kept. */
export type StoreOutcome = 'stored' | 'input-omitted' | 'too-large';

/** A stored response as read back. */
export interface StoredResponse {
  response: ResponseObject;
  /** Its input items as received; undefined when not read (`want: 'response'`) or omitted at store time. */
  input: InputItem[] | undefined;
  /** True when the input was too large to keep. */
  inputOmitted: boolean;
}

interface HeadItem {
  accountId: string;
  responseId: string;
  createdAt: number;
  expiresAt: number;
  model: string;
  status: string;
  bytes: number;
  out: Uint8Array;
  in?: Uint8Array;
  outParts?: number;
  inParts?: number;
  inputOmitted?: boolean;
}

/**
 * Stores a finished response and the input it answered, for `retentionDays`.
 * Parts are written before the head, so a head that is readable always has its parts.
 * @returns what was kept: all, the response without its input (over {@link MAX_STORED_BYTES}), or
 *   nothing when the response object alone is over it.
 * @throws the SDK's error (a 503 GatewayError for an outage) when DynamoDB refuses.
 */
export async function putStoredResponse(
  accountId: string,
  response: ResponseObject,
  input: readonly InputItem[],
  retentionDays: number,
  nowMs = Date.now(),
): Promise<StoreOutcome> {
  const out = await compressJson(forStorage(response));
  if (out.length > MAX_STORED_BYTES) return 'too-large';
  let inBytes: Uint8Array | undefined = await compressJson(input);
  if (out.length + inBytes.length > MAX_STORED_BYTES) inBytes = undefined;
  const createdAt = Math.floor(nowMs / 1000);
  const expiresAt = createdAt + retentionDays * 86_400;
  const head: HeadItem = {
    accountId,
    responseId: response.id,
    createdAt,
    expiresAt,
    model: response.model,
    status: response.status,
    bytes: out.length + (inBytes?.length ?? 0),
    out,
  };
  const parts: Array<{ suffix: string; data: Uint8Array }> = [];
  if (inBytes === undefined) head.inputOmitted = true;
  if (out.length + (inBytes?.length ?? 0) <= INLINE_BYTES) {
    if (inBytes !== undefined) head.in = inBytes;
  } else {
    const outChunks = splitBytes(out, CHUNK_BYTES);
    head.out = outChunks[0] as Uint8Array;
    outChunks.slice(1).forEach((data, i) => parts.push({ suffix: `#o${i + 1}`, data }));
    if (outChunks.length > 1) head.outParts = outChunks.length - 1;
    if (inBytes !== undefined) {
      const inChunks = splitBytes(inBytes, CHUNK_BYTES);
      inChunks.forEach((data, i) => parts.push({ suffix: `#i${i + 1}`, data }));
      head.inParts = inChunks.length;
    }
  }
  const table = tableNames().responses;
  try {
    await Promise.all(
      parts.map((p) =>
        documentClient().send(new PutCommand({ TableName: table, Item: { accountId, responseId: `${response.id}${p.suffix}`, expiresAt, data: p.data } })),
      ),
    );
    await documentClient().send(new PutCommand({ TableName: table, Item: head }));
  } catch (err) {
    throw toStoreError(err);
  }
  return inBytes === undefined ? 'input-omitted' : 'stored';
}

/**
 * Reads stored responses of one account by id (strongly consistent: a response stored by another
 * container a moment ago is found). Unknown, expired and other accounts' ids are simply absent.
 * @param want `'response'` reads what an `item_reference` or GET needs; `'all'` adds the input.
 * @param budgetBytes most bytes to read (and hold); a batch is read only while the total is under it.
 * @throws StoredReadTooLargeError past `budgetBytes`; a 503 GatewayError when DynamoDB cannot be reached.
 */
export async function getStoredResponses(
  accountId: string,
  ids: readonly string[],
  want: 'response' | 'all',
  nowMs = Date.now(),
  budgetBytes = Number.POSITIVE_INFINITY,
): Promise<Map<string, StoredResponse>> {
  const unique = [...new Set(ids)];
  const budget = { left: budgetBytes, total: budgetBytes };
  const heads = (await batchGet(accountId, unique, budget)) as unknown as HeadItem[];
  const live = heads.filter((h) => h.expiresAt > Math.floor(nowMs / 1000) && h.out !== undefined);
  const partKeys = live.flatMap((h) => [
    ...range(h.outParts).map((n) => `${h.responseId}#o${n}`),
    ...(want === 'all' && h.in === undefined ? range(h.inParts).map((n) => `${h.responseId}#i${n}`) : []),
  ]);
  const parts = new Map((await batchGet(accountId, partKeys, budget)).map((p) => [p.responseId as string, p['data'] as Uint8Array]));
  const found = new Map<string, StoredResponse>();
  for (const h of live) {
    const outParts = range(h.outParts).map((n) => parts.get(`${h.responseId}#o${n}`));
    const inParts = h.in !== undefined ? [h.in] : range(h.inParts).map((n) => parts.get(`${h.responseId}#i${n}`));
    // A part missing behind a live head: deleted a moment ago (DELETE removes the head first).
    if (outParts.some((p) => p === undefined) || (want === 'all' && inParts.some((p) => p === undefined))) continue;
    const response = await decompressJson<ResponseObject>(joinBytes([h.out, ...(outParts as Uint8Array[])]));
    const input = want === 'all' && h.inputOmitted !== true ? await decompressJson<InputItem[]>(joinBytes(inParts as Uint8Array[])) : undefined;
    found.set(h.responseId, { response, input, inputOmitted: h.inputOmitted === true });
  }
  return found;
}

/**
 * Deletes a stored response of this account (the head first, so it is gone at once; then its parts).
 * @returns false when there was none (unknown, expired, or another account's).
 * @throws a 503 GatewayError when DynamoDB cannot be reached.
 */
export async function deleteStoredResponse(accountId: string, responseId: string, nowMs = Date.now()): Promise<boolean> {
  const table = tableNames().responses;
  try {
    const old = (await documentClient().send(new DeleteCommand({ TableName: table, Key: { accountId, responseId }, ReturnValues: 'ALL_OLD' }))).Attributes as
      HeadItem | undefined;
    if (old === undefined) return false;
    const parts = [...range(old.outParts).map((n) => `#o${n}`), ...range(old.inParts).map((n) => `#i${n}`)];
    await Promise.all(parts.map((s) => documentClient().send(new DeleteCommand({ TableName: table, Key: { accountId, responseId: `${responseId}${s}` } }))));
    return old.expiresAt > Math.floor(nowMs / 1000);
  } catch (err) {
    throw toStoreError(err);
  }
}

/** 1…n (none for 0 or absent). */
function range(n: number | undefined): number[] {
  return Array.from({ length: n ?? 0 }, (_, i) => i + 1);
}

/** BatchGetItem's own limits: 100 keys per call; unprocessed keys (throttling, 16 MB per answer) are asked again. */
const BATCH_KEYS = 100;
const UNPROCESSED_RETRIES = 5;

/** Unprocessed keys asked for again after 50 ms, 100 ms, … ({@link UNPROCESSED_RETRIES} times); any other failure is thrown. */
const UNPROCESSED_KEYS_POLICY: RetryPolicy = {
  maxAttempts: 1 + UNPROCESSED_RETRIES,
  delayMs: (err, retry) => (err instanceof TryAgain ? 25 * 2 ** (retry + 1) : undefined),
};

/**
 * Items of this account with these sort keys, strongly consistent, in any order (absent ones left out).
 * Each batch's binary attributes are counted against `budget`; none is asked for once it is spent.
 */
async function batchGet(accountId: string, responseIds: readonly string[], budget: { left: number; total: number }): Promise<Array<Record<string, unknown>>> {
  const table = tableNames().responses;
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < responseIds.length; i += BATCH_KEYS) {
    if (budget.left < 0) throw new StoredReadTooLargeError(budget.total);
    let keys: Array<Record<string, unknown>> = responseIds.slice(i, i + BATCH_KEYS).map((responseId) => ({ accountId, responseId }));
    try {
      await retrying(async () => {
        let answer;
        try {
          answer = await documentClient().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }));
        } catch (err) {
          throw toStoreError(err);
        }
        const items = answer.Responses?.[table] ?? [];
        for (const item of items) budget.left -= binaryBytes(item);
        out.push(...items);
        keys = answer.UnprocessedKeys?.[table]?.Keys ?? [];
        if (keys.length > 0) throw new TryAgain('unprocessed keys');
      }, UNPROCESSED_KEYS_POLICY);
    } catch (err) {
      if (!(err instanceof TryAgain)) throw err;
      throw toStoreError(Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ProvisionedThroughputExceededException' }));
    }
  }
  if (budget.left < 0) throw new StoredReadTooLargeError(budget.total);
  return out;
}

/** Bytes of an item's binary attributes (its stored content). */
function binaryBytes(item: Record<string, unknown>): number {
  let n = 0;
  for (const v of Object.values(item)) if (v instanceof Uint8Array) n += v.length;
  return n;
}

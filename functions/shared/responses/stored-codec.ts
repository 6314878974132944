import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import type { ResponseObject } from './response-object';

/**
 * How a stored response's JSON becomes DynamoDB bytes, and back. Text compresses 3–10× with brotli, so
 * the item (billed per 1 KB written, per 4 KB read) is that much smaller; compression runs on libuv's
 * thread pool (`zlib` async API), off the event loop that streams other answers. Quality 5: within a
 * few percent of the best ratio at a fraction of the time of 11 (measured: ~240 KB of JSON in a few ms).
 */

const compressAsync = promisify(brotliCompress);
const decompressAsync = promisify(brotliDecompress);

/** Brotli quality (0–11) of stored responses. */
const QUALITY = 5;

/**
 * Largest compressed piece one DynamoDB item carries (bytes). DynamoDB's item limit is 400 KB, attribute
 * names and the other attributes included (DynamoDB Developer Guide, "Service, account, and table
 * quotas": 409,600 bytes); 350,000 leaves room for them.
 */
export const CHUNK_BYTES = 350_000;

/**
 * Up to this many compressed bytes (response and input together), the response is one item; above,
 * its input goes to part items, so a read that needs only the output (an `item_reference`) stays
 * small: a read costs one unit per 4 KB of the whole item, read whole.
 */
export const INLINE_BYTES = 64 * 1024;

/**
 * Most compressed bytes one stored response may take (response and input): 8 MiB, 24 items. More
 * than one request can carry (6 MB), but a `previous_response_id` chain re-stores its history at
 * every turn; the bound keeps one write (8,192 write units) and one continuation's read (and
 * memory) finite. A response over it is stored without its input (see response-store.ts).
 */
export const MAX_STORED_BYTES = 8 * 1024 * 1024;

/** JSON → brotli bytes. */
export async function compressJson(value: unknown): Promise<Uint8Array> {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  const out = await compressAsync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: json.length } });
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Brotli bytes → the JSON value they hold. */
export async function decompressJson<T>(bytes: Uint8Array): Promise<T> {
  return JSON.parse((await decompressAsync(bytes)).toString('utf8')) as T;
}

/** `bytes` cut into pieces of at most `size` (one empty piece for empty input). */
export function splitBytes(bytes: Uint8Array, size: number = CHUNK_BYTES): Uint8Array[] {
  if (bytes.length === 0) return [bytes];
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** The pieces of {@link splitBytes}, joined back. */
export function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  return parts.length === 1 && parts[0] !== undefined ? parts[0] : new Uint8Array(Buffer.concat(parts));
}

/**
 * The response as stored: without the output's log probabilities (each token again, with its bytes
 * and alternatives: often larger than the text itself). They were the client's when the answer was
 * sent; a stored response serves continuation and retrieval, which need the text.
 */
export function forStorage(response: ResponseObject): ResponseObject {
  if (!response.output.some((i) => i.type === 'message' && i.content.some((c) => c.type === 'output_text' && c.logprobs.length > 0))) return response;
  return {
    ...response,
    output: response.output.map((i) =>
      i.type === 'message' ? { ...i, content: i.content.map((c) => (c.type === 'output_text' ? { ...c, logprobs: [] } : c)) } : i,
    ),
  };
}

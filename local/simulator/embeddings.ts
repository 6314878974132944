/**
 * Deterministic embeddings: each input string maps to a unit vector derived from the SHA-256 of its
 * text, so equal texts give equal vectors in every run and on every provider.
 */
import { createHash } from 'node:crypto';

/** Vector length for a model the table below does not know, when the request names none. */
export const DEFAULT_DIMENSIONS = 8;

/**
 * Each embedding model's own vector length when the request names no `dimensions` /
 * `outputDimensionality` (OpenAI's embeddings guide; Google's gemini-embedding-001 page: 3072 by
 * default; text-embedding-004: 768), so a client sees vectors of the real size and the gateway's
 * 6 MB answer bound is exercised at real sizes.
 */
const NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'gemini-embedding-001': 3072,
  'text-embedding-004': 768,
  'BAAI/bge-base-en-v1.5': 768,
  'BAAI/bge-large-en-v1.5': 1024,
};

/** The vector length `model` answers with by default ({@link DEFAULT_DIMENSIONS} if unknown). */
export function nativeDimensions(model: string | undefined): number {
  return (model === undefined ? undefined : NATIVE_DIMENSIONS[model.replace(/^models\//, '')]) ?? DEFAULT_DIMENSIONS;
}

/** Unit-length vector (L2 norm 1) of `dimensions` components for `text`. */
export function embed(text: string, dimensions: number = DEFAULT_DIMENSIONS): number[] {
  const dims = Math.max(1, Math.min(4096, Math.floor(dimensions)));
  const values: number[] = [];
  let block = 0;
  while (values.length < dims) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 4 <= digest.length && values.length < dims; i += 4) {
      values.push(digest.readUInt32LE(i) / 0xffffffff - 0.5);
    }
    block++;
  }
  const norm = Math.hypot(...values) || 1;
  // Round-trip through float32 so the float and base64 encodings carry the same numbers.
  return values.map((v) => Math.fround(v / norm));
}

/** OpenAI `encoding_format: "base64"`: little-endian float32 bytes, base64 (providers.md §1.7). */
export function toBase64(vector: readonly number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

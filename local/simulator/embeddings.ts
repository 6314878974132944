/**
 * Deterministic embeddings: each input string maps to a unit vector derived from the SHA-256 of its
 * text, so equal texts give equal vectors in every run and on every provider.
 */
import { createHash } from 'node:crypto';

/** Default vector length when the request names none. */
export const DEFAULT_DIMENSIONS = 8;

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

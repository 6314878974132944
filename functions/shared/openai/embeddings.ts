import * as z from '../validation/zod';

/**
 * The client's embeddings request and our response (source: openai-node `EmbeddingCreateParams`,
 * `CreateEmbeddingResponse`; providers.md §1.7). Token-array input (`number[]`, `number[][]`) is
 * OpenAI-only and is rejected here: modelmux routes to several embedding providers, which take text.
 */

/** OpenAI's limit on inputs per request (providers.md §1.7). */
export const MAX_EMBEDDING_INPUTS = 2048;

export const embeddingsRequest = z.strictObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([z.string(), z.array(z.string()).check(z.minLength(1), z.maxLength(MAX_EMBEDDING_INPUTS))]),
  encoding_format: z.optional(z.enum(['float', 'base64'])),
  dimensions: z.optional(z.number().check(z.int(), z.positive())),
  user: z.optional(z.string()),
});
export type EmbeddingsRequest = z.infer<typeof embeddingsRequest>;

/** One vector; `embedding` is a base64 string of little-endian float32 when requested so. */
export interface EmbeddingItem {
  object: 'embedding';
  index: number;
  embedding: number[] | string;
}

/** The `/v1/embeddings` response body. */
export interface EmbeddingsResponse {
  object: 'list';
  data: EmbeddingItem[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Provider-neutral embedding result (vectors as floats; usage undefined when the upstream gave none). */
export interface EmbeddingParts {
  vectors: number[][];
  promptTokens: number | undefined;
}

/** Encodes a float vector as OpenAI does for `encoding_format: "base64"`: little-endian float32 bytes. */
export function toBase64Float32(vector: readonly number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

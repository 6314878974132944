import type { CatalogueEntry } from '../catalogue/catalogue';
import type { EmbeddingsRequest } from '../openai/embeddings';
import { InvalidRequestError } from '../errors/gateway-errors';

/**
 * A model's limits: its output cap (an output budget above it is lowered to it, with a header:
 * app/request-adjust.ts), and what OpenAI itself refuses, refused here the same way before any hold
 * or upstream call (providers.md §1.5: OpenAI's 400 for an out-of-range value).
 */

/** The most output tokens `entry` can give one choice: the largest of its targets' limits (tokens). */
export function outputLimitOf(entry: CatalogueEntry): number {
  return Math.max(...entry.targets.map((t) => t.maxOutputTokens));
}

/**
 * @throws InvalidRequestError (400, code `unsupported_parameter`, param `dimensions`) for `dimensions`
 *   on a model with one vector length (OpenAI: "This model does not support specifying dimensions."
 *   for text-embedding-ada-002), and (code `invalid_value`) for more dimensions than the model has.
 */
export function assertDimensions(body: EmbeddingsRequest, entry: CatalogueEntry, modelDimensions: number): void {
  if (body.dimensions === undefined) return;
  if (entry.targets.some((t) => t.fixedDimensions)) {
    throw new InvalidRequestError(`This model does not support specifying dimensions: ${entry.id} always returns ${modelDimensions}-dimensional vectors.`, {
      param: 'dimensions',
      code: 'unsupported_parameter',
    });
  }
  if (body.dimensions > modelDimensions) {
    throw new InvalidRequestError(`dimensions must be at most ${modelDimensions} for ${body.model}; got ${body.dimensions}.`, {
      param: 'dimensions',
      code: 'invalid_value',
    });
  }
}

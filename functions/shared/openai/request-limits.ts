import type { CatalogueEntry } from '../catalogue/catalogue';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { EmbeddingsRequest } from '../openai/embeddings';
import { InvalidRequestError } from '../errors/gateway-errors';

/**
 * What OpenAI itself refuses about a model's limits, refused here the same way before any hold or
 * upstream call (providers.md §1.5: OpenAI's 400 for an out-of-range value), instead of clamping
 * silently or failing upstream.
 */

/** The most output tokens `entry` can give one choice: the largest of its targets' limits (tokens). */
export function outputLimitOf(entry: CatalogueEntry): number {
  return Math.max(...entry.targets.map((t) => t.maxOutputTokens));
}

/**
 * @throws InvalidRequestError (400, code `invalid_value`, param `max_completion_tokens` or
 *   `max_tokens`) when the request asks for more output than the model can give, in OpenAI's words:
 *   "max_tokens is too large: 1000000. This model supports at most 16384 completion tokens, whereas
 *   you provided 1000000."
 */
export function assertWithinOutputLimit(body: ChatCompletionRequest, entry: CatalogueEntry): void {
  const param = body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const asked = body.max_completion_tokens ?? body.max_tokens;
  const limit = outputLimitOf(entry);
  if (asked == null || asked <= limit) return;
  throw new InvalidRequestError(`${param} is too large: ${asked}. This model supports at most ${limit} completion tokens, whereas you provided ${asked}.`, {
    param,
    code: 'invalid_value',
  });
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

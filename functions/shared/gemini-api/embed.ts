import { InvalidRequestError } from '../errors/gateway-errors';
import { MAX_EMBEDDING_INPUTS, type EmbeddingsRequest } from '../openai/embeddings';
import * as z from '../validation/zod';

/**
 * The Gemini API's embeddings methods (Google's reference, https://ai.google.dev/api/embeddings):
 * `POST …/models/{model}:embedContent` with an `EmbedContentRequest` `{model?, content:{parts:[{text}]},
 * taskType?, title?, outputDimensionality?}` → `{embedding:{values:[…]}}`, and
 * `POST …/models/{model}:batchEmbedContents` with `{requests:[EmbedContentRequest…]}` →
 * `{embeddings:[{values:[…]}…]}` in request order (the `@google/genai` SDK's `models.embedContent`
 * sends this one). Both become one request of the gateway's embeddings core: each content's text
 * parts joined by a newline is one input; `outputDimensionality` is `dimensions`. `taskType` and
 * `title` are accepted and not sent (the core's upstreams take no task type).
 */

/** `…/models/{model}:embedContent | :batchEmbedContents`, with or without `/v1beta` or `/v1`. */
export const GEMINI_EMBED_PATH = /^(?:\/v1beta|\/v1)?\/models\/([^/:]+):(embedContent|batchEmbedContents)$/;

const o = z.optional;

/** One `EmbedContentRequest`; only text parts can be embedded here. */
const embedContentRequest = z.looseObject({
  model: o(z.string()),
  content: z.looseObject({ role: o(z.string()), parts: z.array(z.looseObject({ text: o(z.string()) })).check(z.minLength(1)) }),
  taskType: o(z.string()),
  title: o(z.string()),
  outputDimensionality: o(z.number().check(z.int(), z.positive())),
});
type EmbedContentRequest = z.infer<typeof embedContentRequest>;

/** The body of `:embedContent`. */
export const embedContentBody = embedContentRequest;

/** The body of `:batchEmbedContents`. */
export const batchEmbedContentsBody = z.looseObject({ requests: z.array(embedContentRequest).check(z.minLength(1)) });

/**
 * The embeddings core's request for these Gemini requests to `model` (the route's, without `models/`).
 * @throws InvalidRequestError (400, INVALID_ARGUMENT) when a part is not text, a request names
 *   another model, the requests ask for different `outputDimensionality`, or there are more than
 *   the core's {@link MAX_EMBEDDING_INPUTS} inputs.
 */
export function toEmbeddingsRequest(model: string, requests: readonly EmbedContentRequest[]): { body: EmbeddingsRequest; inputs: string[] } {
  if (requests.length > MAX_EMBEDDING_INPUTS) throw new InvalidRequestError(`requests: at most ${MAX_EMBEDDING_INPUTS} per batch`, { param: 'requests' });
  const inputs = requests.map((r, i) => {
    if (r.model !== undefined && r.model.replace(/^models\//, '') !== model)
      throw new InvalidRequestError(`requests[${i}].model: ${r.model} is not the model of the URL, models/${model}`, { param: 'model' });
    return r.content.parts
      .map((p, j) => {
        if (p.text === undefined) throw new InvalidRequestError(`requests[${i}].content.parts[${j}]: only text parts can be embedded`, { param: 'content' });
        return p.text;
      })
      .join('\n');
  });
  const dims = new Set(requests.map((r) => r.outputDimensionality));
  if (dims.size > 1) throw new InvalidRequestError('outputDimensionality: every request of a batch must ask for the same', { param: 'outputDimensionality' });
  const dimensions = requests[0]?.outputDimensionality;
  return { body: { model, input: inputs, ...(dimensions === undefined ? {} : { dimensions }) }, inputs };
}

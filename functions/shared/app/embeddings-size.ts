/**
 * Will an embeddings answer fit a buffered Lambda response? The embeddings function answers through a
 * BUFFERED Function URL, whose response is at most 6 MB (Lambda quotas: 6,291,456 bytes; past it the
 * client would get Lambda's own `502 {"Message":…}`). The size is known before the call: inputs ×
 * dimensions × the bytes of one number — at most 26 as JSON text (`-0.0000012345678901234567,`: a
 * double's 17 significant digits, sign, point, leading zeros and comma), 16/3 as base64 float32
 * (`encoding_format: "base64"`) — plus each item's envelope. A request that cannot fit is refused
 * before any upstream call (and so before any charge), saying how many inputs fit.
 */
import { InvalidRequestError } from '../errors/gateway-errors';

/**
 * Lambda's buffered response limit (bytes), less room for headers and the invocation's JSON wrapper:
 * the most an answer of the buffered function may be (embeddings here, images in images-size.ts).
 */
export const MAX_BUFFERED_ANSWER_BYTES = 6_291_456 - 32_768;

const FLOAT_JSON_BYTES = 26;
const ITEM_ENVELOPE_BYTES = 64;
const LIST_ENVELOPE_BYTES = 512;

/** Bytes of one vector's item, at most. */
function itemBytes(dimensions: number, encoding: 'float' | 'base64'): number {
  const vector = encoding === 'base64' ? 4 * Math.ceil((dimensions * 4) / 3) + 2 : dimensions * FLOAT_JSON_BYTES;
  return vector + ITEM_ENVELOPE_BYTES;
}

/** How many vectors of `dimensions` fit one answer in this encoding. */
export function inputsThatFit(dimensions: number, encoding: 'float' | 'base64'): number {
  return Math.max(0, Math.floor((MAX_BUFFERED_ANSWER_BYTES - LIST_ENVELOPE_BYTES) / itemBytes(dimensions, encoding)));
}

/**
 * @throws InvalidRequestError (400, code `response_too_large`, param `input`) when `inputs` vectors of
 *   `dimensions` cannot fit, naming how many fit and what base64 allows.
 */
export function assertEmbeddingsAnswerFits(inputs: number, dimensions: number, encoding: 'float' | 'base64'): void {
  const fit = inputsThatFit(dimensions, encoding);
  if (inputs <= fit) return;
  const mb = ((inputs * itemBytes(dimensions, encoding)) / 1_048_576).toFixed(1);
  const base64 = inputsThatFit(dimensions, 'base64');
  const hint = encoding === 'float' ? ` With \`encoding_format: "base64"\` up to ${base64} inputs fit.` : '';
  throw new InvalidRequestError(
    `The answer to ${inputs} inputs of ${dimensions} dimensions could be up to ${mb} MB, over the 6 MB limit of a response: at most ${fit} inputs fit as ${encoding === 'float' ? 'JSON floats' : 'base64'}; send fewer per request.${hint}`,
    { param: 'input', code: 'response_too_large' },
  );
}

/**
 * Will an image answer fit a buffered Lambda response (6 MB, embeddings-size.ts)? Images come back as
 * base64 (`b64_json`, 4/3 of the bytes), so the bound is known before the call from each image's pixels
 * and encoding:
 * - PNG: at most 2.5 bytes per pixel. PNG is lossless; a photographic RGB image compresses to well under
 *   its raw 3 bytes per pixel, and a generated image (smooth gradients) further still;
 * - JPEG / WebP: at most `output_compression`% of 1 byte per pixel (OpenAI's default 100 → 1 byte per
 *   pixel, a photo at top JPEG quality), never under 0.25.
 * A request whose `n` images cannot fit is refused before any upstream call (so before any charge),
 * naming how many fit and what a lossy format allows. An upstream image past the bound is still sent
 * when it fits; one past the 6 MB is the buffered handler's 500 (functions/embeddings/handler.ts).
 */
import { InvalidRequestError } from '../errors/gateway-errors';
import type { ImageFormat } from '../openai/images';
import { MAX_BUFFERED_ANSWER_BYTES } from './embeddings-size';

const PNG_BYTES_PER_PIXEL = 2.5;
const LOSSY_MIN_BYTES_PER_PIXEL = 0.25;
const IMAGE_ENVELOPE_BYTES = 1_024;
const LIST_ENVELOPE_BYTES = 1_024;

/** The bytes of one image's `b64_json` item, at most: base64 of its bound plus the item's JSON. */
export function imageItemBytes(pixels: number, format: ImageFormat, compression: number): number {
  const perPixel = format === 'png' ? PNG_BYTES_PER_PIXEL : Math.max(LOSSY_MIN_BYTES_PER_PIXEL, compression / 100);
  return 4 * Math.ceil(Math.ceil(pixels * perPixel) / 3) + IMAGE_ENVELOPE_BYTES;
}

/** How many images of `pixels` fit one answer in this format. */
export function imagesThatFit(pixels: number, format: ImageFormat, compression: number): number {
  return Math.max(0, Math.floor((MAX_BUFFERED_ANSWER_BYTES - LIST_ENVELOPE_BYTES) / imageItemBytes(pixels, format, compression)));
}

/**
 * @param pixels width × height of the largest image the request may get (its `size`, or the largest
 *   size of the plan's targets for `auto`).
 * @param compression `output_compression` (%, default 100), for JPEG and WebP.
 * @throws InvalidRequestError (400, code `response_too_large`, param `n`) when `n` images cannot fit,
 *   naming how many fit and how many JPEG would allow.
 */
export function assertImagesAnswerFits(n: number, size: string, pixels: number, format: ImageFormat, compression: number): void {
  const fit = imagesThatFit(pixels, format, compression);
  if (n <= fit) return;
  const mb = ((n * imageItemBytes(pixels, format, compression)) / 1_048_576).toFixed(1);
  const jpeg = imagesThatFit(pixels, 'jpeg', 80);
  const hint = format === 'png' || compression > 80 ? ` With \`output_format: "jpeg"\` and \`output_compression: 80\` up to ${jpeg} fit.` : '';
  throw new InvalidRequestError(
    `The answer to ${n} images of ${size} as ${format} could be up to ${mb} MB, over the 6 MB limit of a response: at most ${fit} fit; send fewer per request (\`n\`).${hint}`,
    { param: 'n', code: 'response_too_large' },
  );
}

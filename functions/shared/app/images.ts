import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { imageOutputTokens, imagesDemand } from '../billing/hold-demand';
import { CATALOGUE, getModel, type CatalogueEntry, type CatalogueTarget } from '../catalogue/catalogue';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { dashboardUrl } from '../http/public-url';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError, UpstreamUnavailableError } from '../errors/gateway-errors';
import {
  DEFAULT_IMAGE_MODEL,
  IMAGE_QUALITIES,
  formatOfMime,
  imagesRequest,
  sizePixels,
  type ImageFormat,
  type ImagesRequest,
  type ImagesResponse,
} from '../openai/images';
import { parseJsonBody } from '../openai/parse-body';
import { recordOverhead } from '../observability/metrics';
import { planAttempts } from '../routing/attempt-plan';
import { overheadMs } from '../routing/attempt-loop';
import { estimateTextTokens } from '../usage/estimate';
import { tokenUsage } from '../usage/token-usage';
import { authenticateRequest, billRequest, callAfterHold } from './guard';
import { routingHeaders } from './chat-answer';
import { MAX_BUFFERED_ANSWER_BYTES } from './embeddings';
import { settleRequest, usageEntry } from './settle-request';

/**
 * `POST /v1/images/generations`, in OpenAI's shape (openai/images.ts): `n` images of `prompt` as
 * `b64_json`, on the buffered function (a 6 MB answer: the request is sized before the call,
 * below). Routed like any model: the model's targets, then its catalogue equivalents (an
 * image model may stand in for another), each skipped when it cannot honour the request (size, `n` in
 * one call, output format, transparency). Held before the call and billed after, like chat: the prompt
 * at the input price and the images as output tokens (by size and quality, catalogue `image`), the
 * bill never above the hold (docs/prices.md "Image generation").
 * @throws InvalidRequestError (400) for a malformed request, a size, `n`, format or background the
 *   model cannot serve (OpenAI's wording), `response_format: "url"`, `stream: true`, or an answer that
 *   cannot fit 6 MB; NotFoundError (404) for an unknown model or one of another kind; the router's
 *   errors (502/503/504) when no target answers.
 */
export async function imageGenerations(req: GatewayRequest): Promise<JsonResult> {
  const caller = await authenticateRequest(req);
  const body = parseJsonBody(req.body, imagesRequest);
  const entry = getModel(body.model ?? DEFAULT_IMAGE_MODEL, 'image');
  const n = body.n ?? 1;
  refuseUnserved(body);
  const served = entry.targets.filter((t) => refusal(t, body, n) === undefined);
  if (served.length === 0) throw modelRefusal(entry, body, n);
  const [credentials, byok] = await Promise.all([loadUpstreamCredentials(), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  const plan = planAttempts(entry, CATALOGUE, credentials, undefined, [], byok).filter((a) => refusal(a.target, body, n) === undefined);
  if (plan.length === 0) throw new UpstreamUnavailableError(503, `No upstream provider is configured for the model \`${entry.id}\` with these parameters.`);
  const size = body.size ?? 'auto';
  assertImagesAnswerFits(
    n,
    size,
    largestPixels(
      size,
      plan.map((a) => a.target),
    ),
    body.output_format ?? 'png',
    body.output_compression ?? 100,
  );
  const quality = body.quality ?? undefined;
  const publicModel = body.model ?? DEFAULT_IMAGE_MODEL;
  const bill = billRequest(req, caller, publicModel, imagesDemand(body.prompt, n, size, quality, plan));
  // An image costs cents: the hold is written before the call.
  const outcome = await callAfterHold(
    bill,
    plan,
    req,
    caller,
    (a, ctx) => a.adapter.buildImagesRequest?.(body, n, ctx),
    (text, a, ctx) => {
      if (a.adapter.parseImagesResponse === undefined) throw new Error('adapter has no image generation');
      return a.adapter.parseImagesResponse(text, ctx);
    },
  );
  const result = outcome.result;
  // An upstream that returns more images than asked gets the extra ones dropped (and not billed).
  const images = result.images.slice(0, n);
  const answeredSize = result.size ?? (sizePixels(size) === undefined ? undefined : size);
  const answeredQuality = result.quality ?? IMAGE_QUALITIES.find((q) => q === quality);
  // No usage from the upstream: the prompt by our tokenizer, each image by the catalogue's table.
  const tokens =
    result.usage ??
    tokenUsage({
      prompt: await estimateTextTokens(body.prompt),
      completion: images.length * imageOutputTokens(outcome.attempt.target, answeredSize, answeredQuality),
    });
  const usage = usageEntry({
    requestedModel: publicModel,
    attempt: outcome.attempt,
    attempts: outcome.attempts,
    usage: { tokens, estimated: result.usage === undefined },
    status: 'complete',
  });
  const background = result.background ?? (body.background === 'transparent' || body.background === 'opaque' ? body.background : undefined);
  const response: ImagesResponse = {
    created: Math.floor(Date.now() / 1000),
    data: images.map((i) => ({ b64_json: i.b64, ...(i.revisedPrompt !== undefined ? { revised_prompt: i.revisedPrompt } : {}) })),
    ...(background !== undefined ? { background } : {}),
    output_format: formatOfMime(images[0]?.mimeType ?? 'image/png'),
    ...(answeredQuality !== undefined ? { quality: answeredQuality } : {}),
    ...(answeredSize !== undefined ? { size: answeredSize } : {}),
    usage: {
      input_tokens: tokens.prompt,
      input_tokens_details: { text_tokens: tokens.prompt, image_tokens: 0 },
      output_tokens: tokens.completion,
      total_tokens: tokens.prompt + tokens.completion,
    },
  };
  recordOverhead(overheadMs(req.receivedAt, outcome.attempts));
  return {
    kind: 'json',
    status: 200,
    headers: { ...routingHeaders(outcome), ...bill.rateHeaders() },
    body: response,
    after: () => settleRequest(bill, usage, { requestId: req.requestId, receivedAt: req.receivedAt, attempts: outcome.attempts.length }),
  };
}

/** What no image model here serves: URL answers and streamed generation (this endpoint answers whole). */
function refuseUnserved(body: ImagesRequest): void {
  if (body.response_format === 'url') {
    throw new InvalidRequestError(
      "Images are returned as `b64_json` only (GPT Image models never return URLs): omit `response_format` or set it to 'b64_json'.",
      { param: 'response_format', code: 'invalid_value' },
    );
  }
  if (body.stream === true) {
    throw new InvalidRequestError('Streamed image generation (`stream: true`, `partial_images`) is not offered: the images come in one answer.', {
      param: 'stream',
      code: 'invalid_value',
    });
  }
  if (body.background === 'transparent' && body.output_format === 'jpeg') {
    throw new InvalidRequestError("A transparent background needs an output format with transparency: 'png' or 'webp'.", {
      param: 'background',
      code: 'invalid_value',
    });
  }
}

/** Why `target` cannot serve this request (OpenAI's wording, with the field at fault), or undefined. */
function refusal(target: CatalogueTarget, body: ImagesRequest, n: number): { message: string; param: string; code: string } | undefined {
  const image = target.image;
  if (image === undefined) return { message: 'not an image model', param: 'model', code: 'invalid_value' };
  const sizes = Object.keys(image.outputTokens);
  if (body.size != null && body.size !== 'auto' && !sizes.includes(body.size)) {
    const supported = [...sizes, 'auto'].map((s) => `'${s}'`);
    return {
      message: `Invalid value: '${body.size}'. Supported values are: ${supported.slice(0, -1).join(', ')}, and ${supported.at(-1)}.`,
      param: 'size',
      code: 'invalid_value',
    };
  }
  if (n > image.maxImages)
    return {
      message: `Invalid 'n': integer above maximum value. Expected a value <= ${image.maxImages}, but got ${n} instead.`,
      param: 'n',
      code: 'integer_above_max_value',
    };
  const format = body.output_format ?? 'png';
  if (!image.outputFormats.includes(format))
    return {
      message: `Invalid value: '${format}'. This model returns ${image.outputFormats.map((f) => `'${f}'`).join(', ')} only.`,
      param: 'output_format',
      code: 'invalid_value',
    };
  if (body.background === 'transparent' && !image.transparentBackground)
    return { message: "Invalid value: 'transparent'. This model cannot make transparent backgrounds.", param: 'background', code: 'invalid_value' };
  return undefined;
}

/** The 400 for a model none of whose targets can serve the request: its first target's reason. */
function modelRefusal(entry: CatalogueEntry, body: ImagesRequest, n: number): InvalidRequestError {
  const first = entry.targets[0];
  const why = first === undefined ? undefined : refusal(first, body, n);
  return new InvalidRequestError(why?.message ?? `The model \`${entry.id}\` cannot serve this request.`, {
    param: why?.param ?? 'model',
    code: why?.code ?? 'invalid_value',
  });
}

/** Pixels of `size`, or of the largest size any of `targets` may choose for `auto`. */
function largestPixels(size: string, targets: readonly CatalogueTarget[]): number {
  const exact = sizePixels(size);
  if (exact !== undefined) return exact.width * exact.height;
  const all = targets.flatMap((t) => Object.keys(t.image?.outputTokens ?? {}).flatMap((s) => sizePixels(s) ?? []));
  return Math.max(1_024 * 1_024, ...all.map((p) => p.width * p.height));
}

/*
 * Will an image answer fit a buffered Lambda response (6 MB, embeddings.ts)? Images come back as
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

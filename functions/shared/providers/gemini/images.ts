import * as z from '../../validation/zod';
import type { ImageParts, ImagesRequest } from '../../openai/images';
import type { AdapterContext, UpstreamHttpRequest } from '../types';
import { UpstreamAttemptError } from '../types';
import { contentPolicyFailure, makeFailure, parseUpstreamJson } from '../upstream-failure';
import { failureFromRpcError } from './gemini-errors';
import { geminiHeaders, geminiModelUrl } from './request';
import { mapUsage } from './usage';
import { rpcError, usageMetadata } from './wire';

/**
 * Image generation on Gemini's native API (providers.md §3.10): `generateContent` with
 * `generationConfig.responseModalities: ["IMAGE"]` answers the image as an `inlineData` part
 * (`{mimeType:"image/png", data:<base64>}`), one image per call. OpenAI's `size` becomes
 * `imageConfig.aspectRatio` (1024x1024 → 1:1, 1536x1024 → 3:2, 1024x1536 → 2:3; `auto` leaves the
 * model's default); quality, background, output format and moderation have no Gemini counterpart
 * (the route only sends here what this target can honour: app/images.ts).
 */

/** OpenAI size → Gemini aspect ratio. */
const ASPECT_RATIOS: Readonly<Record<string, string>> = { '1024x1024': '1:1', '1536x1024': '3:2', '1024x1536': '2:3' };

/** Gemini's finish reasons for an image it refused to make (providers.md §3.3): the client's 400. */
const REFUSED = new Set(['SAFETY', 'IMAGE_SAFETY', 'PROHIBITED_CONTENT', 'IMAGE_PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'RECITATION', 'IMAGE_RECITATION']);

export function buildGeminiImagesRequest(req: ImagesRequest, _n: number, ctx: AdapterContext): UpstreamHttpRequest {
  const aspectRatio = req.size == null ? undefined : ASPECT_RATIOS[req.size];
  const body = {
    contents: [{ role: 'user', parts: [{ text: req.prompt }] }],
    generationConfig: { responseModalities: ['IMAGE'], ...(aspectRatio === undefined ? {} : { imageConfig: { aspectRatio } }) },
  };
  return {
    url: geminiModelUrl(ctx, 'generateContent'),
    headers: geminiHeaders(ctx.endpoint.apiKey, 'application/json'),
    body: JSON.stringify({ ...body, ...ctx.target.upstreamParams }),
  };
}

const imageAnswer = z.looseObject({
  candidates: z.nullish(
    z.array(
      z.looseObject({
        content: z.nullish(
          z.looseObject({ parts: z.nullish(z.array(z.looseObject({ inlineData: z.nullish(z.looseObject({ mimeType: z.string(), data: z.string() })) }))) }),
        ),
        finishReason: z.nullish(z.string()),
      }),
    ),
  ),
  promptFeedback: z.nullish(z.looseObject({ blockReason: z.nullish(z.string()) })),
  usageMetadata: z.nullish(usageMetadata),
  error: z.nullish(rpcError),
});

/**
 * A `generateContent` answer → {@link ImageParts}: every `inlineData` image part of every candidate;
 * usage from `usageMetadata` (completion = `candidatesTokenCount`, the image's tokens).
 * @throws UpstreamAttemptError — the client's 400 (`content_policy_violation`) for a blocked prompt or
 *   an image refused by safety; retryable `server` for a malformed body or an answer without an image.
 */
export function parseGeminiImagesResponse(bodyText: string, _ctx: AdapterContext): ImageParts {
  const parsed = imageAnswer.safeParse(parseUpstreamJson(bodyText, 'gemini: images body is not valid JSON'));
  if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, 'gemini: malformed generateContent body'));
  const { candidates, promptFeedback, error } = parsed.data;
  if (error != null) throw new UpstreamAttemptError(failureFromRpcError(error, error.code ?? 200));
  if (promptFeedback?.blockReason != null)
    throw new UpstreamAttemptError(contentPolicyFailure(200, `The prompt was blocked by the upstream's safety system (${promptFeedback.blockReason}).`));
  const images = (candidates ?? []).flatMap((c) =>
    (c.content?.parts ?? []).flatMap((p) =>
      p.inlineData != null && p.inlineData.data !== '' ? [{ b64: p.inlineData.data, mimeType: p.inlineData.mimeType }] : [],
    ),
  );
  if (images.length === 0) {
    const reason = candidates?.[0]?.finishReason;
    if (reason != null && REFUSED.has(reason))
      throw new UpstreamAttemptError(contentPolicyFailure(200, `The image was refused by the upstream's safety system (${reason}).`));
    throw new UpstreamAttemptError(makeFailure('server', 200, `gemini: answer without an image (finishReason ${reason ?? 'none'})`));
  }
  return { images, usage: mapUsage(parsed.data.usageMetadata) };
}

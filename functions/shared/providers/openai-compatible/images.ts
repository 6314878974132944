import * as z from '../../validation/zod';
import { IMAGE_QUALITIES, type ImageParts, type ImagesRequest } from '../../openai/images';
import { tokenUsage } from '../../usage/token-usage';
import type { AdapterContext, ProviderAdapter } from '../types';
import { UpstreamAttemptError } from '../types';
import { makeFailure, parseUpstreamJson } from '../upstream-failure';

/**
 * OpenAI's Image API, `POST {baseUrl}/images/generations` (providers.md §1.10): the client's GPT Image
 * parameters pass through as OpenAI names them; `response_format` never goes upstream (GPT Image models
 * refuse it and always answer `b64_json`), nor `stream` (the route refuses it).
 */
export function openAIImagesBody(req: ImagesRequest, n: number, ctx: AdapterContext): Record<string, unknown> {
  const body: Record<string, unknown> = { model: ctx.target.upstreamModel, prompt: req.prompt, n };
  for (const f of ['size', 'quality', 'background', 'output_format', 'output_compression', 'moderation', 'user'] as const) {
    const v = req[f];
    if (v !== undefined && v !== null) body[f] = v;
  }
  return body;
}

/** Gives `adapter` OpenAI's image generation at `path` (under the base URL), with its request headers. */
export function addOpenAIImages(adapter: ProviderAdapter, path: string, headers: (ctx: AdapterContext) => Record<string, string>): void {
  adapter.buildImagesRequest = (req, n, ctx) => ({
    url: ctx.endpoint.baseUrl + path,
    headers: headers(ctx),
    body: JSON.stringify(openAIImagesBody(req, n, ctx)),
  });
  adapter.parseImagesResponse = parseOpenAIImagesResponse;
}

/** OpenAI's `ImagesResponse` (openai-node; providers.md §1.10), the fields read. */
const imagesBody = z.looseObject({
  data: z.array(z.looseObject({ b64_json: z.nullish(z.string()), revised_prompt: z.nullish(z.string()) })),
  background: z.nullish(z.string()),
  output_format: z.nullish(z.string()),
  quality: z.nullish(z.string()),
  size: z.nullish(z.string()),
  usage: z.nullish(
    z.looseObject({
      input_tokens: z.nullish(z.number()),
      output_tokens: z.nullish(z.number()),
    }),
  ),
});

/**
 * An OpenAI images answer → {@link ImageParts}: prompt = `usage.input_tokens` (text and image input
 * tokens), completion = `usage.output_tokens` (the images); the media type from `output_format`.
 * @throws UpstreamAttemptError (`server`, retryable) for a malformed body or one without any image.
 */
export function parseOpenAIImagesResponse(bodyText: string, ctx: AdapterContext): ImageParts {
  const parsed = imagesBody.safeParse(parseUpstreamJson(bodyText, 'upstream sent a body that is not valid JSON'));
  const images = parsed.success ? parsed.data.data.flatMap((d) => (typeof d.b64_json === 'string' && d.b64_json !== '' ? [d] : [])) : [];
  if (!parsed.success || images.length === 0)
    throw new UpstreamAttemptError(makeFailure('server', 200, `${ctx.endpoint.provider}: images body without b64_json images`));
  const { usage, output_format: format, quality, background, size } = parsed.data;
  const mimeType = `image/${format === 'jpeg' || format === 'webp' ? format : 'png'}`;
  return {
    images: images.map((d) => ({ b64: d.b64_json ?? '', mimeType, ...(d.revised_prompt != null ? { revisedPrompt: d.revised_prompt } : {}) })),
    usage:
      usage == null || (usage.input_tokens == null && usage.output_tokens == null)
        ? undefined
        : tokenUsage({ prompt: usage.input_tokens ?? 0, completion: usage.output_tokens ?? 0 }),
    size: size ?? undefined,
    quality: IMAGE_QUALITIES.find((q) => q === quality),
    background: background === 'transparent' || background === 'opaque' ? background : undefined,
  };
}

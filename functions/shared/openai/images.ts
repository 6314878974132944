import * as z from '../validation/zod';
import type { TokenUsage } from '../usage/token-usage';

/**
 * The client's image generation request and our response, in OpenAI's shape (`POST
 * /v1/images/generations`; openai-node `ImageGenerateParams`, `ImagesResponse`; providers.md §1.10).
 * modelmux serves the GPT Image family's parameters: images always come back as `b64_json` (GPT Image
 * models never return URLs), so `response_format: "url"` is refused rather than silently ignored.
 * `size` is checked against the model's own sizes by the route (app/images.ts), so an unknown size is
 * OpenAI's 400 listing the supported values.
 */

/** OpenAI's prompt limit for GPT Image models, characters (providers.md §1.10). */
export const MAX_IMAGE_PROMPT_CHARS = 32_000;

/** OpenAI's most images per request (`n`, 1–10; providers.md §1.10). */
export const MAX_IMAGES_PER_REQUEST = 10;

/** The model a request without `model` gets (OpenAI's own default, dall-e-2, is retired upstream). */
export const DEFAULT_IMAGE_MODEL = 'gpt-image-1';

/** Image qualities of the GPT Image models; `auto` lets the model choose. */
export const IMAGE_QUALITIES = ['low', 'medium', 'high'] as const;
export type ImageQuality = (typeof IMAGE_QUALITIES)[number];

export const IMAGE_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

export const imagesRequest = z.strictObject({
  model: z.nullish(z.string().check(z.minLength(1))),
  prompt: z.string().check(z.minLength(1), z.maxLength(MAX_IMAGE_PROMPT_CHARS)),
  n: z.nullish(z.number().check(z.int(), z.gte(1), z.lte(MAX_IMAGES_PER_REQUEST))),
  /** `WIDTHxHEIGHT` or `auto`; which sizes a model has is the catalogue's (route check). */
  size: z.nullish(z.string()),
  quality: z.nullish(z.enum([...IMAGE_QUALITIES, 'auto'])),
  response_format: z.nullish(z.enum(['b64_json', 'url'])),
  background: z.nullish(z.enum(['transparent', 'opaque', 'auto'])),
  output_format: z.nullish(z.enum(IMAGE_FORMATS)),
  /** 0–100 (%), JPEG and WebP only; OpenAI's default is 100. */
  output_compression: z.nullish(z.number().check(z.int(), z.gte(0), z.lte(100))),
  moderation: z.nullish(z.enum(['low', 'auto'])),
  /** Refused when true: the buffered endpoint answers whole (app/images.ts). */
  stream: z.nullish(z.boolean()),
  partial_images: z.nullish(z.number().check(z.int(), z.gte(0), z.lte(3))),
  user: z.optional(z.string()),
});
export type ImagesRequest = z.infer<typeof imagesRequest>;

/**
 * OpenAI's image `usage` (GPT Image models): tokens; `input_tokens_details` splits the prompt into text
 * and image tokens (image tokens only come with edits, which modelmux does not serve: always 0 here).
 */
export interface ImagesUsage {
  input_tokens: number;
  input_tokens_details: { text_tokens: number; image_tokens: number };
  output_tokens: number;
  total_tokens: number;
}

/** The `/v1/images/generations` response body. */
export interface ImagesResponse {
  /** Unix seconds. */
  created: number;
  data: Array<{ b64_json: string; revised_prompt?: string }>;
  background?: 'transparent' | 'opaque';
  output_format: ImageFormat;
  quality?: ImageQuality;
  size?: string;
  usage: ImagesUsage;
}

/** One generated image as an adapter returns it: base64 bytes and their media type. */
export interface GeneratedImage {
  b64: string;
  mimeType: string;
  revisedPrompt?: string;
}

/**
 * Provider-neutral result of one image call: the images, and what the upstream reported (usage
 * undefined when it sent none: the route estimates; size/quality/background as the upstream chose them
 * when it says).
 */
export interface ImageParts {
  images: GeneratedImage[];
  usage: TokenUsage | undefined;
  size?: string | undefined;
  quality?: ImageQuality | undefined;
  background?: 'transparent' | 'opaque' | undefined;
}

/** Width and height of a `WIDTHxHEIGHT` size, or undefined for `auto` or a malformed one. */
export function sizePixels(size: string): { width: number; height: number } | undefined {
  const m = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  return m === null ? undefined : { width: Number(m[1]), height: Number(m[2]) };
}

/** The output format of a media type (`image/jpeg` → `jpeg`), png when unknown. */
export function formatOfMime(mimeType: string): ImageFormat {
  const sub = mimeType.replace(/^image\//, '');
  return sub === 'jpeg' || sub === 'jpg' ? 'jpeg' : sub === 'webp' ? 'webp' : 'png';
}

/**
 * zod for modelmux's schemas: `zod/mini`, the functional, tree-shakeable form of zod 4 (the same core,
 * checks and issues as classic zod; https://zod.dev/packages/mini). It builds its schema objects about
 * three times cheaper than classic `zod` at module load and bundles only what is used (the chat
 * bundle's size and cold start).
 *
 * Classic zod registers its English messages on its first schema; mini registers none (every message
 * would read "Invalid input"). The 400s modelmux returns quote these messages ("Too small: expected
 * string to have >=1 characters", "… received undefined" for a missing field: openai/parse-body.ts),
 * so this module sets English once, before any schema parses. Import zod from here, never `zod/mini`
 * directly.
 */
import { config, pipe, transform, type core, type ZodMiniPipe, type ZodMiniTransform } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';

/**
 * classic zod's `z.preprocess(fn, schema)`, which mini lacks: `fn` maps the input, then `schema`
 * validates the result (the same pipe of a transform into `schema` that classic builds).
 */
export function preprocess<T extends core.$ZodType<unknown, unknown>>(
  fn: (value: unknown) => unknown,
  schema: T,
): ZodMiniPipe<ZodMiniTransform<unknown, unknown>, T> {
  return pipe<ZodMiniTransform<unknown, unknown>, T>(transform(fn), schema);
}

import { PROVIDER_NAMES, type ProviderName } from '../providers/manifest';
import * as z from '../validation/zod';

/**
 * The request's side of OpenRouter's provider routing: the `provider` object of a chat request and the
 * `:nitro` / `:floor` model suffixes, validated. What they mean for the plan: routing/attempt-plan.ts.
 */

/** Provider names as OpenRouter and Vercel write them, lower-cased, → ours. */
const PROVIDER_SYNONYMS: Readonly<Record<string, ProviderName>> = {
  'google-ai-studio': 'gemini',
  'google ai studio': 'gemini',
  google: 'gemini',
  'together ai': 'together',
  togetherai: 'together',
};

const providerName = z.pipe(
  z.string(),
  z.transform((raw, ctx): ProviderName => {
    const lower = raw.trim().toLowerCase();
    const name = (PROVIDER_NAMES as readonly string[]).includes(lower) ? (lower as ProviderName) : PROVIDER_SYNONYMS[lower];
    if (name === undefined) {
      ctx.issues.push({ code: 'custom', input: raw, message: `unknown provider '${raw}'; modelmux routes to ${PROVIDER_NAMES.join(', ')}` });
      return z.NEVER;
    }
    return name;
  }),
);

/** A price cap, USD per 1M tokens (OpenRouter sends numbers or decimal strings). */
const usdPerMTok = z.pipe(
  z.union([z.number(), z.string().check(z.regex(/^\d+(\.\d+)?$/))]),
  z.transform((v) => Number(v)),
);

export const SORTS = ['price', 'throughput', 'latency'] as const;
export type ProviderSort = (typeof SORTS)[number];

/** The `provider` object, strict: an unknown field is OpenAI's "Unrecognized request argument" 400. */
export const providerPreferences = z.strictObject({
  order: z.optional(z.array(providerName)),
  only: z.optional(z.array(providerName)),
  ignore: z.optional(z.array(providerName)),
  allow_fallbacks: z.nullish(z.boolean()),
  require_parameters: z.nullish(z.boolean()),
  data_collection: z.nullish(z.enum(['allow', 'deny'])),
  zdr: z.nullish(z.boolean()),
  // OpenRouter also takes `{by, partition}`; the partition does not apply to one model's few targets.
  sort: z.nullish(
    z.union([
      z.enum(SORTS),
      z.pipe(
        z.object({ by: z.enum(SORTS) }),
        z.transform((o) => o.by),
      ),
    ]),
  ),
  max_price: z.nullish(z.strictObject({ prompt: z.optional(usdPerMTok), completion: z.optional(usdPerMTok) })),
});
export type ProviderPreferences = z.infer<typeof providerPreferences>;

/** The model suffixes OpenRouter defines as shortcuts for a sort. */
const SUFFIX_SORT: Readonly<Record<string, ProviderSort>> = { nitro: 'throughput', floor: 'price' };

/**
 * Splits `gpt-4o:nitro` into the model name and the sort its suffix asks for. A name without a known
 * suffix is returned whole (then 404s as an unknown model if it is one).
 */
export function splitModelSuffix(model: string): { model: string; sort: ProviderSort | undefined } {
  const at = model.lastIndexOf(':');
  const sort = at > 0 ? SUFFIX_SORT[model.slice(at + 1)] : undefined;
  return sort === undefined ? { model, sort: undefined } : { model: model.slice(0, at), sort };
}

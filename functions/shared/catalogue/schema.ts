import * as z from '../validation/zod';
import { IMAGE_TOKEN_RULES, PROVIDER_NAMES } from '../providers/manifest';

/**
 * The catalogue's shape. The built-in data (models.ts) is typed by it at compile time and parsed with it
 * by test/catalogue, so a typo fails the build or the tests, never a request; the Lambda skips the parse
 * at INIT (catalogue.ts). Data from anywhere else goes through `loadCatalogue` (load.ts), which parses.
 *
 * Prices are not catalogue data: they come from the maintained price data (price-data.ts, corrected by
 * price-overrides.ts and operator-prices.ts), looked up by target key `provider:upstreamModel`.
 * Units: context window and output limits are tokens.
 */

const isoDate = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD'));

/** What a target model can take and give; the router refuses requests needing what it lacks. */
export const capabilities = z.strictObject({
  tools: z.boolean(),
  vision: z.boolean(),
  /** `hidden`: reasoning tokens billed but not returned (OpenAI o-series); `exposed`: returned as reasoning_content. */
  reasoning: z.enum(['none', 'hidden', 'exposed']),
  jsonMode: z.boolean(),
  /** Takes `file` content parts (PDF documents). */
  files: z.boolean(),
  /** Takes `input_audio` content parts. */
  audio: z.boolean(),
});
export type Capabilities = z.infer<typeof capabilities>;

/**
 * How a target starts answering, for its default time limits (routing/timeouts.ts, LATENCY_TABLE):
 * `standard` (first token in about a second), `thinking` (reasoning streamed as produced, slower to
 * start), `hidden-thinking` (nothing streamed until reasoning ends). Absent: `hidden-thinking` for
 * hidden reasoning, else `standard` (then `thinking` when the request sets `reasoning_effort`).
 */
export const latencyProfile = z.enum(['standard', 'thinking', 'hidden-thinking']);
export type LatencyProfile = z.infer<typeof latencyProfile>;

/**
 * Hedging (routing/hedge.ts): when an attempt on this model has produced no first token after
 * `afterMs` (default: its profile's usual p95 time to first token, LATENCY_TABLE), the next target of
 * the plan starts beside it; the first to produce a token wins, the other is stopped.
 */
export const hedgeSchema = z.strictObject({ afterMs: z.optional(z.number().check(z.int(), z.positive())) });

const timeoutFields = z.strictObject({
  connectMs: z.optional(z.number().check(z.int(), z.positive())),
  headersMs: z.optional(z.number().check(z.int(), z.positive())),
  firstTokenMs: z.optional(z.number().check(z.int(), z.positive())),
  idleMs: z.optional(z.number().check(z.int(), z.positive())),
});

/**
 * What the target's provider does with prompts and answers (catalogue/data-policies.ts): may train on
 * them; keeps them after answering. With the date read and the source.
 */
export const dataPolicySchema = z.strictObject({
  training: z.boolean(),
  retainsPrompts: z.boolean(),
  readOn: isoDate,
  source: z.string().check(z.minLength(1)),
});
export type DataPolicyData = z.infer<typeof dataPolicySchema>;

/** Output tokens one image costs at each quality (OpenAI's GPT Image table; a flat count for Gemini). */
const tokensByQuality = z.strictObject({
  low: z.number().check(z.int(), z.positive()),
  medium: z.number().check(z.int(), z.positive()),
  high: z.number().check(z.int(), z.positive()),
});

/**
 * Image generation targets (`POST /v1/images/generations`): what the upstream bills per image and what
 * it can make. `outputTokens` maps each size the target serves (`WIDTHxHEIGHT`, OpenAI's names; `auto`
 * is always accepted) to the output tokens one image costs by quality; the hold counts the highest
 * when the request leaves size or quality to the model. `maxImages`: images one upstream call can
 * return (`n`). `outputFormats`: the encodings it returns. `transparentBackground`: it honours
 * `background: "transparent"`.
 */
export const imageSchema = z.strictObject({
  outputTokens: z.record(z.string().check(z.regex(/^\d{2,5}x\d{2,5}$/)), tokensByQuality),
  maxImages: z.number().check(z.int(), z.positive()),
  outputFormats: z.array(z.enum(['png', 'jpeg', 'webp'])).check(z.minLength(1)),
  transparentBackground: z.boolean(),
});
export type ImageTargetData = z.infer<typeof imageSchema>;

export const targetSchema = z.strictObject({
  provider: z.enum(PROVIDER_NAMES),
  /** The live upstream model id sent in the upstream request. */
  upstreamModel: z.string().check(z.minLength(1)),
  /**
   * Tokens of prompt and output together; absent: the price data's figure for the target (price-data.ts,
   * or its override in price-overrides.ts), which every target must then have.
   */
  contextWindow: z.optional(z.number().check(z.int(), z.positive())),
  maxOutputTokens: z.number().check(z.int(), z.positive()),
  /**
   * The endpoint modelmux calls caches prompts by itself and bills a cache write as plain input
   * (MiniMax's OpenAI-compatible API): the price data's cache-write buckets, which belong to another
   * endpoint, are not used (docs/prices.md "Prompt-cache buckets").
   */
  passiveCache: z.optional(z.literal(true)),
  capabilities,
  /** Extra upstream body fields this target always needs (e.g. DeepSeek V4's thinking switch). */
  upstreamParams: z.optional(z.record(z.string(), z.unknown())),
  /** Embedding models: the vector length the upstream returns by default. */
  dimensions: z.optional(z.number().check(z.int(), z.positive())),
  /** This target's data policy when it differs from its provider's (default: data-policies.ts). */
  dataPolicy: z.optional(dataPolicySchema),
  /**
   * Embedding models: the upstream refuses `dimensions` (text-embedding-ada-002: "This model does not
   * support specifying dimensions."); such a request is our 400.
   */
  fixedDimensions: z.optional(z.boolean()),
  /** Image models: sizes, tokens per image, formats (kind `image` only). */
  image: z.optional(imageSchema),
  /**
   * How many prompt tokens an image or PDF page in the request can cost (usage/media-tokens.ts), when
   * it differs from the provider's rule (providers/manifest.ts `imageTokens`), e.g. gpt-4o-mini.
   */
  imageTokens: z.optional(z.enum(IMAGE_TOKEN_RULES)),
  /** How this target starts answering (default derived from `capabilities.reasoning`). */
  latency: z.optional(latencyProfile),
  /** Per-target attempt time limits (ms), over the provider's and the defaults (routing/timeouts.ts). */
  timeouts: z.optional(z.strictObject({ stream: z.optional(timeoutFields), buffered: z.optional(timeoutFields) })),
});
export type CatalogueTargetData = z.infer<typeof targetSchema>;

export const entrySchema = z.strictObject({
  /** The public `model` value clients send. */
  id: z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]*$/)),
  kind: z.enum(['chat', 'embedding', 'image']),
  description: z.string(),
  ownedBy: z.string(),
  /** Unix seconds, for OpenAI's model object `created`. */
  created: z.number().check(z.int(), z.positive()),
  /** Ordered: the first target serves; the rest are the same model elsewhere or its nearest stand-ins. */
  targets: z.array(targetSchema).check(z.minLength(1)),
  /** Other public ids tried, in order, when every target of this one failed. Same kind only. */
  equivalents: z.array(z.string()),
  /** Opt-in hedging of slow first tokens (chat only). */
  hedge: z.optional(hedgeSchema),
});
export type CatalogueEntryData = z.infer<typeof entrySchema>;

export const catalogueSchema = z.array(entrySchema).check(z.minLength(1));

/**
 * Another name for a catalogue model, resolved wherever a model is named (`model`, `models[]`,
 * `GET /v1/models/{id}`) and listed on its model in `GET /v1/models`. Kinds:
 * `slug` — OpenRouter's `provider/model` name (e.g. `openai/gpt-4o`);
 * `dated` — a provider's dated snapshot id served by the model (e.g. `gpt-4o-2024-08-06`);
 * `latest` — a provider's moving `-latest` alias;
 * `deprecated` — a retired name mapped to its documented successor (the answer's `x-modelmux-model`
 * header names the model that served; `source` says where the successor is documented).
 */
export const aliasSchema = z.strictObject({
  alias: z.string().check(z.regex(/^[a-z0-9][a-z0-9./-]*$/)),
  model: z.string(),
  kind: z.enum(['slug', 'dated', 'latest', 'deprecated']),
  source: z.optional(z.string().check(z.minLength(1))),
});
export type CatalogueAliasData = z.infer<typeof aliasSchema>;

export const aliasesSchema = z.array(aliasSchema);

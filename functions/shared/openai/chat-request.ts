import * as z from '../validation/zod';
import { InvalidRequestError } from '../errors/gateway-errors';
import { chatMessage, textPart } from './chat-messages';
import { cacheControl, chatTool, toolChoice } from './chat-tools';
import { providerPreferences } from './provider-preferences';

/**
 * The client's chat-completion request. Its top level is strict: an unknown argument is OpenAI's
 * own 400 "Unrecognized request argument supplied: <name>" (parse-body.ts). Below it, every field is
 * typed as OpenAI's published OpenAPI description types it (`CreateChatCompletionRequest`, vendored
 * under test/fixtures/openai/openapi/; test/openai/openapi-requests.test.ts generates requests from
 * it and checks each is accepted or refused as OpenAI would): enums, ranges, required fields,
 * non-empty arrays. A nested property the description does not name is accepted and dropped, as
 * OpenAI ignores it (messages: chat-messages.ts). Tools and tool calls: chat-tools.ts.
 *
 * Accepting a field never means ignoring it: fields modelmux does not interpret are passed through
 * to OpenAI-compatible upstreams, and a target that cannot honour one refuses it with OpenAI's 400
 * `unsupported_parameter` (providers/unsupported-parameters.ts).
 *
 * Spec defaults: `temperature` is 0.7 when absent or null (spec §2, "Chat completion request"; the
 * SDK types it `number | null`, and null means "the default" there as in OpenAI's API).
 */

/** Spec §2: temperature defaults to 0.7 when the request leaves it out. */
export const DEFAULT_TEMPERATURE = 0.7;

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({
      name: z.string(),
      description: z.optional(z.string()),
      schema: z.optional(z.record(z.string(), z.unknown())),
      strict: z.nullish(z.boolean()),
    }),
  }),
]);

const positiveInt = z.number().check(z.int(), z.positive());

/** The longest `models` fallback list accepted: OpenRouter documented "up to 3"; a few more, so one request cannot fan out far. */
export const MAX_REQUEST_FALLBACKS = 8;

/**
 * The longest end-user id (`user`, `safety_identifier`) and session id (`session_id`, or its header)
 * a request may carry, in UTF-8 bytes (characters, for an ASCII id): OpenAI's own limit on
 * `safety_identifier`. The ledger entry records both (docs/DATA-MODEL.md §4) and stays within 1 KB,
 * one write unit, with two of this length; two of 128 took a leased entry to 2 (write-units.test.ts).
 */
export const MAX_CALLER_ID_BYTES = 64;

/**
 * `value`, when it is at most {@link MAX_CALLER_ID_BYTES} bytes long.
 * @param param the request parameter or header it came from, named in the error.
 * @throws InvalidRequestError (400, code `string_above_max_length`) for a longer value.
 */
export function boundedCallerId(value: string, param: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes <= MAX_CALLER_ID_BYTES) return value;
  throw new InvalidRequestError(
    `Invalid '${param}': ${bytes} bytes long; an end-user or session id may be at most ${MAX_CALLER_ID_BYTES} bytes (UTF-8), as the ledger records it. Send a hash or a UUID.`,
    { param, code: 'string_above_max_length' },
  );
}

/** Fields of the request that steer modelmux's routing and are never passed to an upstream. */
export const ROUTING_FIELDS = ['models', 'route', 'provider', 'session_id'] as const;

/**
 * OpenRouter's request fields that the gateway reads itself and never passes upstream
 * (docs/openrouter.md): `reasoning` (mapped to `reasoning_effort` and a thinking budget by
 * app/request-adjust.ts), `usage` (usage is always returned) and `transforms`.
 */
export const OPENROUTER_FIELDS = ['reasoning', 'usage', 'transforms'] as const;

/**
 * OpenRouter's unified reasoning control (docs/openrouter.md §1): `{effort?, max_tokens?, exclude?, enabled?}`.
 * Efforts are OpenRouter's list ("xhigh", "high", "medium", "low", "minimal", "none"), plus OpenAI's `max`.
 */
export const openRouterReasoning = z.object({
  effort: z.nullish(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
  max_tokens: z.nullish(z.number().check(z.int(), z.positive())),
  exclude: z.nullish(z.boolean()),
  enabled: z.nullish(z.boolean()),
});
/**
 * `seed` is an int64 in the description. JSON numbers past 2^53 reach us as doubles, so the bounds
 * are the doubles nearest ±2^63, as any JSON parser (OpenAI's description included) reads them.
 */
const int64 = z.number().check(z.refine(Number.isInteger, 'expected an integer'), z.gte(-(2 ** 63)), z.lte(2 ** 63));
const moderationMode = z.object({ mode: z.enum(['score', 'block']) });
const functionParameters = z.record(z.string(), z.unknown());

/** `audio`: output audio settings (`voice` a built-in name or `{id}` of a custom voice). */
const audioOutput = z.object({
  voice: z.union([z.string(), z.strictObject({ id: z.string() })]),
  format: z.enum(['wav', 'aac', 'mp3', 'flac', 'opus', 'pcm16']),
});

/** `web_search_options` (OpenAI's search models). */
const webSearchOptions = z.object({
  user_location: z.nullish(
    z.object({
      type: z.literal('approximate'),
      approximate: z.object({
        country: z.optional(z.string()),
        region: z.optional(z.string()),
        city: z.optional(z.string()),
        timezone: z.optional(z.string()),
      }),
    }),
  ),
  search_context_size: z.optional(z.enum(['low', 'medium', 'high'])),
});

/** `prediction`: predicted output (`PredictionContent`). */
const prediction = z.object({ type: z.literal('content'), content: z.union([z.string(), z.array(textPart).check(z.minLength(1))]) });

/** The deprecated `functions` / `function_call` pair (`ChatCompletionFunctions`). */
const legacyFunction = z.object({ name: z.string(), description: z.optional(z.string()), parameters: z.optional(functionParameters) });
const legacyFunctionCall = z.union([z.enum(['none', 'auto']), z.object({ name: z.string() })]);

/**
 * A Gemini context cache by name, `cachedContents/{id}` (the `name` of a `CachedContent`, created with
 * the Gemini API's `POST /v1beta/cachedContents`; docs/prices.md "Gemini explicit caches").
 */
const cachedContentName = z.string().check(z.regex(/^cachedContents\/[A-Za-z0-9_-]{1,128}$/, 'expected a Gemini context cache name, "cachedContents/<id>"'));

/**
 * Gemini's own options on the OpenAI format, as Google's OpenAI-compatible endpoint takes them
 * (providers.md §3.9): only `cached_content` here; any other key is refused (strict).
 */
const googleOptions = z.strictObject({ cached_content: cachedContentName });

/** The validated chat-completion request (defaults applied). */
export const chatCompletionRequest = z
  .strictObject({
    model: z.string().check(z.minLength(1)),
    messages: z.array(chatMessage).check(z.minLength(1)),
    temperature: z.pipe(
      z.nullish(z.number().check(z.gte(0), z.lte(2))),
      z.transform((t) => t ?? DEFAULT_TEMPERATURE),
    ),
    max_tokens: z.nullish(positiveInt),
    max_completion_tokens: z.nullish(positiveInt),
    stream: z.nullish(z.boolean()),
    stream_options: z.nullish(z.object({ include_usage: z.optional(z.boolean()), include_obfuscation: z.optional(z.boolean()) })),
    top_p: z.nullish(z.number().check(z.gte(0), z.lte(1))),
    n: z.nullish(z.number().check(z.int(), z.gte(1), z.lte(128))),
    stop: z.nullish(z.union([z.string(), z.array(z.string()).check(z.minLength(1), z.maxLength(4))])),
    presence_penalty: z.nullish(z.number().check(z.gte(-2), z.lte(2))),
    frequency_penalty: z.nullish(z.number().check(z.gte(-2), z.lte(2))),
    logit_bias: z.nullish(z.record(z.string(), z.number().check(z.int()))),
    logprobs: z.nullish(z.boolean()),
    top_logprobs: z.nullish(z.number().check(z.int(), z.gte(0), z.lte(20))),
    seed: z.nullish(int64),
    /** The caller's end user (OpenAI's, OpenRouter's `user`): sent to OpenAI-compatible upstreams, recorded on the ledger entry (at most {@link MAX_CALLER_ID_BYTES}). */
    user: z.optional(z.string()),
    safety_identifier: z.nullish(z.string().check(z.maxLength(64))),
    prompt_cache_key: z.nullish(z.string()),
    prompt_cache_retention: z.nullish(z.enum(['in_memory', '24h'])),
    prompt_cache_options: z.optional(z.object({ mode: z.optional(z.enum(['implicit', 'explicit'])), ttl: z.optional(z.literal('30m')) })),
    /**
     * Anthropic's automatic caching (OpenRouter's top-level `cache_control`): one breakpoint at the end
     * of the cacheable prefix, placed by Anthropic. Sent to Anthropic only (providers/anthropic/request.ts).
     */
    cache_control: cacheControl,
    /** Moderated completions (OpenAI only; openai-node 6.x `ChatCompletionCreateParams.Moderation`). */
    moderation: z.nullish(
      z.object({
        model: z.string(),
        policy: z.nullish(z.object({ input: z.nullish(moderationMode), output: z.nullish(moderationMode) })),
      }),
    ),
    tools: z.optional(z.array(chatTool)),
    tool_choice: z.optional(toolChoice),
    parallel_tool_calls: z.optional(z.boolean()),
    functions: z.optional(z.array(legacyFunction).check(z.minLength(1), z.maxLength(128))),
    function_call: z.optional(legacyFunctionCall),
    response_format: z.optional(responseFormat),
    reasoning_effort: z.nullish(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
    metadata: z.nullish(z.record(z.string(), z.string())),
    store: z.nullish(z.boolean()),
    service_tier: z.nullish(z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast'])),
    modalities: z.nullish(z.array(z.enum(['text', 'audio']))),
    audio: z.nullish(audioOutput),
    prediction: z.nullish(prediction),
    verbosity: z.nullish(z.enum(['low', 'medium', 'high'])),
    web_search_options: z.optional(webSearchOptions),
    /**
     * Gemini options (`google.cached_content`): the body field the OpenAI Python SDK's
     * `extra_body={"google": …}` sends, and Google's documented wire shape `extra_body.google` (what
     * `extra_body={"extra_body": {"google": …}}` sends, and openai-node's `extra_body: {google: …}`).
     * Sent to Gemini targets only, as `cachedContent` (providers/gemini/request.ts); a request naming a
     * cache is served by Gemini targets only (routing/attempt-plan.ts).
     */
    google: z.optional(googleOptions),
    extra_body: z.optional(z.strictObject({ google: googleOptions })),
    /**
     * OpenRouter's per-request fallback list: catalogue chat models tried, in order, after the
     * model's own targets (routing/attempt-plan.ts requestFallbacks). Routing fields: never sent upstream.
     */
    models: z.nullish(z.array(z.string().check(z.minLength(1))).check(z.maxLength(MAX_REQUEST_FALLBACKS))),
    /**
     * OpenRouter's conversation id for sticky routing (routing/sticky.ts; also the `x-session-id`
     * header), recorded on the ledger entry (at most {@link MAX_CALLER_ID_BYTES}). A routing field: never sent upstream.
     */
    session_id: z.optional(z.string()),
    /** OpenRouter's reasoning control (docs/openrouter.md §1), read by app/request-adjust.ts. Never sent upstream. */
    reasoning: z.optional(openRouterReasoning),
    /** OpenRouter's `usage: {include}` (docs/openrouter.md §2): usage is always returned, so accepted and ignored. */
    usage: z.optional(z.object({ include: z.optional(z.boolean()) })),
    /** OpenRouter's message transforms (docs/openrouter.md §3): none is applied; a non-empty list is named in `x-modelmux-dropped-params`. */
    transforms: z.optional(z.array(z.string())),
    /** OpenRouter's `route: "fallback"`, which asked for the `models` behaviour; accepted, and implied by `models`. */
    route: z.nullish(z.literal('fallback')),
    /**
     * OpenRouter's provider preferences (openai/provider-preferences.ts; what they do:
     * routing/attempt-plan.ts). A routing field: never sent upstream.
     */
    provider: z.nullish(providerPreferences),
  })
  .check(
    z.superRefine((req, ctx) => {
      if (req.stream_options != null && req.stream !== true) {
        // OpenAI answers 400 here too: stream_options is only valid for streamed requests (providers.md §1.1).
        ctx.addIssue({ code: 'custom', path: ['stream_options'], message: 'stream_options is only allowed when stream is true' });
      }
      if (req.google !== undefined && req.extra_body !== undefined && req.google.cached_content !== req.extra_body.google.cached_content) {
        ctx.addIssue({
          code: 'custom',
          path: ['google', 'cached_content'],
          message: 'google.cached_content and extra_body.google.cached_content name different caches: give one',
        });
      }
    }),
  );

/** A validated chat-completion request; `temperature` is always set (0.7 when absent or null). */
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

/** The Gemini context cache the request names (`google.cached_content` or `extra_body.google.cached_content`), if any. */
export function geminiCachedContent(req: Pick<ChatCompletionRequest, 'google' | 'extra_body'>): string | undefined {
  return req.google?.cached_content ?? req.extra_body?.google.cached_content;
}

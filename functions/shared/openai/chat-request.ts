import * as z from 'zod';
import { chatMessage, textPart } from './chat-messages';
import { chatTool, toolChoice } from './chat-tools';

export { chatMessage, userContentPart, type ChatMessage, type UserContentPart } from './chat-messages';

export type { ChatTool, CustomToolCall, FunctionTool, MessageToolCall, ToolCall, ToolChoice } from './chat-tools';

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
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

const positiveInt = z.number().int().positive();

/** The longest `models` fallback list accepted: OpenRouter documented "up to 3"; a few more, so one request cannot fan out far. */
export const MAX_REQUEST_FALLBACKS = 8;

/** Fields of the request that steer modelmux's routing and are never passed to an upstream. */
export const ROUTING_FIELDS = ['models', 'route'] as const;
/**
 * `seed` is an int64 in the description. JSON numbers past 2^53 reach us as doubles, so the bounds
 * are the doubles nearest ±2^63, as any JSON parser (OpenAI's description included) reads them.
 */
const int64 = z.number().refine(Number.isInteger, 'expected an integer').min(-(2 ** 63)).max(2 ** 63);
const moderationMode = z.object({ mode: z.enum(['score', 'block']) });
const functionParameters = z.record(z.string(), z.unknown());

/** `audio`: output audio settings (`voice` a built-in name or `{id}` of a custom voice). */
const audioOutput = z.object({
  voice: z.union([z.string(), z.strictObject({ id: z.string() })]),
  format: z.enum(['wav', 'aac', 'mp3', 'flac', 'opus', 'pcm16']),
});

/** `web_search_options` (OpenAI's search models). */
const webSearchOptions = z.object({
  user_location: z
    .object({
      type: z.literal('approximate'),
      approximate: z.object({ country: z.string().optional(), region: z.string().optional(), city: z.string().optional(), timezone: z.string().optional() }),
    })
    .nullish(),
  search_context_size: z.enum(['low', 'medium', 'high']).optional(),
});

/** `prediction`: predicted output (`PredictionContent`). */
const prediction = z.object({ type: z.literal('content'), content: z.union([z.string(), z.array(textPart).min(1)]) });

/** The deprecated `functions` / `function_call` pair (`ChatCompletionFunctions`). */
const legacyFunction = z.object({ name: z.string(), description: z.string().optional(), parameters: functionParameters.optional() });
const legacyFunctionCall = z.union([z.enum(['none', 'auto']), z.object({ name: z.string() })]);

/** The validated chat-completion request (defaults applied). */
export const chatCompletionRequest = z
  .strictObject({
    model: z.string().min(1),
    messages: z.array(chatMessage).min(1),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .nullish()
      .transform((t) => t ?? DEFAULT_TEMPERATURE),
    max_tokens: positiveInt.nullish(),
    max_completion_tokens: positiveInt.nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    stop: z.union([z.string(), z.array(z.string()).min(1).max(4)]).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    logit_bias: z.record(z.string(), z.number().int()).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    seed: int64.nullish(),
    user: z.string().optional(),
    safety_identifier: z.string().max(64).nullish(),
    prompt_cache_key: z.string().nullish(),
    prompt_cache_retention: z.enum(['in_memory', '24h']).nullish(),
    prompt_cache_options: z.object({ mode: z.enum(['implicit', 'explicit']).optional(), ttl: z.literal('30m').optional() }).optional(),
    /** Moderated completions (OpenAI only; openai-node 6.x `ChatCompletionCreateParams.Moderation`). */
    moderation: z
      .object({
        model: z.string(),
        policy: z.object({ input: moderationMode.nullish(), output: moderationMode.nullish() }).nullish(),
      })
      .nullish(),
    tools: z.array(chatTool).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
    functions: z.array(legacyFunction).min(1).max(128).optional(),
    function_call: legacyFunctionCall.optional(),
    response_format: responseFormat.optional(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    store: z.boolean().nullish(),
    service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast']).nullish(),
    modalities: z.array(z.enum(['text', 'audio'])).nullish(),
    audio: audioOutput.nullish(),
    prediction: prediction.nullish(),
    verbosity: z.enum(['low', 'medium', 'high']).nullish(),
    web_search_options: webSearchOptions.optional(),
    /**
     * OpenRouter's per-request fallback list: catalogue chat models tried, in order, after the
     * model's own targets (routing/attempt-plan.ts requestFallbacks). Routing fields: never sent upstream.
     */
    models: z.array(z.string().min(1)).max(MAX_REQUEST_FALLBACKS).nullish(),
    /** OpenRouter's `route: "fallback"`, which asked for the `models` behaviour; accepted, and implied by `models`. */
    route: z.literal('fallback').nullish(),
  })
  .superRefine((req, ctx) => {
    if (req.stream_options != null && req.stream !== true) {
      // OpenAI answers 400 here too: stream_options is only valid for streamed requests (providers.md §1.1).
      ctx.addIssue({ code: 'custom', path: ['stream_options'], message: 'stream_options is only allowed when stream is true' });
    }
  });

/** A validated chat-completion request; `temperature` is always set (0.7 when absent or null). */
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

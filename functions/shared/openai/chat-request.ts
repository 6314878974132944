import * as z from 'zod';
import { chatTool, messageToolCall, toolChoice } from './chat-tools';

export type { ChatTool, CustomToolCall, FunctionTool, MessageToolCall, ToolCall, ToolChoice } from './chat-tools';

/**
 * The client's chat-completion request, validated strictly: every field of openai-node 6.x
 * `ChatCompletionCreateParams` is listed, with the SDK's own nullability (providers.md §1.1–1.2), so
 * whatever the SDK lets a caller type is accepted; an unknown field is a 400, as OpenAI answers
 * "Unrecognized request argument supplied". Fields modelmux does not interpret are kept and passed
 * through to OpenAI-compatible upstreams. Tools and tool calls: chat-tools.ts.
 *
 * Spec defaults: `temperature` is 0.7 when absent or null (spec §2, "Chat completion request"; the
 * SDK types it `number | null`, and null means "the default" there as in OpenAI's API).
 */

/** Spec §2: temperature defaults to 0.7 when the request leaves it out. */
export const DEFAULT_TEMPERATURE = 0.7;

/**
 * An explicit prompt-cache breakpoint on a content part (openai-node 6.x `PromptCacheBreakpoint`,
 * with `prompt_cache_options`): meaningful to OpenAI only; other adapters ignore it, as a cache hint
 * changes cost, not the answer.
 */
const cacheBreakpoint = z.strictObject({ mode: z.literal('explicit') }).optional();

const textPart = z.strictObject({ type: z.literal('text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint });
const imagePart = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const audioPart = z.strictObject({
  type: z.literal('input_audio'),
  input_audio: z.strictObject({ data: z.string(), format: z.string() }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const filePart = z.strictObject({
  type: z.literal('file'),
  file: z.strictObject({ file_id: z.string().optional(), file_data: z.string().optional(), filename: z.string().optional() }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const refusalPart = z.strictObject({ type: z.literal('refusal'), refusal: z.string() });

/** A user message's content part (text, image, audio or file). */
export const userContentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);
export type UserContentPart = z.infer<typeof userContentPart>;

const systemMessage = z.strictObject({
  role: z.enum(['system', 'developer']),
  content: z.union([z.string(), z.array(textPart)]),
  name: z.string().optional(),
});
const userMessage = z.strictObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(userContentPart)]),
  name: z.string().optional(),
});
const assistantMessage = z.strictObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(z.union([textPart, refusalPart]))]).nullish(),
  refusal: z.string().nullish(),
  name: z.string().optional(),
  tool_calls: z.array(messageToolCall).optional(),
  function_call: z.strictObject({ name: z.string(), arguments: z.string() }).nullish(),
  audio: z.strictObject({ id: z.string() }).nullish(),
  /** DeepSeek / modelmux reasoning output echoed back by clients; adapters decide whether to forward it. */
  reasoning_content: z.string().nullish(),
});
const toolMessage = z.strictObject({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  content: z.union([z.string(), z.array(textPart)]),
});
const functionMessage = z.strictObject({ role: z.literal('function'), name: z.string(), content: z.string().nullable() });

/** One message of the conversation (roles: system, developer, user, assistant, tool, function). */
export const chatMessage = z.discriminatedUnion('role', [
  systemMessage,
  userMessage,
  assistantMessage,
  toolMessage,
  functionMessage,
]);
export type ChatMessage = z.infer<typeof chatMessage>;

const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.strictObject({
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
const moderationMode = z.strictObject({ mode: z.enum(['score', 'block']) });

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
    stream_options: z
      .strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() })
      .nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    logit_bias: z.record(z.string(), z.number()).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    seed: z.number().int().nullish(),
    user: z.string().optional(),
    safety_identifier: z.string().nullish(),
    prompt_cache_key: z.string().nullish(),
    prompt_cache_retention: z.string().nullish(),
    prompt_cache_options: z.strictObject({ mode: z.enum(['implicit', 'explicit']).optional(), ttl: z.string().optional() }).optional(),
    /** Moderated completions (OpenAI only; openai-node 6.x `ChatCompletionCreateParams.Moderation`). */
    moderation: z
      .strictObject({
        model: z.string(),
        policy: z.strictObject({ input: moderationMode.nullish(), output: moderationMode.nullish() }).nullish(),
      })
      .nullish(),
    tools: z.array(chatTool).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
    functions: z.array(z.unknown()).optional(),
    function_call: z.unknown().optional(),
    response_format: responseFormat.optional(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    store: z.boolean().nullish(),
    service_tier: z.string().nullish(),
    modalities: z.array(z.string()).nullish(),
    audio: z.unknown().optional(),
    prediction: z.unknown().optional(),
    verbosity: z.enum(['low', 'medium', 'high']).nullish(),
    web_search_options: z.unknown().optional(),
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

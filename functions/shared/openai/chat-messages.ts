import * as z from '../validation/zod';
import { cacheControl, messageToolCall } from './chat-tools';

/**
 * The messages of a chat request and their content parts, as OpenAI's published OpenAPI description
 * types them (`ChatCompletionRequestMessage` and its parts; vendored under
 * test/fixtures/openai/openapi/, where test/openai/openapi-requests.test.ts checks every generated
 * message is accepted or refused as the description says).
 *
 * Types, enums, required fields and non-empty part arrays are checked. A property the description
 * does not name is accepted and dropped here, before any adapter sees it: the description does not
 * forbid such properties below the top level, and OpenAI's API ignores them — LangChain sends `name`
 * on tool messages, clients echo the `annotations: []` (and openai-node's `parsed`) of an answer
 * back on its assistant message, agent frameworks attach `metadata` to messages. None of
 * them is an instruction a model could follow, so dropping them changes no answer.
 */

/**
 * An explicit prompt-cache breakpoint on a content part (`PromptCacheBreakpointParam`): meaningful to
 * OpenAI only; other adapters ignore it, as a cache hint changes cost, not the answer.
 */
const cacheBreakpoint = z.optional(z.strictObject({ mode: z.literal('explicit') }));

/** `format: uri` as the description types `image_url.url`: a scheme, then the rest (https:, data:). */
const URI = /^[a-z][a-z0-9+.-]*:\S/i;

/** Parts are non-empty arrays wherever the description allows an array (`minItems: 1`). */
const nonEmpty = <T extends z.ZodMiniType>(part: T) => z.array(part).check(z.minLength(1));

export const textPart = z.object({ type: z.literal('text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint, cache_control: cacheControl });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().check(z.regex(URI, 'expected a URL (https: or data:)')), detail: z.optional(z.enum(['auto', 'low', 'high'])) }),
  prompt_cache_breakpoint: cacheBreakpoint,
  cache_control: cacheControl,
});
const audioPart = z.object({
  type: z.literal('input_audio'),
  input_audio: z.object({ data: z.string(), format: z.enum(['wav', 'mp3']) }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const filePart = z.object({
  type: z.literal('file'),
  file: z.object({ file_id: z.optional(z.string()), file_data: z.optional(z.string()), filename: z.optional(z.string()) }),
  prompt_cache_breakpoint: cacheBreakpoint,
  cache_control: cacheControl,
});
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });

/** A user message's content part (text, image, audio or file). */
export const userContentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);
export type UserContentPart = z.infer<typeof userContentPart>;

const systemMessage = z.object({
  role: z.enum(['system', 'developer']),
  content: z.union([z.string(), nonEmpty(textPart)]),
  name: z.optional(z.string()),
  /** A breakpoint on the message itself (opencode, @ai-sdk/openai-compatible): its last block's (providers/anthropic/messages.ts). */
  cache_control: cacheControl,
});
const userMessage = z.object({
  role: z.literal('user'),
  content: z.union([z.string(), nonEmpty(userContentPart)]),
  name: z.optional(z.string()),
  cache_control: cacheControl,
});
const assistantMessage = z.object({
  role: z.literal('assistant'),
  content: z.nullish(z.union([z.string(), nonEmpty(z.discriminatedUnion('type', [textPart, refusalPart]))])),
  refusal: z.nullish(z.string()),
  name: z.optional(z.string()),
  tool_calls: z.optional(z.array(messageToolCall)),
  function_call: z.nullish(z.object({ name: z.string(), arguments: z.string() })),
  audio: z.nullish(z.object({ id: z.string() })),
  /** DeepSeek / modelmux reasoning output echoed back by clients; adapters decide whether to forward it. */
  reasoning_content: z.nullish(z.string()),
  cache_control: cacheControl,
});
const toolMessage = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  content: z.union([z.string(), nonEmpty(textPart)]),
  cache_control: cacheControl,
});
const functionMessage = z.object({ role: z.literal('function'), name: z.string(), content: z.nullable(z.string()) });

/** One message of the conversation (roles: system, developer, user, assistant, tool, function). */
export const chatMessage = z.discriminatedUnion('role', [systemMessage, userMessage, assistantMessage, toolMessage, functionMessage]);
export type ChatMessage = z.infer<typeof chatMessage>;

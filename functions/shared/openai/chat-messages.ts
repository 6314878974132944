import * as z from 'zod';
import { messageToolCall } from './chat-tools';

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
 * back on its assistant message, agent frameworks attach `metadata` to messages (issue 13). None of
 * them is an instruction a model could follow, so dropping them changes no answer.
 */

/**
 * An explicit prompt-cache breakpoint on a content part (`PromptCacheBreakpointParam`): meaningful to
 * OpenAI only; other adapters ignore it, as a cache hint changes cost, not the answer.
 */
const cacheBreakpoint = z.strictObject({ mode: z.literal('explicit') }).optional();

/** `format: uri` as the description types `image_url.url`: a scheme, then the rest (https:, data:). */
const URI = /^[a-z][a-z0-9+.-]*:\S/i;

/** Parts are non-empty arrays wherever the description allows an array (`minItems: 1`). */
const nonEmpty = <T extends z.ZodType>(part: T) => z.array(part).min(1);

export const textPart = z.object({ type: z.literal('text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().regex(URI, 'expected a URL (https: or data:)'), detail: z.enum(['auto', 'low', 'high']).optional() }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const audioPart = z.object({
  type: z.literal('input_audio'),
  input_audio: z.object({ data: z.string(), format: z.enum(['wav', 'mp3']) }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const filePart = z.object({
  type: z.literal('file'),
  file: z.object({ file_id: z.string().optional(), file_data: z.string().optional(), filename: z.string().optional() }),
  prompt_cache_breakpoint: cacheBreakpoint,
});
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });

/** A user message's content part (text, image, audio or file). */
export const userContentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);
export type UserContentPart = z.infer<typeof userContentPart>;

const systemMessage = z.object({
  role: z.enum(['system', 'developer']),
  content: z.union([z.string(), nonEmpty(textPart)]),
  name: z.string().optional(),
});
const userMessage = z.object({
  role: z.literal('user'),
  content: z.union([z.string(), nonEmpty(userContentPart)]),
  name: z.string().optional(),
});
const assistantMessage = z.object({
  role: z.literal('assistant'),
  content: z.union([z.string(), nonEmpty(z.discriminatedUnion('type', [textPart, refusalPart]))]).nullish(),
  refusal: z.string().nullish(),
  name: z.string().optional(),
  tool_calls: z.array(messageToolCall).optional(),
  function_call: z.object({ name: z.string(), arguments: z.string() }).nullish(),
  audio: z.object({ id: z.string() }).nullish(),
  /** DeepSeek / modelmux reasoning output echoed back by clients; adapters decide whether to forward it. */
  reasoning_content: z.string().nullish(),
});
const toolMessage = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  content: z.union([z.string(), nonEmpty(textPart)]),
});
const functionMessage = z.object({ role: z.literal('function'), name: z.string(), content: z.string().nullable() });

/** One message of the conversation (roles: system, developer, user, assistant, tool, function). */
export const chatMessage = z.discriminatedUnion('role', [systemMessage, userMessage, assistantMessage, toolMessage, functionMessage]);
export type ChatMessage = z.infer<typeof chatMessage>;

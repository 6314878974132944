import * as z from '../validation/zod';

/**
 * The tools of a chat request and the tool calls of its history, typed as OpenAI's OpenAPI
 * description and openai-node 6.x type them (`ChatCompletionTool`, `ChatCompletionToolChoiceOption`,
 * `ChatCompletionMessageToolCall`; providers.md §1.1–1.2). As in the rest of the request below its top
 * level, a property the description does not name is dropped (chat-request.ts), except in a custom
 * tool's `format`, which the description closes (`additionalProperties: false`):
 *
 * - `tools[]`: `function` tools, and `custom` tools (free-text or grammar-constrained input);
 * - `tool_choice`: `none` | `auto` | `required`, a named function, a named custom tool, or
 *   `allowed_tools` (a subset of the tools, `auto` or `required`);
 * - an assistant message's `tool_calls[]`: `function` calls, and `custom` calls (`{name, input}`).
 *
 * Every form is accepted here, so a request the openai SDK can type is never refused as an unknown
 * argument. Custom tools and `allowed_tools` are OpenAI's own: the OpenAI target gets them as sent,
 * other targets answer a 400 `unsupported_parameter` naming them (providers/unsupported-parameters.ts).
 */

/**
 * An Anthropic prompt-cache breakpoint on a content part or a tool, in the shape OpenRouter accepts on
 * the OpenAI format (`{"type":"ephemeral","ttl":"5m"|"1h"}`; docs/prices.md): passed to Anthropic,
 * dropped for every other provider (which caches automatically, or not at all).
 */
export const cacheControl = z.optional(z.object({ type: z.literal('ephemeral'), ttl: z.optional(z.enum(['5m', '1h'])) }));

export const functionTool = z.object({
  type: z.literal('function'),
  cache_control: cacheControl,
  function: z.object({
    name: z.string().check(z.minLength(1), z.maxLength(64)),
    description: z.optional(z.string()),
    parameters: z.optional(z.record(z.string(), z.unknown())),
    strict: z.nullish(z.boolean()),
  }),
});
export type FunctionTool = z.infer<typeof functionTool>;

const customToolFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({
    type: z.literal('grammar'),
    grammar: z.object({ definition: z.string(), syntax: z.enum(['lark', 'regex']) }),
  }),
]);

const customTool = z.object({
  type: z.literal('custom'),
  custom: z.object({ name: z.string().check(z.minLength(1), z.maxLength(64)), description: z.optional(z.string()), format: z.optional(customToolFormat) }),
});

/** One entry of `tools`: a function tool or a custom tool. */
export const chatTool = z.discriminatedUnion('type', [functionTool, customTool]);

/** `tool_choice`. */
export const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
  z.object({ type: z.literal('custom'), custom: z.object({ name: z.string() }) }),
  z.object({
    type: z.literal('allowed_tools'),
    // The SDK types the listed tools as open objects (`{ [key: string]: unknown }`).
    allowed_tools: z.object({ mode: z.enum(['auto', 'required']), tools: z.array(z.record(z.string(), z.unknown())) }),
  }),
]);
export type ToolChoice = z.infer<typeof toolChoice>;

/**
 * Gemini's thought signature on a tool call, in the place Google's own OpenAI-compatible layer puts
 * it: `extra_content.google.thought_signature` (providers.md §3.2: it must come back on later turns of
 * a Gemini 2.5/3 tool loop). modelmux returns it on Gemini tool calls and accepts exactly this field
 * when a client echoes the assistant message back.
 */
const toolCallExtraContent = z.object({ google: z.optional(z.object({ thought_signature: z.string() })) });

/** A function tool call, as the model returns it and the client echoes it back. */
export const functionToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
  extra_content: z.optional(toolCallExtraContent),
  /** A breakpoint on the call (opencode): its Anthropic `tool_use` block's. */
  cache_control: cacheControl,
});
export type ToolCall = z.infer<typeof functionToolCall>;

/** A custom tool call (OpenAI only): the tool's name and its free-text input. */
export const customToolCall = z.object({
  id: z.string(),
  type: z.literal('custom'),
  custom: z.object({ name: z.string(), input: z.string() }),
});

/** One entry of an assistant message's `tool_calls`. */
export const messageToolCall = z.discriminatedUnion('type', [functionToolCall, customToolCall]);
export type MessageToolCall = z.infer<typeof messageToolCall>;

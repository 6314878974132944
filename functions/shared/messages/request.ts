import * as z from '../validation/zod';

/**
 * The Anthropic Messages API request (`POST /v1/messages`, `anthropic-version: 2023-06-01`; source:
 * the official SDK's `MessageCreateParams`, docs/anthropic-messages.md). Validated only as far as
 * modelmux must read it — the model, the output limit, the turns and their block types, the fields it
 * translates — and otherwise kept as sent (loose objects): a Claude target receives the body
 * unchanged, new fields and block types included, and Anthropic itself judges them.
 */

/** One content block: its `type`, everything else kept. */
export const contentBlock = z.looseObject({ type: z.string() });
export type ContentBlock = z.infer<typeof contentBlock>;

const blocks = z.array(contentBlock);

/**
 * One turn: `user` or `assistant`, content a string or blocks; or a `system` turn among them, which
 * Claude Code 2.1 sends for a model it does not know (observed: its environment notes as a
 * `{"role":"system"}` message after the first user turn, with the `mid-conversation-tool-changes` beta).
 */
export const messageParam = z.looseObject({ role: z.enum(['user', 'assistant', 'system']), content: z.union([z.string(), blocks]) });
export type MessageParam = z.infer<typeof messageParam>;

/** A tool: a client tool (`input_schema`) or one of Anthropic's versioned server/client tools (`type`). */
export const toolParam = z.looseObject({
  name: z.string(),
  type: z.optional(z.nullable(z.string())),
  description: z.optional(z.string()),
  input_schema: z.optional(z.record(z.string(), z.unknown())),
});

/** `tool_choice`: `auto`, `any`, `tool` (with `name`) or `none`. */
export const toolChoiceParam = z.looseObject({
  type: z.enum(['auto', 'any', 'tool', 'none']),
  name: z.optional(z.string()),
  disable_parallel_tool_use: z.optional(z.boolean()),
});

const fields = {
  model: z.string().check(z.minLength(1)),
  messages: z.array(messageParam),
  system: z.optional(z.union([z.string(), blocks])),
  tools: z.optional(z.array(toolParam)),
  tool_choice: z.optional(toolChoiceParam),
  thinking: z.optional(z.looseObject({ type: z.string(), budget_tokens: z.optional(z.number().check(z.int())) })),
};

/** `POST /v1/messages`: `max_tokens` required (tokens), sampling in Anthropic's ranges. */
export const messagesRequest = z.looseObject({
  ...fields,
  max_tokens: z.number().check(z.int(), z.gte(1)),
  stream: z.optional(z.boolean()),
  temperature: z.optional(z.number().check(z.gte(0), z.lte(1))),
  top_p: z.optional(z.number().check(z.gte(0), z.lte(1))),
  top_k: z.optional(z.number().check(z.int(), z.gte(0))),
  stop_sequences: z.optional(z.array(z.string())),
  metadata: z.optional(z.looseObject({ user_id: z.optional(z.nullable(z.string())) })),
});
export type MessagesRequest = z.infer<typeof messagesRequest>;

/** `POST /v1/messages/count_tokens`: what the prompt is made of (no output limit, no sampling). */
export const countTokensRequest = z.looseObject(fields);
export type CountTokensRequest = z.infer<typeof countTokensRequest>;

/** The protocol headers forwarded unchanged to an Anthropic upstream. */
export const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/** The forwarded headers present on a request (lower-case names). */
export function forwardedHeaders(headers: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

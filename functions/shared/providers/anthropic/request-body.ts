/**
 * The Anthropic Messages request body modelmux sends (`POST /v1/messages`, `anthropic-version:
 * 2023-06-01`). Only the fields the adapter writes are typed. Source: Anthropic Messages API,
 * providers.md §2.2–2.4.
 */

/**
 * A prompt-cache breakpoint: the prefix up to and including this block is cached, for 5 minutes
 * (default) or 1 hour (docs/prices.md; platform.claude.com/docs/en/build-with-claude/prompt-caching).
 */
export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** A text block (`text` must be non-empty upstream). */
export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
}

/** An image, inline (base64 with its media type) or by URL (providers.md §2.3). */
export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: AnthropicCacheControl;
}

/** A PDF (or other document) given inline as base64 (providers.md §2.3). */
export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: string; data: string };
  cache_control?: AnthropicCacheControl;
}

/** A tool call the assistant made (assistant turns only); `input` is a JSON object. */
export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

/** The result of one tool call (user turns only; must come before any text of that turn). */
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | AnthropicTextBlock[];
  cache_control?: AnthropicCacheControl;
}

/** Any block of a user or assistant turn that modelmux produces. */
export type AnthropicContentBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

/** One turn; modelmux sends roles alternating, starting with `user` (there is no system role). */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlock[];
}

/** A client tool definition; `input_schema` is a JSON Schema object. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

/** `tool_choice`; `none` takes no `disable_parallel_tool_use` (Anthropic SDK `ToolChoiceNone`). */
export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** Extended thinking; `budget_tokens` ≥ 1024 and < `max_tokens` (tokens). */
export interface AnthropicThinking {
  type: 'enabled';
  budget_tokens: number;
}

/** The whole request body. */
export interface AnthropicRequestBody {
  model: string;
  /** Required upstream; includes thinking tokens (tokens). */
  max_tokens: number;
  messages: AnthropicMessage[];
  /** Blocks when a system text carries a cache breakpoint, else one string. */
  system?: string | AnthropicTextBlock[];
  /** Automatic caching: one breakpoint Anthropic places at the end of the cacheable prefix. */
  cache_control?: AnthropicCacheControl;
  /** 0–1 upstream (OpenAI allows 0–2). */
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  metadata?: { user_id: string };
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinking;
  stream: true;
}

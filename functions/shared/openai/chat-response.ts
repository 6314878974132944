/**
 * What modelmux sends back for chat: OpenAI's `chat.completion` and `chat.completion.chunk` objects
 * (source: openai-node `ChatCompletion`, `ChatCompletionChunk`; providers.md §1.3–1.4). Adapters produce
 * the provider-neutral parts ({@link CompletionParts}, {@link ChunkParts}); the router stamps `id`,
 * `object`, `created` and `model` (always the public name the client asked for).
 */
import type { MessageToolCall, ToolCall } from './chat-tools';
import { cacheWriteTokens, type TokenUsage } from '../usage/token-usage';

/** OpenAI `finish_reason` values. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

/**
 * Token counts of one request as the client sees them (tokens). `total_tokens` = prompt + completion;
 * `prompt_tokens` is the whole prompt, of which `cached_tokens` were read from the provider's prompt
 * cache and `cache_write_tokens` written to it (OpenRouter's names; both 5-minute and 1-hour writes).
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
  /**
   * What this request was billed, USD (OpenRouter's `usage.cost`): the credit charged by its ledger
   * entry (nano-USD / 1e9), 0 when free tokens paid it all. Set by modelmux, never by an upstream.
   */
  cost?: number;
}

/** The assistant message of a buffered choice. */
export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  /** Always present, null unless the model refused (openai-node 6.x `ChatCompletionMessage.refusal: string | null`). */
  refusal: string | null;
  /** Function calls; OpenAI custom tool calls only from the OpenAI target (which alone takes custom tools). */
  tool_calls?: MessageToolCall[];
  /** Reasoning text (DeepSeek convention), when the model exposes it. */
  reasoning_content?: string;
}

export interface CompletionChoice {
  index: number;
  message: AssistantMessage;
  /**
   * OpenAI `{content: ChatCompletionTokenLogprob[] | null, refusal: … | null}` when the client asked
   * (`logprobs: true`), else null. Passed through from OpenAI-compatible upstreams as received;
   * targets without log probabilities refuse the request instead (providers/unsupported-parameters.ts).
   */
  logprobs: unknown;
  finish_reason: FinishReason;
}

/** Provider-neutral result of a buffered call, before the router stamps identity fields. */
export interface CompletionParts {
  choices: CompletionChoice[];
  /** Undefined when the upstream reported none (the router then estimates and marks it). */
  usage: TokenUsage | undefined;
  /** The upstream's, when it sent one; never null on the wire (absent instead, as OpenAI's description allows). */
  system_fingerprint?: string | null;
  /** Every upstream event of a native answer, in order (see {@link ChunkParts.upstreamEvent}); kept only when asked. */
  upstreamEvents?: UpstreamEventText[];
}

/** One upstream SSE event as received: its `event:` field and its `data:` text. */
export interface UpstreamEventText {
  event: string | undefined;
  data: string;
}

/** The full `chat.completion` object (stream false). */
export interface ChatCompletion extends Omit<CompletionParts, 'usage'> {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  usage: Usage;
}

/** A streamed tool-call fragment (first one carries id/type/name; later ones argument pieces). */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function' | 'custom';
  function?: { name?: string; arguments?: string };
  /** An OpenAI custom tool call's name and input pieces (passed through from the OpenAI target). */
  custom?: { name?: string; input?: string };
  /** Gemini's thought signature, on the call's first fragment (see `ToolCall['extra_content']`). */
  extra_content?: ToolCall['extra_content'];
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ToolCallDelta[];
  reasoning_content?: string;
}

export interface ChunkChoice {
  index: number;
  delta: ChunkDelta;
  /** This chunk's token log probabilities (same shape as {@link CompletionChoice.logprobs}), as received. */
  logprobs?: unknown;
  finish_reason: FinishReason | null;
}

/** Provider-neutral streamed piece: choices, and/or the final usage. */
export interface ChunkParts {
  choices: ChunkChoice[];
  usage?: TokenUsage;
  /** The upstream's backend fingerprint, when its chunks carry one (OpenAI), for an assembled answer. */
  system_fingerprint?: string;
  /**
   * The upstream event this part came from, verbatim, for an API surface that speaks the upstream's
   * own protocol (the Anthropic adapter sets it on a part of its own, `choices: []`, after the parts
   * translated from that event). Surfaces that translate ignore it.
   */
  upstreamEvent?: UpstreamEventText;
}

/** The full `chat.completion.chunk` object as written to the client. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
}

/**
 * The client's `usage` of a normalised {@link TokenUsage}: `total_tokens` derived, so it can never
 * disagree with its parts; the cache and reasoning details always present (0 when none), as OpenAI sends them.
 */
export function openAiUsage(t: TokenUsage): Usage {
  return {
    prompt_tokens: t.prompt,
    completion_tokens: t.completion,
    total_tokens: t.prompt + t.completion,
    prompt_tokens_details: { cached_tokens: t.cachedRead, cache_write_tokens: cacheWriteTokens(t) },
    completion_tokens_details: { reasoning_tokens: t.reasoning },
  };
}

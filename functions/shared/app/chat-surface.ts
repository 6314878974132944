import type { ChatCompletion, ChunkParts, CompletionParts, Usage } from '../openai/chat-response';
import { toErrorBody, type GatewayError } from '../errors/gateway-errors';
import type { SseFrame } from '../http/types';
import type { RoutedBase } from '../routing/attempt-contract';
import { DONE_FRAME, dataFrame, errorFrame } from '../sse/encode';

/**
 * An API surface over the one chat core (app/chat-completions.ts `runChatExchange`): how the answer
 * the core produced — typed parts, never another surface's wire text — is written in this API's
 * shape. Chat Completions is {@link chatSurface}; the Anthropic Messages API (app/messages.ts) and the
 * Responses API (app/responses.ts) bring their own. Admission, routing, fallback, hedging, breakers,
 * the hold, the ledger and the settle are the core's, the same for every surface.
 */
export interface ChatSurface {
  /**
   * The buffered answer's body. `completion` is the core's `chat.completion` (usage with `cost`),
   * `parts` what the router assembled (with the upstream's own events when it answered natively).
   */
  present(completion: ChatCompletion, parts: CompletionParts): unknown;
  /** Awaited with the presented body before it is sent (the Responses API stores it there). */
  beforeBody?(body: unknown): Promise<void>;
  /** The body of an error after the status was committed (a held buffered answer, app/held-json.ts). */
  errorBody(err: GatewayError): unknown;
  /** A fresh encoder for one stream. */
  streamEncoder(stream: StreamMeta): StreamEncoder;
}

/** What a stream encoder knows about its stream. */
export interface StreamMeta {
  /** Our id for this answer (`chatcmpl-<request id>`). */
  id: string;
  /** Unix seconds, the same on every event. */
  created: number;
  /** The model name the client asked for. */
  model: string;
  /** The routed outcome, absent when no attempt answered (only {@link StreamEncoder.failed} is then called). */
  outcome: RoutedBase | undefined;
}

/**
 * Writes one stream: `parts` for each part the core produced, in order; then `complete` once, after
 * a finished answer, or `failed` once, after a failure (the status is already 200). Frames are
 * wire-ready SSE text.
 */
export interface StreamEncoder {
  /** True when `complete` needs the answer's final usage (which the core then prices first). */
  readonly wantsFinalUsage: boolean;
  parts(parts: ChunkParts): SseFrame[];
  /**
   * @param usage the final usage with `cost` (USD), when {@link wantsFinalUsage}. May wait (the
   *   Responses API stores the response before its last event).
   */
  complete(usage: Usage | undefined): SseFrame[] | Promise<SseFrame[]>;
  failed(err: GatewayError): SseFrame[] | Promise<SseFrame[]>;
}

/**
 * `POST /v1/chat/completions`: the completion as is; chunks as `data:` frames, the usage chunk only
 * when the client asked (`stream_options.include_usage`), `[DONE]` after a finished answer; OpenAI's
 * error body, and its error frame mid-stream (sse/encode.ts).
 */
export function chatSurface(includeUsage: boolean): ChatSurface {
  return {
    present: (completion) => completion,
    errorBody: (err) => toErrorBody(err),
    streamEncoder: ({ id, created, model }) => ({
      wantsFinalUsage: includeUsage,
      parts(parts) {
        if (parts.choices.length === 0) return [];
        return [dataFrame(includeUsage ? { id, object: 'chat.completion.chunk', created, model, choices: parts.choices, usage: null } : { id, object: 'chat.completion.chunk', created, model, choices: parts.choices })];
      },
      complete(usage) {
        return usage === undefined ? [DONE_FRAME] : [dataFrame({ id, object: 'chat.completion.chunk', created, model, choices: [], usage }), DONE_FRAME];
      },
      failed: (err) => [errorFrame(err)],
    }),
  };
}

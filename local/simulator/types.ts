/**
 * Public types of the upstream simulator, and the shapes its modules pass each other (a routed call,
 * a provider-neutral problem).
 */
import type { ProviderName } from '../../functions/shared/providers/manifest.js';
import type { Route } from './routes.js';

// Public types of the upstream simulator. The simulator is a loopback HTTP server that speaks each
// upstream provider's own wire format (providers.md §1-6) so the gateway can run and be tested
// offline, with faults injected on demand.
/**
 * Every upstream the simulator impersonates: each provider of the manifest, by the gateway's own name,
 * under its own URL prefix (see `routes.ts`). Only the endpoints the gateway's adapters call are served.
 */
export type SimProvider = ProviderName;

/** Options of {@link startSimulator}. */
export interface SimulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1` (never exposed beyond loopback by default). */
  host?: string;
  /** Gap between streamed events, ms. Default 0. */
  chunkDelayMs?: number;
  /** Target length of a plain reply, in words (= completion tokens). Default 12. */
  replyWords?: number;
  /** Strict keys: only these upstream keys are accepted (any other gets the provider's bad-key answer). Default: any key but `bad-key`. */
  acceptedKeys?: readonly string[];
}

/** One request the simulator received, recorded in arrival order. */
export interface RecordedRequest {
  provider: SimProvider;
  method: string;
  /** Request target as received: path plus query string (e.g. `...:streamGenerateContent?alt=sse`). */
  path: string;
  /** Model id from the body, or from the URL for Gemini (without the `models/` prefix). */
  model: string | undefined;
  stream: boolean;
  /** Lower-case header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text if it was not JSON; undefined when empty. */
  body: unknown;
  /** `Date.now()` when the request arrived, ms. */
  receivedAt: number;
  /** The client closed the connection before the simulator finished its response. */
  aborted: boolean;
  /** The simulator wrote its whole response. */
  completed: boolean;
  /** The injected fault that applied to this request, e.g. `status:529`, `hang`. */
  fault?: string;
}

/** Which requests a fault applies to; an omitted field matches anything. `model` is compared exactly. */
export interface FaultMatch {
  provider?: SimProvider;
  model?: string;
}

/**
 * An injected failure. "Chunks" are content-bearing stream events (reasoning, text, tool-call
 * pieces); preamble events such as OpenAI's role chunk or Anthropic's `message_start` do not count.
 * Stream-only faults applied to a buffered request act on the JSON body instead: the body is cut in
 * half before the reset or stall, and `error-event-after-chunks` becomes the provider's overload error.
 */
export type Fault =
  /** Error before headers, in the provider's own error shape (529 => Anthropic overloaded_error,
   * Gemini 503 => UNAVAILABLE, 429 => rate limit). MiniMax renders statuses that have a `base_resp`
   * code (400, 401, 402, 408, 429, 500, 504) as HTTP 200 with `base_resp.status_code != 0`. */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; retryAfterMs?: number }
  /** Read the request, never send headers, until the client gives up. */
  | { kind: 'hang' }
  /** Wait `delayMs` before the headers, then reply normally. */
  | { kind: 'slow-headers'; delayMs: number }
  /** Destroy the socket without writing anything. */
  | { kind: 'reset-before-headers' }
  /** Stream `chunks` content events, then destroy the socket. */
  | { kind: 'reset-after-chunks'; chunks: number }
  /** Stream `chunks` content events, then stay silent with the socket open. */
  | { kind: 'stall-after-chunks'; chunks: number }
  /** Buffered: 200 with an invalid JSON body. Stream: `chunks` good content events (default 1), then
   * one event whose JSON is cut short, then the stream ends (no terminator); `chunks: 0` cuts the
   * first content event itself, before any token (preamble events still go out whole). */
  | { kind: 'malformed'; chunks?: number }
  /** The provider's own 400 for a prompt over the model's context window (OpenAI
   * `context_length_exceeded`, DeepSeek's "maximum context length", Anthropic "prompt is too long",
   * Gemini INVALID_ARGUMENT "The input token count … exceeds …"; see `provider-errors.ts`). `limit` is
   * the window it names (default: the provider's usual window), `tokens` the prompt size it reports
   * (default `limit + 1`). */
  | { kind: 'context-length'; limit?: number; tokens?: number }
  /** DeepSeek's way of holding a busy connection (providers.md §4.5), forever: 200 headers at once,
   * then every `everyMs` a blank line (buffered) or a `: keep-alive` SSE comment (stream), never an
   * answer, until the client leaves. */
  | { kind: 'keep-alive'; everyMs: number }
  /** Stream `chunks` content events, then the provider's mid-stream error event, then the end. */
  | { kind: 'error-event-after-chunks'; chunks: number }
  /** The provider's own bad-key response (Gemini: 400 INVALID_ARGUMENT/API_KEY_INVALID; others 401). */
  | { kind: 'api-key-invalid' }
  /** A healthy but slow generation, for this request only: `everyMs` between stream events (whatever
   * the simulator's chunk delay) and a reply of `words` words (default: the simulator's `replyWords`).
   * A buffered request gets its body after about as long as the stream would take (everyMs × the
   * number of 1-2 word pieces). */
  | { kind: 'paced'; everyMs: number; words?: number };

/** A running simulator. */
export interface Simulator {
  /** e.g. `http://127.0.0.1:41234` (no trailing slash). */
  baseUrl: string;
  port: number;
  /** Per-provider base URLs, exactly what a client/gateway uses as its provider base URL. */
  urls: Record<SimProvider, string>;
  /** Every request received, in order (a live array: it grows as requests arrive). */
  requests: RecordedRequest[];
  /** Inject a fault for matching requests; `times` defaults to Infinity. The earliest-registered
   * matching fault with uses left applies. */
  setFault(match: FaultMatch, fault: Fault, opts?: { times?: number }): void;
  clearFaults(): void;
  /** Clear the request log and all faults. */
  reset(): void;
  /** Gap between streamed events for responses started from now on, ms. */
  setChunkDelay(ms: number): void;
  /** Stop listening, destroy open sockets, cancel timers. */
  close(): Promise<void>;
}

// One incoming provider request, as the per-provider handlers see it: already routed, body read and
// parsed, with the simulator-wide settings it needs to plan a reply.
export interface SimCall {
  provider: SimProvider;
  route: Route;
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON body; undefined when empty or not JSON (see `bodyInvalid`). */
  body: unknown;
  /** The body was present but not valid JSON. */
  bodyInvalid: boolean;
  /** 1-based arrival number; seeds ids so they are stable within a run. */
  seq: number;
  /** e.g. `req_sim_000001`; echoed in request-id headers and Anthropic bodies. */
  requestId: string;
  /** Target length of a plain reply, words. */
  replyWords: number;
  /** Response `created` timestamp, seconds. */
  created: number;
}

// A provider-neutral description of an error the simulator must answer with. Each provider module
// renders it in that provider's own error shape and status (providers.md §1.5, §2.7, §3.5, §4.5, §5.4).
export type Problem =
  /** Missing or rejected API key (the literal key `bad-key`, or the `api-key-invalid` fault). */
  | { kind: 'auth'; reason: 'missing' | 'invalid'; key?: string }
  /** Retired upstream ids (retired-models.ts) and ids containing `decommissioned` or `retired`. */
  | { kind: 'model-not-found'; model: string }
  | { kind: 'bad-request'; message: string; param?: string; code?: string }
  /** No such endpoint at this provider (e.g. DeepSeek embeddings). */
  | { kind: 'no-route'; method: string; path: string }
  /** The `context-length` fault: the prompt (`tokens`) is over the model's window (`limit`). */
  | { kind: 'context-length'; limit: number; tokens: number }
  /** The `status` fault. */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; retryAfterMs?: number };

/** `retry-after` / `retry-after-ms` headers for a status problem (both honoured by the OpenAI and
 * Anthropic SDKs, providers.md §1.6). */
export function retryHeaders(p: Problem): Record<string, string> {
  if (p.kind !== 'status') return {};
  const h: Record<string, string> = {};
  if (p.retryAfterSeconds !== undefined) h['retry-after'] = String(p.retryAfterSeconds);
  if (p.retryAfterMs !== undefined) h['retry-after-ms'] = String(p.retryAfterMs);
  return h;
}

/** Key as echoed in error messages: masked like the real providers do. */
export function maskKey(key: string | undefined): string {
  if (!key) return '***';
  return key.length <= 8 ? key : `${key.slice(0, 3)}…${key.slice(-4)}`;
}

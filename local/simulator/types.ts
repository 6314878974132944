/** Public types of the upstream simulator, and the shapes its modules pass each other. */
import type { ProviderName } from '../../functions/shared/providers/manifest.js';
import type { Route } from './routes.js';

/** Options of {@link startSimulator}. */
export interface SimulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1`. */
  host?: string;
  /** Gap between streamed events, ms. Default 0. */
  chunkDelayMs?: number;
  /** Target length of a plain reply, in words (= completion tokens). Default 12. */
  replyWords?: number;
  /** Strict keys: only these upstream keys are accepted. Default: any key but `bad-key`. */
  acceptedKeys?: readonly string[];
}

/** One request the simulator received, recorded in arrival order. */
export interface RecordedRequest {
  provider: ProviderName;
  method: string;
  /** Request target as received: path plus query string. */
  path: string;
  /** Model id from the body, or from the URL for Gemini (without `models/`). */
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
  /**
   * Stream events written so far (the preamble and a fault's partial event included), each counted when
   * its write has completed: a test waits on it (e.g. for the pause before the next event to begin).
   */
  eventsSent: number;
  /** The injected fault that applied, e.g. `status:529`, `hang`. */
  fault?: string;
}

/** Which requests a fault applies to; an omitted field matches anything. `model` is compared exactly. */
export interface FaultMatch {
  provider?: ProviderName;
  model?: string;
}

/**
 * An injected failure (README.md "Faults"). "Chunks" are content-bearing stream events; preamble events
 * (OpenAI's role chunk, Anthropic's `message_start`) do not count. On a buffered request the chunk
 * faults cut the JSON body in half, and `error-event-after-chunks` becomes the provider's overload error.
 */
export type Fault =
  /** Error before headers in the provider's shape; MiniMax answers 402/408/429/500/504 as HTTP 200. */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; retryAfterMs?: number }
  /** Read the request, never send headers, until the client gives up. */
  | { kind: 'hang' }
  | { kind: 'slow-headers'; delayMs: number }
  /** Destroy the socket without writing anything. */
  | { kind: 'reset-before-headers' }
  | { kind: 'reset-after-chunks'; chunks: number }
  /** `chunks` content events, then silence with the socket open. */
  | { kind: 'stall-after-chunks'; chunks: number }
  /** `chunks` good content events (default 1), one cut short, then the end (no terminator). */
  | { kind: 'malformed'; chunks?: number }
  /** The provider's 400 for a prompt over the window: `limit` (default the provider's usual window), `tokens` (default limit + 1). */
  | { kind: 'context-length'; limit?: number; tokens?: number }
  /** DeepSeek's busy wait, forever: 200 headers, then a blank line or `: keep-alive` every `everyMs`. */
  | { kind: 'keep-alive'; everyMs: number }
  /** `chunks` content events, then the provider's mid-stream error event. */
  | { kind: 'error-event-after-chunks'; chunks: number }
  /** The provider's own bad-key response. */
  | { kind: 'api-key-invalid' }
  /** A healthy, slow generation: `everyMs` between events and `words` words (a buffered body after as long). */
  | { kind: 'paced'; everyMs: number; words?: number };

/** A running simulator. */
export interface Simulator {
  /** e.g. `http://127.0.0.1:41234` (no trailing slash). */
  baseUrl: string;
  port: number;
  /** Per-provider base URLs, exactly what a client/gateway uses as its provider base URL. */
  urls: Record<ProviderName, string>;
  /** Every request received, in order (a live array). */
  requests: RecordedRequest[];
  /** Inject a fault for matching requests, `times` (default Infinity); the earliest match with uses left applies. */
  setFault(match: FaultMatch, fault: Fault, opts?: { times?: number }): void;
  clearFaults(): void;
  /** Clear the request log and all faults. */
  reset(): void;
  /** Gap between streamed events from now on, ms. */
  setChunkDelay(ms: number): void;
  /** Stop listening, destroy open sockets, cancel timers. */
  close(): Promise<void>;
}

/** One provider request as the dialect handlers see it: routed, body parsed. */
export interface SimCall {
  provider: ProviderName;
  route: Route;
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON body; undefined when empty or not JSON. */
  body: unknown;
  /** 1-based arrival number; seeds ids so they are stable within a run. */
  seq: number;
  /** e.g. `req_sim_000001`; echoed in request-id headers and Anthropic bodies. */
  requestId: string;
  /** Target length of a plain reply, words. */
  replyWords: number;
  /** Response `created` timestamp, seconds. */
  created: number;
}

/** A provider-neutral error; errors.ts renders it in the provider's own shape and status. */
export type Problem =
  | { kind: 'auth'; reason: 'missing' | 'invalid'; key?: string }
  /** Retired upstream ids (retired-models.ts). */
  | { kind: 'model-not-found'; model: string }
  | { kind: 'bad-request'; message: string; param?: string; code?: string }
  | { kind: 'no-route'; method: string; path: string }
  | { kind: 'context-length'; limit: number; tokens: number }
  | { kind: 'status'; status: number; retryAfterSeconds?: number; retryAfterMs?: number };

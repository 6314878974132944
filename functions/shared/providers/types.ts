/**
 * The provider adapter contract (DESIGN.md "Contracts"): pure functions that translate between the
 * OpenAI protocol and one upstream's wire format. The router does the one fetch; adapters do no I/O.
 */
import type { CatalogueTarget } from '../catalogue/catalogue';
import type { ChatCompletionRequest } from '../openai/chat-request';
import type { ChunkParts } from '../openai/chat-response';
import type { EmbeddingParts, EmbeddingsRequest } from '../openai/embeddings';
import type { ImageParts, ImagesRequest } from '../openai/images';
import type { AssemblyRules } from '../openai/completion-assembler';
import type { GatewayError } from '../errors/gateway-errors';
import type { ProviderName } from './manifest';

/** Where and how to reach one provider (base URL without trailing slash; the key is secret). */
export interface ProviderEndpoint {
  provider: ProviderName;
  baseUrl: string;
  apiKey: string;
}

/**
 * A request that arrived in an upstream's own protocol (today: Anthropic's Messages API on
 * `POST /v1/messages`), carried beside its chat translation under {@link NATIVE_REQUEST}. An adapter
 * that speaks that protocol sends `body` as received (model, output limit and stream flag replaced), so
 * nothing the translation cannot express — thinking signatures, cache breakpoints, documents — is lost;
 * every other adapter uses the translation. A symbol key: object spreads keep it, `JSON.stringify`
 * never writes it, so it can never leak into another upstream's body.
 */
export interface NativeRequest {
  protocol: 'anthropic-messages';
  /** The client's JSON body, as validated (unknown fields kept). */
  body: Readonly<Record<string, unknown>>;
  /** Protocol headers to forward unchanged (lower-case names, e.g. `anthropic-version`, `anthropic-beta`). */
  headers: Readonly<Record<string, string>>;
}

/** The key under which a chat request carries its {@link NativeRequest}. */
export const NATIVE_REQUEST: unique symbol = Symbol('modelmux.nativeRequest');

/** A chat request as the router hands it to an adapter: possibly carrying its native original. */
export type RoutedChatRequest = ChatCompletionRequest & { [NATIVE_REQUEST]?: NativeRequest };

/** What the adapter needs besides the request. */
export interface AdapterContext {
  target: CatalogueTarget;
  endpoint: ProviderEndpoint;
}

/** An upstream HTTP request, ready for `fetch` (always POST, JSON body). */
export interface UpstreamHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** One upstream SSE event as decoded (`event` is the `event:` field, absent for data-only streams). */
export interface UpstreamSseEvent {
  event: string | undefined;
  data: string;
}

/**
 * Turns an upstream SSE stream into OpenAI chunk parts. State lives in the closure that created it.
 * `push` and `end` throw {@link UpstreamAttemptError} when the upstream signals an error or ends
 * before finishing (so the router can fall back before the first token, or report after it).
 */
export interface StreamTransform {
  push(event: UpstreamSseEvent): ChunkParts[];
  end(): ChunkParts[];
}

/** Why an upstream attempt failed, as the router needs to know it. */
export type FailureKind =
  | 'client' // the client's request is wrong: answer it at once, no fallback
  | 'auth-config' // our upstream key is wrong (401/403, Gemini API_KEY_INVALID): fall back, log at error level
  | 'rate-limit' // 429
  | 'overloaded' // 503, Anthropic 529, Gemini UNAVAILABLE
  | 'server' // other 5xx, malformed responses
  | 'timeout' // 408, 504, our own timers
  | 'connection' // refused, reset, DNS
  | 'not-found' // the upstream does not know the model (retired id): fall back
  | 'context-length'; // prompt too long for this target: a larger-window equivalent may take it

/** The verdict on one failed attempt. */
export interface UpstreamFailure {
  kind: FailureKind;
  /** Retrying the same target may succeed (429, 5xx, timeouts, connection errors). */
  retryable: boolean;
  /** Upstream status (0 when no response). */
  status: number;
  /** Log-safe description (never contains keys or message text). */
  message: string;
  /** For `client` failures: the OpenAI-shaped error to return to the client as is. */
  clientError?: GatewayError;
  /** From `retry-after-ms` / `retry-after` / Gemini RetryInfo, when the upstream sent one (ms). */
  retryAfterMs?: number;
}

/**
 * An upstream attempt failed: an error status, a malformed or error-carrying body (buffered or
 * streamed), a broken stream. Thrown by adapters and the router; carries the classified verdict.
 */
export class UpstreamAttemptError extends Error {
  constructor(readonly failure: UpstreamFailure) {
    super(failure.message);
    this.name = 'UpstreamAttemptError';
  }
}

/** One provider's translation functions. */
export interface ProviderAdapter {
  /**
   * Builds the upstream chat request, always STREAMED: modelmux asks every upstream for its stream and
   * assembles a buffered answer from it (openai/completion-assembler.ts).
   * @throws InvalidRequestError (400) for what the provider cannot honour (unsupported-parameters.ts).
   */
  buildChatRequest(req: RoutedChatRequest, ctx: AdapterContext): UpstreamHttpRequest;
  /** A fresh transform for one streamed response. */
  createStreamTransform(ctx: AdapterContext): StreamTransform;
  /** Classifies a non-2xx upstream response. */
  classifyError(status: number, bodyText: string, headers: Headers): UpstreamFailure;
  /**
   * Where this upstream's buffered answer differs from the concatenation of its stream, so an answer
   * assembled from the stream equals the one its buffered API gives (openai/completion-assembler.ts;
   * recorded pairs in test/fixtures/<provider>/pairs). Absent: none.
   */
  assembly?: AssemblyRules;
  /**
   * An exact prompt count for a native request, for providers that have one (Anthropic's
   * `POST /v1/messages/count_tokens`); undefined when this request cannot be counted here.
   */
  buildCountTokensRequest?(native: NativeRequest, ctx: AdapterContext): UpstreamHttpRequest | undefined;
  /** @returns the prompt's tokens. @throws UpstreamAttemptError for a malformed body. */
  parseCountTokensResponse?(bodyText: string): number;
  /**
   * The upstream takes a named context cache (`google.cached_content`, openai/chat-request.ts): Gemini
   * only. A request naming one is planned on such targets only (routing/attempt-plan.ts).
   */
  namedContextCache?: true;
  /** Embeddings, for providers that have them. */
  buildEmbeddingsRequest?(req: EmbeddingsRequest, inputs: readonly string[], ctx: AdapterContext): UpstreamHttpRequest;
  parseEmbeddingsResponse?(bodyText: string, ctx: AdapterContext): EmbeddingParts;
  /**
   * Image generation, for providers that have it: one upstream call for `n` images (`n` within the
   * target's `image.maxImages`; the route checks).
   */
  buildImagesRequest?(req: ImagesRequest, n: number, ctx: AdapterContext): UpstreamHttpRequest;
  /** @throws UpstreamAttemptError for a malformed body, an error inside a 200, or an answer without images. */
  parseImagesResponse?(bodyText: string, ctx: AdapterContext): ImageParts;
}

import { OPENROUTER_FIELDS, ROUTING_FIELDS, type ChatCompletionRequest } from '../../openai/chat-request';
import type { EmbeddingsRequest } from '../../openai/embeddings';
import type { AdapterContext, ProviderAdapter, UpstreamFailure, UpstreamHttpRequest } from '../types';
import { UpstreamAttemptError } from '../types';
import { functionToolsOnly, refuseOpenAIOnlyFeatures } from '../unsupported-parameters';
import { makeFailure, parseUpstreamJson } from '../upstream-failure';
import { classifyOpenAIError } from './openai-compatible-errors';
import { dropKey, toUpstreamMessages, type ReasoningReplay } from './history';
import { createOpenAIStreamTransform } from './stream';
import { embeddingsBody } from './wire';
import { addOpenAIImages } from './images';

/**
 * One adapter for every upstream that speaks OpenAI Chat Completions (providers.md §1, §4, §5, §6).
 * Providers differ in a few places only; {@link OpenAICompatibleOptions} names them.
 */

/** Upstream request body under construction (the client's fields, passed through). */
export type UpstreamBody = Record<string, unknown>;

/** The points where an OpenAI-compatible provider differs from OpenAI. */
export interface OpenAICompatibleOptions {
  /** Path appended to the base URL for chat (default `/chat/completions`). */
  chatPath?: string;
  /** Path for embeddings; omit when the provider has none. */
  embeddingsPath?: string;
  /** Path for image generation (OpenAI's Image API); omit when the provider has none. */
  imagesPath?: string;
  /** Auth headers (default `Authorization: Bearer <key>`). */
  authHeaders?: (apiKey: string) => Record<string, string>;
  /** Last edit of the body before it is sent (drop or rename fields the provider rejects). */
  adjustBody?: (body: UpstreamBody, req: ChatCompletionRequest, ctx: AdapterContext) => void;
  /** What becomes of an assistant's echoed `reasoning_content` (default: dropped; history.ts). */
  replayReasoning?: ReasoningReplay;
  /** An error reported inside a 200 body (MiniMax `base_resp`), or undefined. */
  errorInBody?: (body: unknown) => UpstreamFailure | undefined;
  /**
   * The host takes OpenAI's custom tools, custom tool choices and `allowed_tools` (OpenAI itself), and
   * its audio output, web search and moderation. Default false: they are refused with a 400 before
   * any call (unsupported-parameters.ts), since DeepSeek, MiniMax and the Llama hosts document
   * function tools only and none of those features (providers.md §4–§6).
   */
  customTools?: boolean;
}

const bearer = (apiKey: string): Record<string, string> => ({ authorization: `Bearer ${apiKey}` });

/**
 * Prompt caching: Anthropic's breakpoints (top-level and on tools; parts: history.ts) mean nothing here —
 * these upstreams cache automatically — OpenAI's cache key and retention go to OpenAI only, and
 * Gemini's named cache (`google`, `extra_body`) to Gemini only (docs/prices.md), so no upstream is sent
 * a field it may refuse.
 */
function cacheFieldsFor(body: UpstreamBody, req: ChatCompletionRequest, ctx: AdapterContext): void {
  delete body.cache_control;
  delete body.google;
  delete body.extra_body;
  if (req.tools !== undefined) body.tools = req.tools.map((t) => dropKey(t, 'cache_control'));
  if (ctx.target.provider !== 'openai') {
    delete body.prompt_cache_key;
    delete body.prompt_cache_retention;
  }
}

/** Builds an OpenAI-compatible adapter with the given differences. */
export function createOpenAICompatibleAdapter(options: OpenAICompatibleOptions = {}): ProviderAdapter {
  const chatPath = options.chatPath ?? '/chat/completions';
  const authHeaders = options.authHeaders ?? bearer;

  function headers(ctx: AdapterContext): Record<string, string> {
    return { 'content-type': 'application/json', accept: 'application/json', ...authHeaders(ctx.endpoint.apiKey) };
  }

  const adapter: ProviderAdapter = {
    buildChatRequest(req, ctx): UpstreamHttpRequest {
      if (options.customTools !== true) {
        functionToolsOnly(req);
        refuseOpenAIOnlyFeatures(req);
      }
      const body: UpstreamBody = { ...req };
      // modelmux's own routing fields (`models`, `route`) mean nothing upstream; OpenAI would refuse them.
      for (const f of ROUTING_FIELDS) delete body[f];
      // OpenRouter's own fields were read by the gateway (app/request-adjust.ts); OpenAI would refuse them.
      for (const f of OPENROUTER_FIELDS) delete body[f];
      cacheFieldsFor(body, req, ctx);
      // A model that does not reason refuses the field (OpenAI 400) or reads it as a switch to think
      // (DeepSeek V4, providers.md §4.2), next to a catalogue `thinking: disabled`.
      if (ctx.target.capabilities.reasoning === 'none') delete body.reasoning_effort;
      Object.assign(body, { model: ctx.target.upstreamModel, ...ctx.target.upstreamParams });
      body.messages = toUpstreamMessages(req.messages, ctx, options.replayReasoning);
      clampOutputTokens(body, ctx.target.maxOutputTokens);
      // Always streamed, always with usage so every token is billed from the upstream's own count; the
      // router forwards the usage chunk only when the client asked for it (LiteLLM #5632, peers.md B1).
      body.stream = true;
      body.stream_options = { ...req.stream_options, include_usage: true };
      options.adjustBody?.(body, req, ctx);
      return { url: ctx.endpoint.baseUrl + chatPath, headers: headers(ctx), body: JSON.stringify(body) };
    },

    createStreamTransform(ctx) {
      return createOpenAIStreamTransform(ctx, options.errorInBody);
    },

    classifyError(status, bodyText, responseHeaders) {
      return classifyOpenAIError(status, bodyText, responseHeaders);
    },
  };

  if (options.embeddingsPath !== undefined) {
    const embeddingsPath = options.embeddingsPath;
    adapter.buildEmbeddingsRequest = (req: EmbeddingsRequest, inputs, ctx): UpstreamHttpRequest => {
      const body: UpstreamBody = { model: ctx.target.upstreamModel, input: inputs, encoding_format: 'float' };
      if (req.dimensions !== undefined) body.dimensions = req.dimensions;
      return { url: ctx.endpoint.baseUrl + embeddingsPath, headers: headers(ctx), body: JSON.stringify(body) };
    };
    adapter.parseEmbeddingsResponse = (bodyText, ctx) => {
      const parsed = embeddingsBody.safeParse(parseUpstreamJson(bodyText, 'upstream sent a body that is not valid JSON'));
      if (!parsed.success) throw new UpstreamAttemptError(makeFailure('server', 200, `${ctx.endpoint.provider}: malformed embeddings body`));
      const data = [...parsed.data.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      const vectors = data.map((d) => (typeof d.embedding === 'string' ? fromBase64Float32(d.embedding) : d.embedding));
      return { vectors, promptTokens: parsed.data.usage?.prompt_tokens ?? undefined };
    };
  }
  if (options.imagesPath !== undefined) addOpenAIImages(adapter, options.imagesPath, headers);
  return adapter;
}

/** A request for more output than the target can give is capped at its limit (tokens). */
function clampOutputTokens(body: UpstreamBody, limit: number): void {
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = body[field];
    if (typeof v === 'number' && v > limit) body[field] = limit;
  }
}

function fromBase64Float32(b64: string): number[] {
  const buf = Buffer.from(b64, 'base64');
  const out: number[] = new Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

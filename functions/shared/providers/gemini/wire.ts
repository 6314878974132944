import * as z from '../../validation/zod';

/**
 * Tolerant schemas for what the Gemini API sends back (Gemini API, providers.md §3.3–3.6). Only the
 * fields we read, all `.nullish()`, loose objects: an added upstream field never breaks us
 * (DESIGN.md "Style"). Gemini omits proto3 default values, so a missing `index`, token count or
 * `finishReason` means 0 / unset, never an error.
 */

/** One `google.rpc.Status.details[]` entry: ErrorInfo (`reason`) or RetryInfo (`retryDelay`, e.g. "12s"). */
const rpcErrorDetail = z.lazy(() =>
  z.looseObject({
    '@type': z.nullish(z.string()),
    reason: z.nullish(z.string()),
    retryDelay: z.nullish(z.string()),
  }),
);

/** The Google RPC error object: `{"code":400,"message":"…","status":"INVALID_ARGUMENT","details":[…]}` (§3.5). */
export const rpcError = z.lazy(() =>
  z.looseObject({
    code: z.nullish(z.number()),
    message: z.nullish(z.string()),
    status: z.nullish(z.string()),
    details: z.nullish(z.array(rpcErrorDetail)),
  }),
);
export type RpcError = z.infer<typeof rpcError>;

/** An error response body, `{"error":{…}}`. */
export const rpcErrorBody = z.lazy(() => z.looseObject({ error: rpcError }));

/** One part of a response candidate: text (maybe a thought) or a function call. */
const responsePart = z.lazy(() =>
  z.looseObject({
    text: z.nullish(z.string()),
    /** Marks a thought-summary text part (only sent with `includeThoughts`). */
    thought: z.nullish(z.boolean()),
    /** `args` is an object, absent for a call without arguments; `id` is sent by newer models only. */
    functionCall: z.nullish(z.looseObject({ name: z.string(), args: z.optional(z.unknown()), id: z.nullish(z.string()) })),
    /** Opaque; must go back on the same part in later turns of a 2.5/3 tool loop (§3.2). */
    thoughtSignature: z.nullish(z.string()),
  }),
);
export type ResponsePart = z.infer<typeof responsePart>;

const candidate = z.lazy(() =>
  z.looseObject({
    content: z.nullish(z.looseObject({ parts: z.nullish(z.array(responsePart)) })),
    finishReason: z.nullish(z.string()),
    index: z.nullish(z.number().check(z.int())),
  }),
);

/** `usageMetadata` (tokens). `candidatesTokenCount` excludes thinking tokens (§3.3). */
export const usageMetadata = z.lazy(() =>
  z.looseObject({
    promptTokenCount: z.nullish(z.number()),
    candidatesTokenCount: z.nullish(z.number()),
    totalTokenCount: z.nullish(z.number()),
    thoughtsTokenCount: z.nullish(z.number()),
    cachedContentTokenCount: z.nullish(z.number()),
    toolUsePromptTokenCount: z.nullish(z.number()),
  }),
);
export type UsageMetadata = z.infer<typeof usageMetadata>;

/** A `GenerateContentResponse`: the buffered body, and each streamed `data:` event (§3.3–3.4). */
export const generateContentResponse = z.lazy(() =>
  z.looseObject({
    candidates: z.nullish(z.array(candidate)),
    /** Set when the prompt itself was blocked; then there are no candidates (§3.3). */
    promptFeedback: z.nullish(z.looseObject({ blockReason: z.nullish(z.string()) })),
    usageMetadata: z.nullish(usageMetadata),
    /** The official SDK checks every chunk for a top-level error (§3.4). */
    error: z.nullish(rpcError),
  }),
);
export type GenerateContentResponse = z.infer<typeof generateContentResponse>;

/** `batchEmbedContents` response: `{"embeddings":[{"values":[…]}]}`, no usage (§3.6). */
export const batchEmbedResponse = z.lazy(() =>
  z.looseObject({
    embeddings: z.array(z.looseObject({ values: z.array(z.number()) })),
  }),
);

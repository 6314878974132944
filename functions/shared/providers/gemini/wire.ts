import * as z from 'zod';

/**
 * Tolerant schemas for what the Gemini API sends back (Gemini API, providers.md §3.3–3.6). Only the
 * fields we read, all `.nullish()`, loose objects: an added upstream field never breaks us
 * (DESIGN.md "Style"). Gemini omits proto3 default values, so a missing `index`, token count or
 * `finishReason` means 0 / unset, never an error.
 */

/** One `google.rpc.Status.details[]` entry: ErrorInfo (`reason`) or RetryInfo (`retryDelay`, e.g. "12s"). */
const rpcErrorDetail = z.lazy(() =>
  z.looseObject({
    '@type': z.string().nullish(),
    reason: z.string().nullish(),
    retryDelay: z.string().nullish(),
  }),
);

/** The Google RPC error object: `{"code":400,"message":"…","status":"INVALID_ARGUMENT","details":[…]}` (§3.5). */
export const rpcError = z.lazy(() =>
  z.looseObject({
    code: z.number().nullish(),
    message: z.string().nullish(),
    status: z.string().nullish(),
    details: z.array(rpcErrorDetail).nullish(),
  }),
);
export type RpcError = z.infer<typeof rpcError>;

/** An error response body, `{"error":{…}}`. */
export const rpcErrorBody = z.lazy(() => z.looseObject({ error: rpcError }));

/** One part of a response candidate: text (maybe a thought) or a function call. */
const responsePart = z.lazy(() =>
  z.looseObject({
    text: z.string().nullish(),
    /** Marks a thought-summary text part (only sent with `includeThoughts`). */
    thought: z.boolean().nullish(),
    /** `args` is an object, absent for a call without arguments; `id` is sent by newer models only. */
    functionCall: z.looseObject({ name: z.string(), args: z.unknown().optional(), id: z.string().nullish() }).nullish(),
    /** Opaque; must go back on the same part in later turns of a 2.5/3 tool loop (§3.2). */
    thoughtSignature: z.string().nullish(),
  }),
);
export type ResponsePart = z.infer<typeof responsePart>;

const candidate = z.lazy(() =>
  z.looseObject({
    content: z.looseObject({ parts: z.array(responsePart).nullish() }).nullish(),
    finishReason: z.string().nullish(),
    index: z.number().int().nullish(),
  }),
);
export type Candidate = z.infer<typeof candidate>;

/** `usageMetadata` (tokens). `candidatesTokenCount` excludes thinking tokens (§3.3). */
export const usageMetadata = z.lazy(() =>
  z.looseObject({
    promptTokenCount: z.number().nullish(),
    candidatesTokenCount: z.number().nullish(),
    totalTokenCount: z.number().nullish(),
    thoughtsTokenCount: z.number().nullish(),
    cachedContentTokenCount: z.number().nullish(),
    toolUsePromptTokenCount: z.number().nullish(),
  }),
);
export type UsageMetadata = z.infer<typeof usageMetadata>;

/** A `GenerateContentResponse`: the buffered body, and each streamed `data:` event (§3.3–3.4). */
export const generateContentResponse = z.lazy(() =>
  z.looseObject({
    candidates: z.array(candidate).nullish(),
    /** Set when the prompt itself was blocked; then there are no candidates (§3.3). */
    promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
    usageMetadata: usageMetadata.nullish(),
    /** The official SDK checks every chunk for a top-level error (§3.4). */
    error: rpcError.nullish(),
  }),
);
export type GenerateContentResponse = z.infer<typeof generateContentResponse>;

/** `batchEmbedContents` response: `{"embeddings":[{"values":[…]}]}`, no usage (§3.6). */
export const batchEmbedResponse = z.lazy(() =>
  z.looseObject({
    embeddings: z.array(z.looseObject({ values: z.array(z.number()) })),
  }),
);


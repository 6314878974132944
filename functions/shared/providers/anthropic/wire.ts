import * as z from '../../validation/zod';

/**
 * Tolerant schemas for what the Anthropic Messages API sends back (providers.md §2.5–2.7): only the
 * fields the adapter reads, all `.nullish()`, loose objects, so a new block type, delta type or usage
 * field never breaks a response (DESIGN.md "Style").
 */

/** `usage` of a message, a `message_start` or a `message_delta` (all counts in tokens). */
export const anthropicUsage = z.lazy(() =>
  z.looseObject({
    /** Excludes cache reads and writes (providers.md §2.5). */
    input_tokens: z.nullish(z.number()),
    output_tokens: z.nullish(z.number()),
    cache_creation_input_tokens: z.nullish(z.number()),
    cache_read_input_tokens: z.nullish(z.number()),
    /** The write split by TTL (its sum is `cache_creation_input_tokens`; docs/prices.md). */
    cache_creation: z.nullish(z.looseObject({ ephemeral_5m_input_tokens: z.nullish(z.number()), ephemeral_1h_input_tokens: z.nullish(z.number()) })),
    /** Thinking share of `output_tokens` (Anthropic SDK `OutputTokensDetails`). */
    output_tokens_details: z.nullish(z.looseObject({ thinking_tokens: z.nullish(z.number()) })),
  }),
);
export type AnthropicUsage = z.infer<typeof anthropicUsage>;

/** The `content_block` of a `content_block_start` event. */
export const contentBlock = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    text: z.nullish(z.string()),
    thinking: z.nullish(z.string()),
    id: z.nullish(z.string()),
    name: z.nullish(z.string()),
    input: z.optional(z.unknown()),
  }),
);

/** The `error` object of an error body or an `error` stream event (providers.md §2.7). */
export const errorObject = z.lazy(() =>
  z.looseObject({
    type: z.nullish(z.string()),
    message: z.nullish(z.string()),
    /** Tier spend caps: `error_code: "enforced_spend_limit_reached"` (providers.md §2.7 ⚠). */
    details: z.nullish(z.looseObject({ error_code: z.nullish(z.string()) })),
  }),
);
export type ErrorObject = z.infer<typeof errorObject>;

/** `{"type":"error","error":{…},"request_id"}`. */
export const errorBody = z.lazy(() => z.looseObject({ type: z.nullish(z.string()), error: z.nullish(errorObject) }));

/**
 * Any stream event: `message_start`, `content_block_start|delta|stop`, `message_delta`,
 * `message_stop`, `ping`, `error` (providers.md §2.6). One loose shape; the transform dispatches on
 * `type` and reads the fields that type carries.
 */
export const streamEvent = z.lazy(() =>
  z.looseObject({
    type: z.nullish(z.string()),
    index: z.nullish(z.number().check(z.int())),
    message: z.nullish(z.looseObject({ usage: z.nullish(anthropicUsage) })),
    content_block: z.nullish(contentBlock),
    delta: z.nullish(
      z.looseObject({
        type: z.nullish(z.string()),
        text: z.nullish(z.string()),
        thinking: z.nullish(z.string()),
        partial_json: z.nullish(z.string()),
        stop_reason: z.nullish(z.string()),
      }),
    ),
    usage: z.nullish(anthropicUsage),
    error: z.nullish(errorObject),
  }),
);
export type StreamEvent = z.infer<typeof streamEvent>;

import * as z from 'zod';

/**
 * Tolerant schemas for what the Anthropic Messages API sends back (providers.md §2.5–2.7): only the
 * fields the adapter reads, all `.nullish()`, loose objects, so a new block type, delta type or usage
 * field never breaks a response (DESIGN.md "Style").
 */

/** `usage` of a message, a `message_start` or a `message_delta` (all counts in tokens). */
export const anthropicUsage = z.lazy(() =>
  z.looseObject({
    /** Excludes cache reads and writes (providers.md §2.5). */
    input_tokens: z.number().nullish(),
    output_tokens: z.number().nullish(),
    cache_creation_input_tokens: z.number().nullish(),
    cache_read_input_tokens: z.number().nullish(),
    /** Thinking share of `output_tokens` (Anthropic SDK `OutputTokensDetails`). */
    output_tokens_details: z.looseObject({ thinking_tokens: z.number().nullish() }).nullish(),
  }),
);
export type AnthropicUsage = z.infer<typeof anthropicUsage>;

/** A response content block, or the `content_block` of a `content_block_start` event. */
export const contentBlock = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    text: z.string().nullish(),
    thinking: z.string().nullish(),
    id: z.string().nullish(),
    name: z.string().nullish(),
    input: z.unknown().optional(),
  }),
);
export type ContentBlock = z.infer<typeof contentBlock>;

/** The `error` object of an error body or an `error` stream event (providers.md §2.7). */
export const errorObject = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    message: z.string().nullish(),
    /** Tier spend caps: `error_code: "enforced_spend_limit_reached"` (providers.md §2.7 ⚠). */
    details: z.looseObject({ error_code: z.string().nullish() }).nullish(),
  }),
);
export type ErrorObject = z.infer<typeof errorObject>;

/** `{"type":"error","error":{…},"request_id"}`. */
export const errorBody = z.lazy(() => z.looseObject({ type: z.string().nullish(), error: errorObject.nullish() }));

/** A buffered Messages response (`type: "message"`). */
export const messageBody = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    content: z.array(contentBlock).nullish(),
    stop_reason: z.string().nullish(),
    usage: anthropicUsage.nullish(),
    error: errorObject.nullish(),
  }),
);

/**
 * Any stream event: `message_start`, `content_block_start|delta|stop`, `message_delta`,
 * `message_stop`, `ping`, `error` (providers.md §2.6). One loose shape; the transform dispatches on
 * `type` and reads the fields that type carries.
 */
export const streamEvent = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    index: z.number().int().nullish(),
    message: z.looseObject({ usage: anthropicUsage.nullish() }).nullish(),
    content_block: contentBlock.nullish(),
    delta: z
      .looseObject({
        type: z.string().nullish(),
        text: z.string().nullish(),
        thinking: z.string().nullish(),
        partial_json: z.string().nullish(),
        stop_reason: z.string().nullish(),
      })
      .nullish(),
    usage: anthropicUsage.nullish(),
    error: errorObject.nullish(),
  }),
);
export type StreamEvent = z.infer<typeof streamEvent>;


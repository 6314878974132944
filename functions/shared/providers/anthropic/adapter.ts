import type { ProviderAdapter } from '../types';
import { classifyAnthropicError } from './anthropic-errors';
import { buildAnthropicCountTokensRequest, parseAnthropicCountTokens } from './count-tokens';
import { buildAnthropicRequest } from './request';
import { createAnthropicStreamTransform } from './stream';

/**
 * The native Anthropic Messages API adapter (`POST {baseUrl}/v1/messages`, `x-api-key`,
 * `anthropic-version: 2023-06-01`; providers.md §2). No embeddings: Anthropic has none.
 *
 * Decisions an OpenAI client may notice (each documented where it is made):
 * - `n > 1` is a 400 (`request.ts`); `response_format` JSON modes are a system instruction, best
 *   effort (`json-mode.ts`);
 * - tool-call `arguments` that are not a JSON object are sent as `input: {}` (`messages.ts`);
 * - `reasoning_effort` becomes extended thinking within the client's `max_tokens`, off while a tool
 *   is forced or a tool loop is under way; `reasoning_content` from earlier replies is not sent back
 *   (`thinking.ts`, `messages.ts`).
 */
export const anthropicAdapter: ProviderAdapter = {
  buildChatRequest: buildAnthropicRequest,
  createStreamTransform: createAnthropicStreamTransform,
  classifyError: classifyAnthropicError,
  buildCountTokensRequest: buildAnthropicCountTokensRequest,
  parseCountTokensResponse: parseAnthropicCountTokens,
  // The buffered Messages answer has `tool_use.input` objects (compact JSON once serialised) and no
  // content at all without a text block; the stream has the model's own JSON text.
  assembly: { toolArguments: 'compact-json', contentWithoutText: 'null' },
};

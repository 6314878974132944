/**
 * Picks the error renderer for a provider: every error the simulator sends goes through here, so
 * each provider answers in its own shape.
 */
import { renderAnthropicError } from './anthropic-errors.js';
import type { JsonReply } from './deliver.js';
import { renderGeminiError } from './gemini-errors.js';
import { renderOpenAIStyleError } from './openai-errors.js';
import type { Route } from './routes.js';
import type { Problem } from './types.js';

/** `p` as `provider` would send it. `requestId` goes into the request-id header/body where the provider has one. */
export function renderProblem({ provider, wire }: Route, p: Problem, requestId: string): JsonReply {
  switch (wire) {
    case 'anthropic':
      return renderAnthropicError(p, requestId);
    case 'gemini':
      return renderGeminiError(p);
    default:
      return renderOpenAIStyleError(provider, p, requestId);
  }
}

/** The status a provider uses when overloaded (providers.md §7 "Overload"): used when a mid-stream
 * error fault hits a buffered request, which can only fail before its headers. */
export function overloadStatus({ provider, wire }: Route): number {
  return wire === 'anthropic' ? 529 : provider === 'openai' ? 500 : 503;
}

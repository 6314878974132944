import { config, loadConfig } from '../config/env';

/**
 * How long a buffered chat request may keep its HTTP status open, counted from its arrival (ms): env
 * `BUFFERED_CHAT_BUDGET_MS`, default 55,000. Until then a failure is answered with its own status
 * (4xx, 502/503/504); an answer still being produced then gets its 200 committed and JSON-whitespace
 * beats until it is written (app/held-json.ts), while routing and fallback go on to the function's
 * deadline.
 *
 * Why: a buffered answer sends no byte until it is whole, and CloudFront gives up on an origin that
 * sends nothing for its origin read timeout — 60 s by default (lib/constructs/api-distribution.ts;
 * CloudFront Developer Guide, "Response timeout") — answering the client with its own 504 while the
 * gateway would go on, produce the answer and bill it to nobody. The budget stays under that timeout;
 * the stack sets it from the distribution's read timeout (without CloudFront, up to the function's
 * timeout less the settle reserve). Streams commit earlier (STREAM_COMMIT_AFTER_MS,
 * app/chat-completions.ts) and keep the connection alive with SSE comments.
 */
export const DEFAULT_BUFFERED_CHAT_BUDGET_MS = 55_000;

/**
 * The budget from a raw value of `BUFFERED_CHAT_BUDGET_MS` (config/env.ts's schema); without one,
 * the container's config.
 * @throws ConfigError naming the variable when it is set but not a positive integer.
 */
export function bufferedChatBudgetMs(env?: string): number {
  return env === undefined ? config().BUFFERED_CHAT_BUDGET_MS : loadConfig({ BUFFERED_CHAT_BUDGET_MS: env }).BUFFERED_CHAT_BUDGET_MS;
}

/** This container's buffered chat budget (ms; read once at load). */
export const BUFFERED_CHAT_BUDGET_MS = bufferedChatBudgetMs();

import * as z from 'zod';
import type { RouteOptions } from './chat-router';

/**
 * How long a buffered chat request may spend on upstream attempts, retries and fallbacks included,
 * counted from its arrival (ms): env `BUFFERED_CHAT_BUDGET_MS`, default 55,000.
 *
 * Why: a buffered answer sends no byte until it is whole, and CloudFront gives up on an origin that
 * sends nothing for its origin read timeout — 60 s by default (lib/constructs/api-distribution.ts;
 * CloudFront Developer Guide, "Response timeout") — answering the client with its own 504 while the
 * gateway would go on, produce the answer and bill it to nobody. The budget must stay under that
 * timeout, with room to write the answer; the stack sets it from the distribution's read timeout
 * (without CloudFront, up to the function's timeout less the settle reserve). Streams are not bound by
 * it: they commit early and keep the connection alive with SSE comments (app/chat-completions.ts).
 */
export const DEFAULT_BUFFERED_CHAT_BUDGET_MS = 55_000;

const budgetSchema = z.coerce.number().int().positive();

/**
 * Reads the budget from the environment.
 * @throws ZodError at load when the variable is set but not a positive integer.
 */
export function bufferedChatBudgetMs(env: string | undefined = process.env.BUFFERED_CHAT_BUDGET_MS): number {
  return env === undefined || env === '' ? DEFAULT_BUFFERED_CHAT_BUDGET_MS : budgetSchema.parse(env);
}

/** This container's buffered chat budget (ms; read once at load). */
export const BUFFERED_CHAT_BUDGET_MS = bufferedChatBudgetMs();

/**
 * The route options with their deadline brought forward to `receivedAt + budgetMs` (epoch ms) when
 * that comes first.
 */
export function withinBudget(opts: RouteOptions, receivedAt: number, budgetMs: number): RouteOptions {
  return { ...opts, deadline: Math.min(opts.deadline ?? Number.POSITIVE_INFINITY, receivedAt + budgetMs) };
}

import { logger } from '../observability/logger';
import type { Attempt } from './attempt-plan';
import type { ChatTimeouts } from './timeouts';

/**
 * Hedging, opt-in per model (catalogue `hedge`, attempt-loop.ts runs it): how long an attempt may go
 * without a first token before the next target starts beside it, and the accounting of the attempt
 * that loses the race.
 */

/**
 * ms after which an attempt on a hedged model gets a parallel one: the model's `hedge.afterMs`, else
 * its profile's usual p95 time to first token (routing/timeouts.ts LATENCY_TABLE); either way plus
 * the prompt-size allowance already in `timeouts` (a long prompt is slow to start on every target).
 * @returns undefined when the attempt's model does not hedge.
 */
export function hedgeAfterMs(attempt: Attempt, timeouts: ChatTimeouts, promptAllowanceMs: number): number | undefined {
  if (attempt.hedge === undefined) return undefined;
  return attempt.hedge.afterMs === undefined ? timeouts.p95FirstTokenMs : attempt.hedge.afterMs + promptAllowanceMs;
}

/**
 * The operator's cost of an attempt stopped because another answered first (nano-USD, rounded up):
 * its prompt at the target's UPSTREAM input price — what the provider bills us for a prompt it began
 * to process — never charged to the client, who pays only for the answer it got. A few output tokens
 * the loser may have produced before the abort are not known and not counted.
 * @param promptTokens estimated prompt tokens (tokens).
 */
export function hedgeLossNanoUsd(attempt: Attempt, promptTokens: number): number {
  // µUSD per 1M tokens × tokens = 10⁻⁶ µUSD = 10⁻³ nano-USD.
  return Math.ceil((attempt.target.upstreamPrice.input * promptTokens) / 1000);
}

/**
 * Logs a lost hedge race with the operator's estimated cost, so it can be counted (one line per loser:
 * `hedgeLost: true`, `target`, `promptTokensEstimate`, `operatorCostNanoUsd`). The winner's ledger entry
 * also lists the loser in its fallback path (`…:hedge-lost`).
 */
export function logHedgeLoss(attempt: Attempt, promptTokens: number, requestId: string | undefined): void {
  logger.info('hedge lost: the other target answered first; its prompt is the operator\'s cost', {
    requestId,
    hedgeLost: true,
    target: attempt.target.key,
    publicModel: attempt.publicModel,
    promptTokensEstimate: promptTokens,
    operatorCostNanoUsd: hedgeLossNanoUsd(attempt, promptTokens),
  });
}

import { logger } from '../observability/logger';
import type { Attempt } from './attempt-plan';

/**
 * Hedging, opt-in per model (catalogue `hedge`, attempt-loop.ts runs it; its delay is set with the
 * request's other time limits, timeouts.ts `hedgeAfterMs`): the accounting of the attempt that loses
 * the race.
 */

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
  logger.info("hedge lost: the other target answered first; its prompt is the operator's cost", {
    requestId,
    hedgeLost: true,
    target: attempt.target.key,
    publicModel: attempt.publicModel,
    promptTokensEstimate: promptTokens,
    operatorCostNanoUsd: hedgeLossNanoUsd(attempt, promptTokens),
  });
}

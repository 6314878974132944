/**
 * The price one attempt is billed at (µUSD per 1M tokens), the same for the hold (its most, over the
 * plan: hold-demand.ts) and the settle (the served attempt: app/settle-request.ts): the target's
 * displayed price, its long-prompt tier included — or, for an attempt made with the account's own
 * provider key (BYOK, issue 11), the platform fee alone (displayed − upstream price, the 5.5%).
 */
import { byokFeePricesFor, displayedPricesFor, type TokenPrices } from '../catalogue/catalogue';
import type { Attempt } from '../routing/attempt-plan';

/** The prices of `attempt` for a prompt of `promptTokens` tokens. */
export function attemptPrices(attempt: Pick<Attempt, 'target' | 'byok'>, promptTokens: number): TokenPrices {
  return attempt.byok !== undefined ? byokFeePricesFor(attempt.target, promptTokens) : displayedPricesFor(attempt.target, promptTokens);
}

import type { PriceOverride } from './price-overrides';

/**
 * An operator's own prices: negotiated discounts, committed-use rates, a self-hosted model's cost. An
 * entry here replaces both the dataset's and the built-in override's rules for its target key
 * (`provider:upstreamModel`); the displayed price is still upstream × 1.055 (money/price.ts). Empty in
 * the public build: edit and redeploy (`cdk deploy`) to change what this deployment pays and bills.
 */
export const OPERATOR_PRICES: readonly PriceOverride[] = [];

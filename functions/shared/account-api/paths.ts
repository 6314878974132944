/**
 * The paths the account function serves: the CloudFront path patterns routed to it
 * (lib/constructs/api-distribution.ts) and the local server's routing (local/gateway.ts). `*` ends a
 * prefix pattern. A leaf module, so the CDK app reads it without loading the handlers.
 */
export const ACCOUNT_PATH_PATTERNS = ['/v1/account*', '/v1/keys*', '/v1/credits*', '/v1/activity*', '/v1/byok*', '/v1/billing/*', '/config.json'] as const;

/** Stripe's webhook endpoint (no JWT: Stripe signs it); the operator registers `<base>` + this in Stripe. */
export const STRIPE_WEBHOOK_PATH = '/v1/billing/stripe/webhook';

/**
 * The Stripe client and keys. The keys are credentials, read like the upstream keys
 * (config/secret-json.ts): `STRIPE_SECRET_KEY` and `STRIPE_WEBHOOK_SECRET` from env, overlaid by the
 * secret `<stack>/stripe` named by `STRIPE_SECRET_ARN`. Without a secret key payments are disabled: the
 * dashboard hides "Add credit", `POST /v1/credits/checkout` answers 404 `payments_not_enabled`, and the
 * webhook answers 404.
 *
 * The client is the official `stripe` SDK; `STRIPE_API_BASE` points it at another host through its
 * `host`/`port`/`protocol` options (the local stand-in, local/stripe/).
 */
import Stripe from 'stripe';
import { config } from '../config/env';
import { createSecretJsonLoader } from '../config/secret-json';
import { NotFoundError } from '../errors/gateway-errors';

/** The credential names, in env and in the secret. */
export const STRIPE_CREDENTIAL_VARS = ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const;

/**
 * The Stripe keys (env, overlaid by the secret when `STRIPE_SECRET_ARN` is set; cached 5 minutes).
 * @throws ConfigUnavailableError (503) when the secret is set but cannot be read.
 */
export const loadStripeCredentials = createSecretJsonLoader({
  secretIdEnv: 'STRIPE_SECRET_ARN',
  envNames: STRIPE_CREDENTIAL_VARS,
  label: 'Stripe',
  example: '{"STRIPE_SECRET_KEY":"sk_live_…","STRIPE_WEBHOOK_SECRET":"whsec_…"}',
  unavailableMessage: 'Payments are unavailable right now (their configuration could not be loaded). Please retry.',
});

/** A configured Stripe: the client and the webhook signing secret (undefined when only the key is set). */
export interface StripeSetup {
  stripe: Stripe;
  webhookSecret: string | undefined;
}

let cached: { key: string; base: string | undefined; stripe: Stripe } | undefined;

/**
 * Stripe, or undefined when no secret key is configured (payments disabled). One client per key.
 * @throws ConfigUnavailableError (503) when the secret cannot be read.
 */
export async function stripeSetup(): Promise<StripeSetup | undefined> {
  const creds = await loadStripeCredentials();
  const key = creds.STRIPE_SECRET_KEY;
  if (key === undefined) return undefined;
  const base = config().STRIPE_API_BASE;
  if (cached?.key !== key || cached.base !== base) cached = { key, base, stripe: newStripeClient(key, base) };
  return { stripe: cached.stripe, webhookSecret: creds.STRIPE_WEBHOOK_SECRET };
}

/** True when a Stripe key and webhook secret are configured (false too when the secret cannot be read now). */
export async function paymentsEnabled(): Promise<boolean> {
  const setup = await stripeSetup().catch(() => undefined);
  return setup?.webhookSecret !== undefined;
}

/**
 * Stripe, or a 404 `payments_not_enabled` when it (or its webhook secret: no credit could arrive) is not configured.
 * @throws NotFoundError (404) when payments are disabled; ConfigUnavailableError (503).
 */
export async function requireStripe(): Promise<StripeSetup> {
  const setup = await stripeSetup();
  if (setup?.webhookSecret === undefined) {
    throw new NotFoundError(
      'Payments are not enabled on this deployment (no Stripe key is configured). Ask the operator to add credit, or to set up Stripe (README: Payments).',
      { code: 'payments_not_enabled' },
    );
  }
  return setup;
}

/**
 * A Stripe SDK client for `key`; `base` (e.g. `http://127.0.0.1:12111`) sends it to another host
 * (the stand-in) through the SDK's `host`, `port` and `protocol` options. Retries: the SDK's, with
 * idempotency keys on every POST (docs.stripe.com/api/idempotent_requests).
 */
export function newStripeClient(key: string, base?: string): Stripe {
  const url = base === undefined ? undefined : new URL(base);
  return new Stripe(key, {
    maxNetworkRetries: 2,
    timeout: 10_000,
    ...(url === undefined
      ? {}
      : {
          host: url.hostname,
          port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
          protocol: url.protocol === 'https:' ? 'https' : 'http',
        }),
  });
}

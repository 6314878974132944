/** `npm start`'s payments: the Stripe stand-in (server.ts) wired into the local gateway's env. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { startStripeStandIn, type StripeStandIn } from './server';

/**
 * How to run payments locally: the webhook signing secret is `STRIPE_WEBHOOK_SECRET` from the env,
 * else the one in `webhookSecretFile` (generated there once), else a new one; `retryDelaysMs` overrides
 * the stand-in's delivery backoff (tests).
 */
export interface LocalStripeOptions {
  webhookSecretFile?: string;
  port?: number;
  retryDelaysMs?: number[];
}

/** The stand-in (undefined when `STRIPE_SECRET_KEY` names another Stripe) and the webhook secret in use. */
export interface LocalStripe {
  standIn: StripeStandIn | undefined;
  webhookSecret: string;
}

/**
 * Payments locally: the Stripe stand-in with a local secret key (exported as `STRIPE_SECRET_KEY` and
 * `STRIPE_API_BASE`), or the configured Stripe when `STRIPE_SECRET_KEY` is set; the webhook secret as
 * {@link LocalStripeOptions} says; `closers` gets what stops it.
 */
export async function startLocalStripe(options: LocalStripeOptions | undefined, closers: Array<() => Promise<void>>): Promise<LocalStripe | undefined> {
  if (options === undefined) return undefined;
  let webhookSecret = process.env.STRIPE_WEBHOOK_SECRET?.trim() || undefined;
  if (webhookSecret === undefined && options.webhookSecretFile !== undefined && existsSync(options.webhookSecretFile))
    webhookSecret = readFileSync(options.webhookSecretFile, 'utf8').trim();
  if (webhookSecret === undefined) {
    webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
    if (options.webhookSecretFile !== undefined) {
      mkdirSync(dirname(options.webhookSecretFile), { recursive: true });
      writeFileSync(options.webhookSecretFile, `${webhookSecret}\n`, { mode: 0o600 });
    }
  }
  process.env.STRIPE_WEBHOOK_SECRET = webhookSecret;
  if (process.env.STRIPE_SECRET_KEY?.trim()) return { standIn: undefined, webhookSecret };
  const standIn = await startStripeStandIn({
    webhookSecret,
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.retryDelaysMs === undefined ? {} : { retryDelaysMs: options.retryDelaysMs }),
  });
  closers.push(standIn.close);
  process.env.STRIPE_SECRET_KEY = standIn.secretKey;
  process.env.STRIPE_API_BASE = standIn.url;
  closers.push(async () => {
    for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_API_BASE', 'STRIPE_WEBHOOK_SECRET']) delete process.env[name];
  });
  return { standIn, webhookSecret };
}

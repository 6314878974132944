/**
 * The account API's routes (DATA-MODEL §7), served by the account function. Every route but
 * `/config.json` is authenticated by the dashboard user's Cognito JWT (caller.ts). Unknown paths are
 * 404, known paths with another method 405 (with `allow`); errors use OpenAI's body. Stripe's webhook
 * (`/v1/billing/stripe/webhook`) is signed by Stripe instead.
 */
import type { GatewayHandler, GatewayRequest, GatewayResult } from '../http/types';
import { MethodNotAllowedError, NotFoundError } from '../errors/gateway-errors';
import { getAccountInfo, getCredits } from './account-routes';
import { activityRoute } from './activity-route';
import { deleteByokRoute, listByokRoute, patchByokRoute, putByokRoute } from './byok-routes';
import { accountCaller, type AccountCaller } from './caller';
import { configRoute } from './config-route';
import { checkoutRoute, purchasesRoute } from './credits-routes';
import { getAutoTopUpRoute, putAlertsRoute, putAutoTopUpRoute } from './auto-top-up-route';
import { stripeWebhookRoute } from './stripe-webhook-route';
import { createKeyRoute, deleteKeyRoute, getKeyRoute, listKeysRoute, patchKeyRoute } from './keys-routes';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Authed = (caller: AccountCaller, req: GatewayRequest) => Promise<GatewayResult>;

import { STRIPE_WEBHOOK_PATH } from './paths';

/** The authenticated handlers of a path, by method; undefined for a path we do not serve. */
function routesFor(path: string): Partial<Record<Method, Authed>> | undefined {
  const segment = (prefix: string) => decodeSegment(path.slice(prefix.length));
  switch (path) {
    case '/v1/account':
      return { GET: (c) => getAccountInfo(c) };
    case '/v1/credits':
      return { GET: (c) => getCredits(c) };
    case '/v1/credits/checkout':
      return { POST: (c, r) => checkoutRoute(c, r) };
    case '/v1/credits/purchases':
      return { GET: (c) => purchasesRoute(c) };
    case '/v1/credits/auto-top-up':
      return { GET: (c) => getAutoTopUpRoute(c), PUT: (c, r) => putAutoTopUpRoute(c, r) };
    case '/v1/credits/alerts':
      return { PUT: (c, r) => putAlertsRoute(c, r) };
    case '/v1/activity':
      return { GET: (c, r) => activityRoute(c, r) };
    case '/v1/keys':
      return { GET: (c) => listKeysRoute(c), POST: (c, r) => createKeyRoute(c, r) };
    case '/v1/byok':
      return { GET: (c) => listByokRoute(c) };
    default:
  }
  if (/^\/v1\/keys\/[^/]+$/.test(path)) {
    const hash = segment('/v1/keys/');
    return { GET: (c) => getKeyRoute(c, hash), PATCH: (c, r) => patchKeyRoute(c, hash, r), DELETE: (c) => deleteKeyRoute(c, hash) };
  }
  if (/^\/v1\/byok\/[^/]+$/.test(path)) {
    const provider = segment('/v1/byok/');
    return { PUT: (c, r) => putByokRoute(c, provider, r), PATCH: (c, r) => patchByokRoute(c, provider, r), DELETE: (c) => deleteByokRoute(c, provider) };
  }
  return undefined;
}

/** The account function's core: request → result (errors thrown as GatewayError). */
export const accountDispatch: GatewayHandler = async (req: GatewayRequest): Promise<GatewayResult> => {
  const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
  if (path === '/config.json') {
    if (req.method !== 'GET') throw new MethodNotAllowedError(req.method, req.path, ['GET']);
    return configRoute();
  }
  if (path === STRIPE_WEBHOOK_PATH) {
    // Stripe signs it; no JWT (stripe-webhook-route.ts).
    if (req.method !== 'POST') throw new MethodNotAllowedError(req.method, req.path, ['POST']);
    return stripeWebhookRoute(req);
  }
  const routes = routesFor(path);
  if (routes === undefined) {
    throw new NotFoundError(
      `Unknown request URL: ${req.method} ${req.path}. The account API serves /v1/account, /v1/keys, /v1/credits, /v1/credits/checkout, /v1/credits/purchases, /v1/credits/auto-top-up, /v1/credits/alerts, /v1/activity and /v1/byok.`,
      { code: 'unknown_url' },
    );
  }
  const handler = routes[req.method as Method];
  if (handler === undefined) throw new MethodNotAllowedError(req.method, req.path, Object.keys(routes));
  return handler(await accountCaller(req), req);
};

/** A malformed percent-encoding is just an id nothing has (404), not a server error. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

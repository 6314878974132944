import { authenticate } from '../accounts/authenticate';
import type { AuthenticatedKey } from '../accounts/authenticate';
import { parseBearer } from '../accounts/api-key';
import { PayloadTooLargeError } from '../errors/gateway-errors';
import { dashboardUrl } from '../http/public-url';
import type { GatewayRequest } from '../http/types';
import { startBill, type BillStart, type RequestBill } from '../billing/request-bill';
import { holdEndsAt } from '../routing/timeouts';
import type { RouteOptions } from '../routing/attempt-contract';
import type { Attempt } from '../routing/attempt-plan';
import { routeBufferedCall } from '../routing/fallback-router';

/**
 * The largest request body accepted (bytes): Lambda's own 6 MB invocation payload limit
 * (Lambda quotas, "Invocation payload (request and response)": 6 MB synchronous). Image parts sent
 * as data URLs are the usual reason for large bodies.
 */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

/**
 * Checks the body size, then the key: `Authorization: Bearer <key>`, else `x-api-key: <key>`.
 * @throws PayloadTooLargeError (413), AuthenticationError (401), or a 503 when the key store is down.
 */
export async function authenticateRequest(req: GatewayRequest): Promise<AuthenticatedKey> {
  if (Buffer.byteLength(req.body, 'utf8') > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const dashboard = dashboardUrl(req);
  const key = parseBearer(req.headers.authorization ?? apiKeyHeader(req), dashboard);
  return authenticate(key, dashboard);
}

/**
 * Anthropic's `x-api-key` header (what the Anthropic SDKs and Claude Code's `ANTHROPIC_API_KEY` send)
 * as a bearer credential, when no `Authorization` header came: one key, either header, on every route.
 */
function apiKeyHeader(req: GatewayRequest): string | undefined {
  const key = req.headers['x-api-key'];
  return key === undefined ? undefined : `Bearer ${key}`;
}

/**
 * The router's options for a request: its abort signal, deadline and id (for the router's log lines),
 * and its origin (the caller's account and the raw body), so the circuit breaker can tell a failure
 * this request's content caused from a target that is down (routing/circuit-breaker.ts).
 */
export function routeOptions(req: GatewayRequest, caller: AuthenticatedKey): RouteOptions {
  const opts: RouteOptions = { signal: req.signal, requestId: req.requestId, origin: { accountId: caller.accountId, body: req.body } };
  if (req.deadline !== undefined) opts.deadline = req.deadline;
  return opts;
}

/**
 * Starts the bill of `caller`'s request `req` for `publicModel`: the hold of `held.demand` (tokens and
 * nano-USD, billing/hold-demand.ts) with the prompt's estimate (tokens), held until the request's
 * deadline (routing/timeouts.ts `holdEndsAt`). Never throws: the hold's refusal rejects `confirmed`.
 */
export function billRequest(
  req: GatewayRequest,
  caller: AuthenticatedKey,
  publicModel: string,
  held: Pick<BillStart, 'demand' | 'promptTokensEstimate'>,
): RequestBill {
  return startBill({
    accountId: caller.accountId,
    keyHash: caller.keyHash,
    requestId: req.requestId,
    publicModel,
    demand: held.demand,
    promptTokensEstimate: held.promptTokensEstimate,
    endsAt: holdEndsAt(req),
  });
}

/**
 * A buffered request's call after its hold (embeddings, images: short answers, cheap to refuse, so the
 * hold is written before the call): waits for `bill.confirmed`, then routes `plan` with
 * {@link routeBufferedCall}; when no upstream answers, the hold is cancelled and the error rethrown.
 * @throws the hold's refusal (402 InsufficientCreditError, 429 RateLimitError) or the router's error.
 */
export async function callAfterHold<T>(
  bill: RequestBill,
  plan: readonly Attempt[],
  req: GatewayRequest,
  caller: AuthenticatedKey,
  build: Parameters<typeof routeBufferedCall<T>>[2],
  parse: Parameters<typeof routeBufferedCall<T>>[3],
): ReturnType<typeof routeBufferedCall<T>> {
  await bill.confirmed;
  return routeBufferedCall(plan, routeOptions(req, caller), build, parse).catch(async (err: unknown) => {
    await bill.cancel();
    throw err;
  });
}

import type { GatewayRequest } from '../http/types';
import { SETTLE_TIMEOUT_MS } from '../config/stack-contract';

/**
 * When the request's own function can no longer settle its hold (epoch ms): its deadline plus the
 * settle reserve (edge/function-url.ts), i.e. the invocation's end. Undefined when the host sets no
 * deadline (the hold then lives the billing default, 15 minutes).
 */
export function holdEndsAt(req: GatewayRequest): number | undefined {
  return req.deadline === undefined ? undefined : req.deadline + SETTLE_TIMEOUT_MS + 1_000;
}

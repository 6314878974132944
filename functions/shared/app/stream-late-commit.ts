import type { StreamResult } from '../http/types';
import type { routeStream } from '../routing/fallback-router';
import { asGatewayError } from '../errors/gateway-errors';
import { completionId, type CallContext } from './chat-call-context';
import { streamed } from './chat-stream';
import { settledWithin } from './held-json';
import { routingComment } from './routing-headers';

/** A keep-alive comment is sent this often while the first token is awaited after commit (ms). */
const KEEPALIVE_EVERY_MS = 10_000;
const KEEPALIVE_FRAME = ': modelmux waiting for the first token\n\n';

/**
 * A stream committed before its first token: 200 now, keep-alive comments while routing goes on,
 * then the answer, or — if every target failed — an error event (the status is already sent). The
 * routing headers are unknown at commit time, so the outcome they would carry goes out as an SSE
 * comment just before the first data chunk (see {@link routingComment}).
 */
export function streamedLate(ctx: CallContext, routing: Promise<Awaited<ReturnType<typeof routeStream>>>): StreamResult {
  let inner: StreamResult | undefined;
  async function* frames(): AsyncGenerator<string> {
    let outcome: Awaited<typeof routing> | undefined;
    let failure: unknown;
    const settled = routing.then(
      (o) => void (outcome = o),
      (e: unknown) => void (failure = e),
    );
    yield KEEPALIVE_FRAME;
    while (!(await settledWithin(settled, KEEPALIVE_EVERY_MS))) yield KEEPALIVE_FRAME;
    if (outcome === undefined) {
      await ctx.bill.cancel();
      if (!ctx.req.signal.aborted) yield* await ctx.surface.streamEncoder({ id: completionId(ctx.req.requestId), created: ctx.created, model: ctx.body.model, outcome: undefined }).failed(asGatewayError(failure));
      return;
    }
    inner = streamed(ctx, outcome, routingComment(outcome));
    yield* inner.frames;
  }
  return {
    kind: 'stream',
    status: 200,
    headers: {},
    frames: frames(),
    after: async () => {
      if (inner === undefined) {
        // The client left during the keep-alive phase: an answer that started anyway is stopped and
        // billed as aborted (prompt, and the first batch it produced), never dropped.
        const outcome = await routing.catch(() => undefined);
        if (outcome === undefined) return ctx.bill.cancel();
        inner = streamed(ctx, outcome);
      }
      await inner.after?.();
    },
  };
}

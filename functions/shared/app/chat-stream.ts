import { openAiUsage, type ChunkParts, type Usage } from '../openai/chat-response';
import { createCompletionAssembler } from '../openai/completion-assembler';
import type { TokenUsage } from '../usage/token-usage';
import { GatewayError, UpstreamUnavailableError } from '../errors/gateway-errors';
import type { StreamResult } from '../http/types';
import { UpstreamAttemptError } from '../providers/types';
import { overheadMs } from '../routing/attempt-loop';
import type { routeStream } from '../routing/fallback-router';
import { warmTokenizer } from '../usage/estimate';
import { logger } from '../observability/logger';
import { recordOverhead, recordTimeToFirstToken } from '../observability/metrics';
import { settleRequest, usageEntry, type BillableUsage } from './settle-request';
import { routingHeaders } from './routing-headers';
import { completionId, usdOf, type CallContext } from './chat-call-context';
import { answerUsage, completionText, estimateOr } from './chat-billable-usage';

/**
 * The stream: the first chunk has already arrived (fallback is over). Parts are handed to the
 * surface's encoder as they come (app/chat-surface.ts: chat chunks, Anthropic events, …); its
 * `complete` frames only after a finished answer. A failure after the first chunk ends the stream with
 * the encoder's error event and the tokens produced so far are still billed.
 *
 * Billing counts what the upstream produced (every batch as it is received, the first one included),
 * not only what reached the client: a client that leaves before a batch is written still caused it.
 * @param preface frames sent before the first chunk (the routing comment of a late-committed stream).
 */
export function streamed(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeStream>>, preface?: string): StreamResult {
  recordTimeToFirstToken(Date.now() - ctx.req.receivedAt);
  recordOverhead(overheadMs(ctx.req.receivedAt, outcome.attempts));
  const encoder = ctx.surface.streamEncoder({ id: completionId(ctx.req.requestId), created: ctx.created, model: ctx.body.model, outcome });
  let usage: TokenUsage | undefined;
  // What was produced, assembled as a buffered answer is, so an estimate counts the same text either way.
  const produce = createCompletionAssembler();
  const text = (): string => completionText(produce.result().choices);
  let status: 'complete' | 'partial' | 'aborted' = 'partial';
  /** The usage the final chunk reported (and priced): the settle bills exactly it. */
  let finalUsage: BillableUsage | undefined;
  /** The first choice's finish reason, for the ledger (`GET /v1/generation`). */
  let finishReason: string | null | undefined;
  const produced = (batch: readonly ChunkParts[]): void => {
    produce.push(batch);
    for (const parts of batch) {
      if (parts.usage) usage = parts.usage;
      for (const c of parts.choices) if (c.index === 0 && c.finish_reason != null) finishReason = c.finish_reason;
    }
  };
  produced(outcome.first);

  /** The final usage, priced: what the settle will bill, with `cost` (USD). */
  const pricedFinal = async (): Promise<Usage> => {
    // An answer cut at its hold (usage/output-meter.ts) reports our count, not the upstream's.
    const cut = outcome.outputCut();
    finalUsage = await answerUsage(ctx.body, outcome.attempt.target, usage, cut, text);
    const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: finalUsage, status, finishReason });
    return { ...openAiUsage(finalUsage.tokens), cost: usdOf(ctx.bill.charge(entry).costNanoUsd) };
  };

  async function* frames(): AsyncGenerator<string> {
    // The function's time is finite: stop the upstream at the deadline, so the stream ends with an
    // error event and the ledger is settled within the reserve, instead of Lambda killing the
    // invocation mid-answer with nothing billed and no end signalled to the client.
    const deadline = ctx.req.deadline;
    const deadlineTimer = deadline === undefined ? undefined : setTimeout(() => outcome.close('deadline'), Math.max(0, deadline - Date.now()));
    try {
      if (preface !== undefined) yield preface;
      for (let batch: ChunkParts[] | undefined = outcome.first; batch !== undefined; ) {
        for (const parts of batch) yield* encoder.parts(parts);
        const next = await outcome.rest.next();
        batch = next.done === true ? undefined : next.value;
        if (batch !== undefined) produced(batch);
      }
      status = 'complete';
      yield* await encoder.complete(encoder.wantsFinalUsage ? await pricedFinal() : undefined);
    } catch (err) {
      if (ctx.req.signal.aborted) return;
      logger.warn('stream failed after first chunk', { requestId: ctx.req.requestId, error: describe(err) });
      yield* await encoder.failed(midStreamError(err));
    } finally {
      if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
      outcome.close();
      if (ctx.req.signal.aborted && status !== 'complete') status = 'aborted';
    }
  }

  return {
    kind: 'stream',
    status: 200,
    headers: routingHeaders(outcome),
    frames: frames(),
    after: async () => {
      // Frames that never ran (the client left before the first byte) leave the upstream open: stop it.
      outcome.close();
      if (ctx.req.signal.aborted && status !== 'complete') status = 'aborted';
      const billable = status !== 'complete' ? await estimateOr(usage, ctx.body, outcome.attempt.target, text()) : (finalUsage ?? (await answerUsage(ctx.body, outcome.attempt.target, usage, outcome.outputCut(), text)));
      const entry = usageEntry({ requestedModel: ctx.body.model, attempt: outcome.attempt, attempts: outcome.attempts, usage: billable, status, finishReason });
      await settleRequest(ctx.bill, entry, { requestId: ctx.req.requestId, receivedAt: ctx.req.receivedAt, attempts: outcome.attempts.length });
      await warmTokenizer();
    },
  };
}

function midStreamError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const detail = err instanceof UpstreamAttemptError ? err.failure.kind : 'connection';
  return new UpstreamUnavailableError(502, `The upstream model failed mid-stream (${detail}); the answer above is incomplete. Tokens delivered were billed.`);
}

function describe(err: unknown): string {
  return err instanceof UpstreamAttemptError ? `${err.failure.kind}: ${err.failure.message}` : err instanceof Error ? err.name : 'unknown';
}

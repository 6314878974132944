import { settle, type LedgerEntryInput } from '../billing/ledger';
import { logger } from '../observability/logger';
import type { Attempt } from '../routing/attempt-plan';
import type { AttemptRecord } from '../routing/chat-router';

/** What one answered request used, for the ledger (tokens). */
export interface BillableUsage {
  promptTokens: number;
  completionTokens: number;
  /** True when the upstream sent no usage and the counts come from our tokenizer. */
  estimated: boolean;
}

/** Everything the ledger needs about one answered request. */
export interface SettleInput {
  accountId: string;
  requestId: string;
  /** The model the client asked for. */
  requestedModel: string;
  /** The attempt that answered: its public model and target are what is billed, at its own price. */
  attempt: Attempt;
  attempts: readonly AttemptRecord[];
  usage: BillableUsage;
  status: 'complete' | 'partial' | 'aborted';
  /** Epoch ms the request arrived (its latency is logged as of the settle: the last byte is out). */
  receivedAt: number;
}

/**
 * Writes the ledger entry and debits the account (one transaction, idempotent on the request id).
 * Never throws: it runs after the client has its answer. A write that still fails after the ledger's
 * own retries is logged at error level with the whole entry, so it can be replayed (`replayable`).
 */
export async function settleRequest(input: SettleInput): Promise<void> {
  const entry: LedgerEntryInput = {
    accountId: input.accountId,
    requestId: input.requestId,
    publicModel: input.requestedModel,
    servedModel: input.attempt.publicModel,
    provider: input.attempt.target.provider,
    promptTokens: input.usage.promptTokens,
    completionTokens: input.usage.completionTokens,
    inputPrice: input.attempt.target.displayedPrice.input,
    outputPrice: input.attempt.target.displayedPrice.output,
    usageEstimated: input.usage.estimated,
    fallbackPath: input.attempts.map((a) => `${a.publicModel}@${a.provider}/${a.upstreamModel}:${a.outcome}`),
    status: input.status,
  };
  try {
    const latencyMs = Date.now() - input.receivedAt;
    const result = await settle(entry);
    // The request's one log line: ids, models, provider, tokens, cost, latency — never text or keys.
    logger.info('request', {
      requestId: entry.requestId,
      latencyMs,
      status: entry.status,
      attempts: input.attempts.length,
      model: entry.publicModel,
      servedModel: entry.servedModel,
      provider: entry.provider,
      promptTokens: entry.promptTokens,
      completionTokens: entry.completionTokens,
      usageEstimated: entry.usageEstimated,
      costNanoUsd: result.costNanoUsd,
      freeTokensUsed: result.freeTokensUsed,
      alreadySettled: result.alreadySettled,
    });
  } catch (err) {
    logger.error('ledger write failed; replay this entry', { replayable: entry, error: err as Error });
  }
}

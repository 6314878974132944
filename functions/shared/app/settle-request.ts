import { settle, type LedgerEntryInput } from '../billing/ledger';
import { byokFeePricesFor, displayedPricesFor } from '../catalogue/catalogue';
import { logger } from '../observability/logger';
import { recordSettled, recordSettleFailure } from '../observability/metrics';
import { traced } from '../observability/tracer';
import { suspectStoreOutage } from '../store/store-errors';
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
  /** The attempt that answered: its public model and target are what is billed, at its own price (long-prompt tier included). */
  attempt: Attempt;
  attempts: readonly AttemptRecord[];
  usage: BillableUsage;
  status: 'complete' | 'partial' | 'aborted';
  /** Epoch ms the request arrived (its latency is logged as of the settle: the last byte is out). */
  receivedAt: number;
  /** SHA-256 hex of the API key that made the request (the ledger's per-key grouping, key usage). */
  keyHash?: string;
}

/**
 * The longest a settle may take once the answer is out (ms). The function keeps this much (plus the
 * time to write the last bytes) back from its timeout (edge/function-url.ts SETTLE_RESERVE_MS), so a
 * settle that outlasts it — the SDK alone may retry 3 × 3 s (store/dynamo.ts) — is given up and
 * logged for replay while the invocation still runs, instead of being frozen or killed mid-write
 * with no log line at all.
 */
export const SETTLE_TIMEOUT_MS = 4_000;

/**
 * Writes the ledger entry and debits the account (one transaction, idempotent on the request id).
 * Never throws: it runs after the client has its answer. A write that fails after the ledger's own
 * retries, or has not finished within `timeoutMs`, is logged at error level with the whole entry, so
 * it can be replayed (`replayable`). Replaying an entry that did land after all is harmless: the
 * ledger write is conditional on the request id being new, so the account is charged once.
 * @param timeoutMs how long to wait for the write (ms); default {@link SETTLE_TIMEOUT_MS}.
 */
export async function settleRequest(input: SettleInput, timeoutMs: number = SETTLE_TIMEOUT_MS): Promise<void> {
  // The served target's own displayed price, its long-prompt tier included (Gemini 2.5 Pro > 200K).
  // [issue 11, BYOK] An answer made with the account's own provider key is billed the platform fee
  // only (displayed − upstream price: the 5.5%), and says so in the ledger (`byok: true`).
  const byok = input.attempt.byok !== undefined;
  const price = byok ? byokFeePricesFor(input.attempt.target, input.usage.promptTokens) : displayedPricesFor(input.attempt.target, input.usage.promptTokens);
  const entry: LedgerEntryInput = {
    accountId: input.accountId,
    requestId: input.requestId,
    publicModel: input.requestedModel,
    servedModel: input.attempt.publicModel,
    provider: input.attempt.target.provider,
    promptTokens: input.usage.promptTokens,
    completionTokens: input.usage.completionTokens,
    inputPrice: price.input,
    outputPrice: price.output,
    usageEstimated: input.usage.estimated,
    fallbackPath: input.attempts.map((a) => `${a.publicModel}@${a.provider}/${a.upstreamModel}:${a.outcome}`),
    status: input.status,
    ...(input.keyHash === undefined ? {} : { keyHash: input.keyHash }),
    ...(byok ? { byok: true } : {}),
  };
  const latencyMs = Date.now() - input.receivedAt;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), timeoutMs);
  });
  const writing = traced('settle', () => settle(entry));
  try {
    const result = await Promise.race([writing, expired]);
    if (result === 'expired') {
      // Admission must not go on trusting its caches (billing/admit.ts) while this write hangs.
      suspectStoreOutage();
      recordSettleFailure();
      logger.error('ledger write did not finish in time; replay this entry', { replayable: entry, timeoutMs });
      // It may still land (or fail) later, e.g. when a frozen container thaws: say which, for the replay.
      writing.then(
        () => logger.warn('ledger write landed after its time limit; its replay is a no-op', { requestId: entry.requestId }),
        () => undefined,
      );
      return;
    }
    if (!result.alreadySettled) recordSettled({ promptTokens: entry.promptTokens, completionTokens: entry.completionTokens, costNanoUsd: result.costNanoUsd, estimated: entry.usageEstimated });
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
    recordSettleFailure();
    logger.error('ledger write failed; replay this entry', { replayable: entry, error: err as Error });
  } finally {
    clearTimeout(timer);
  }
}

import type { RequestBill } from '../billing/request-bill';
import type { SettledStatus, UsageEntry } from '../billing/settle';
import { attemptPrices } from '../billing/hold-demand';
import { logger } from '../observability/logger';
import { recordSettled, recordSettleFailure } from '../observability/metrics';
import { traced } from '../observability/tracer';
import type { Attempt } from '../routing/attempt-plan';
import type { AttemptRecord } from '../routing/attempt-contract';
import { recordSpeed } from '../routing/target-speed';
import { cacheEntryFields } from '../billing/ledger';
import type { TokenUsage } from '../usage/token-usage';

/** What one answered request used, for the ledger (tokens, by bucket: usage/token-usage.ts). */
export interface BillableUsage {
  tokens: TokenUsage;
  /** True when the upstream sent no usage and the counts come from our tokenizer. */
  estimated: boolean;
}

/** Everything the ledger needs about one answered request. */
export interface SettleInput {
  /** The model the client asked for. */
  requestedModel: string;
  /** The attempt that answered: its public model and target are what is billed, at its own price (long-prompt tier included). */
  attempt: Attempt;
  attempts: readonly AttemptRecord[];
  usage: BillableUsage;
  status: Exclude<SettledStatus, 'orphaned'>;
  /** The first choice's finish reason, when the answer gave one. */
  finishReason?: string | null | undefined;
}

/** Answers whose speed is recorded (a stream builds its entry twice: for its usage chunk and its settle). */
const measured = new WeakSet<readonly AttemptRecord[]>();

/**
 * The ledger entry of an answered request: the served attempt's own price, its long-prompt tier
 * included (Gemini 2.5 Pro > 200K) — the platform fee alone when it was served with the account's own
 * provider key (BYOK, `byok: true`: each bucket's fee) — its cache buckets with their prices, the
 * fallback path, the upstream model, the first token's time and the finish reason
 * (`GET /v1/generation`). A complete answer also feeds the target's speed figures
 * (routing/target-speed.ts).
 */
export function usageEntry(input: SettleInput): UsageEntry {
  const t = input.usage.tokens;
  const price = attemptPrices(input.attempt, t.prompt);
  const answered = input.attempts.at(-1);
  const firstTokenAt = answered?.startedAt !== undefined && answered.firstTokenMs !== undefined ? answered.startedAt + answered.firstTokenMs : undefined;
  if (answered?.firstTokenMs !== undefined && firstTokenAt !== undefined && input.status === 'complete' && !measured.has(input.attempts)) {
    // This container's speed figures of the target (OpenRouter's latency/throughput sort), once per answer.
    measured.add(input.attempts);
    recordSpeed(input.attempt.target.key, answered.firstTokenMs, t.completion, Date.now() - firstTokenAt);
  }
  return {
    publicModel: input.requestedModel,
    servedModel: input.attempt.publicModel,
    provider: input.attempt.target.provider,
    promptTokens: t.prompt,
    completionTokens: t.completion,
    inputPrice: price.input,
    outputPrice: price.output,
    ...cacheEntryFields(t, price),
    usageEstimated: input.usage.estimated,
    fallbackPath: input.attempts.map((a) => `${a.publicModel}@${a.provider}/${a.upstreamModel}:${a.outcome}`),
    status: input.status,
    byok: input.attempt.byok !== undefined,
    upstreamModel: input.attempt.target.upstreamModel,
    ...(firstTokenAt !== undefined && { firstTokenAt }),
    ...(input.finishReason != null && { finishReason: input.finishReason }),
  };
}

/**
 * Settles an answered request through its bill (durable: in-process, then the settle queue) and
 * writes the request's one log line: ids, models, provider, tokens, cost, latency — never text or
 * keys. Never throws: it runs after the client has its answer.
 */
export async function settleRequest(bill: RequestBill, done: UsageEntry, meta: { requestId: string; receivedAt: number; attempts: number }): Promise<void> {
  const entry: UsageEntry = { ...done, endedAt: Date.now() };
  const result = await traced('settle', () => bill.settle(entry));
  // Queued (not landed in-process) counts as a settle failure for the alarms; it lands later.
  if (result === undefined) recordSettleFailure();
  else if (!result.alreadySettled) recordSettled({ promptTokens: entry.promptTokens, completionTokens: entry.completionTokens, costNanoUsd: result.costNanoUsd, estimated: entry.usageEstimated });
  logger.info('request', {
    requestId: meta.requestId,
    latencyMs: Date.now() - meta.receivedAt,
    status: entry.status,
    attempts: meta.attempts,
    model: entry.publicModel,
    servedModel: entry.servedModel,
    provider: entry.provider,
    promptTokens: entry.promptTokens,
    completionTokens: entry.completionTokens,
    usageEstimated: entry.usageEstimated,
    costNanoUsd: result?.costNanoUsd,
    freeTokensUsed: result?.freeTokensUsed,
    queued: result === undefined,
  });
}

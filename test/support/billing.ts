/** Direct use of the billing core in tests: one hold and its settle, as a request would make them. */
import { placeHold } from '../../functions/shared/billing/hold';
import type { HoldDemand } from '../../functions/shared/billing/hold-plan';
import type { HoldRecord } from '../../functions/shared/billing/hold-record';
import { newRequestId } from '../../functions/shared/http/request-id';
import { settleHold, type SettleResult, type UsageEntry } from '../../functions/shared/billing/settle';

/** gpt-4o's displayed prices (µUSD per 1M tokens): $2.50 / $10 × 1.055. */
export const GPT_4O_PRICES = { inputPrice: 2_637_500, outputPrice: 10_550_000 };

/** A demand of `prompt` + `output` tokens at gpt-4o's prices. */
export function demandOf(prompt: number, output: number, prices = GPT_4O_PRICES): HoldDemand {
  return { promptTokens: prompt, outputTokens: output, outputLimitPerChoice: output, choices: 1, ...prices };
}

/** Places a hold for `demand` on the account with the key. */
export function hold(accountId: string, keyHash: string, demand: HoldDemand, requestId = newRequestId()): Promise<HoldRecord> {
  return placeHold(
    { accountId, keyHash, requestId, publicModel: 'gpt-4o', demand, promptTokensEstimate: demand.promptTokens, expiresAt: Date.now() + 60_000 },
    () => undefined,
  );
}

/** A ledger entry for usage at gpt-4o's prices. */
export function entryOf(promptTokens: number, completionTokens: number, over: Partial<UsageEntry> = {}): UsageEntry {
  return {
    publicModel: 'gpt-4o',
    servedModel: 'gpt-4o',
    provider: 'openai',
    promptTokens,
    completionTokens,
    ...GPT_4O_PRICES,
    usageEstimated: false,
    fallbackPath: ['gpt-4o@openai/gpt-4o:ok'],
    status: 'complete',
    ...over,
  };
}

/** Holds, then settles with the given usage (a whole request's billing). */
export async function billRequest(accountId: string, keyHash: string, promptTokens: number, completionTokens: number): Promise<SettleResult> {
  const h = await hold(accountId, keyHash, demandOf(promptTokens, completionTokens));
  return settleHold(h, { kind: 'bill', entry: entryOf(promptTokens, completionTokens) });
}

import type { RequestBill } from '../billing/request-bill';
import type { SettledStatus, UsageEntry } from '../billing/settle';
import { attemptPrices } from '../billing/hold-demand';
import { cacheEntryFields } from '../billing/ledger';
import type { CatalogueTarget } from '../catalogue/catalogue';
import { boundedCallerId, type ChatCompletionRequest } from '../openai/chat-request';
import type { CompletionChoice } from '../openai/chat-response';
import { logger } from '../observability/logger';
import { recordSettled, recordSettleFailure } from '../observability/metrics';
import { traced } from '../observability/tracer';
import type { Attempt } from '../routing/attempt-plan';
import type { AttemptRecord } from '../routing/attempt-contract';
import { sessionIdOf } from '../routing/sticky';
import { recordSpeed } from '../routing/target-speed';
import { estimateTextTokens } from '../usage/estimate';
import { estimateChatPromptTokens } from '../usage/prompt-tokens';
import { tokenUsage, type TokenUsage } from '../usage/token-usage';

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

/** Who a request was made for, as the ledger entry records it (each at most 64 bytes: openai/chat-request.ts `boundedCallerId`). */
export type CallerIds = Pick<UsageEntry, 'user' | 'sessionId'>;

/**
 * The end user and the session a chat request names (docs/DATA-MODEL.md §4): the end user is
 * OpenAI's `safety_identifier`, else `user` (OpenAI's and OpenRouter's; on `/v1/messages` from
 * `metadata.user_id`, on the Responses API its own `user`); the session is {@link sessionIdOf}'s.
 * @param headers the request's headers, names lower-case.
 * @throws InvalidRequestError (400, `param` the field or header) for an id longer than the ledger records.
 */
export function callerIds(body: ChatCompletionRequest, headers: Readonly<Record<string, string | undefined>>): CallerIds {
  const named = body.safety_identifier != null && body.safety_identifier !== '' ? body.safety_identifier : body.user;
  const user = named === undefined || named === '' ? undefined : boundedCallerId(named, named === body.user ? 'user' : 'safety_identifier');
  const sessionId = sessionIdOf(body, headers);
  return { ...(user !== undefined && { user }), ...(sessionId !== undefined && { sessionId }) };
}

/** The bill, writing `ids` on the ledger entry it settles (the hold is unchanged: an orphaned request's entry has none). */
export function recordingCaller(bill: RequestBill, ids: CallerIds): RequestBill {
  if (ids.user === undefined && ids.sessionId === undefined) return bill;
  return { ...bill, settle: (entry) => bill.settle({ ...entry, ...ids }) };
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
  else if (!result.alreadySettled)
    recordSettled({
      promptTokens: entry.promptTokens,
      completionTokens: entry.completionTokens,
      costNanoUsd: result.costNanoUsd,
      estimated: entry.usageEstimated,
    });
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

// The tokens a chat answer is billed for: the upstream's own `usage` when it sent one, else our
// estimate — the prompt by THE counting rule of its hold (usage/prompt-tokens.ts: text, tools, media),
// the completion from the text, reasoning and tool calls produced, assembled the same way whether the
// answer was streamed or buffered (so the same upstream bytes bill the same).

/** The upstream's usage, as billed (not estimated). */
function fromUsage(u: TokenUsage): BillableUsage {
  return { tokens: u, estimated: false };
}

/** What the choices of an answer produced, for a token estimate: content, reasoning, tool call names and inputs. */
export function completionText(choices: readonly CompletionChoice[]): string {
  let text = '';
  for (const c of choices) {
    text += (c.message.content ?? '') + (c.message.reasoning_content ?? '');
    for (const t of c.message.tool_calls ?? []) text += t.type === 'function' ? t.function.name + t.function.arguments : t.custom.name + t.custom.input;
  }
  return text;
}

/**
 * Our count of a request's tokens, when the upstream gave none, on the target that served it. Billing
 * must never fail for want of a tokenizer: if it cannot load, a conservative characters/3 count is used
 * (still marked estimated).
 */
async function estimate(body: ChatCompletionRequest, target: CatalogueTarget, text: string): Promise<BillableUsage> {
  try {
    return { tokens: tokenUsage({ prompt: await estimateChatPromptTokens(body, target), completion: await estimateTextTokens(text) }), estimated: true };
  } catch (err) {
    logger.error('tokenizer unavailable; billing a characters/3 estimate', { error: err as Error });
    const promptChars = JSON.stringify(body.messages).length + JSON.stringify(body.tools ?? '').length;
    return { tokens: tokenUsage({ prompt: Math.ceil(promptChars / 3), completion: Math.ceil(text.length / 3) }), estimated: true };
  }
}

/**
 * A stream that did not finish: the upstream's usage when it sent one (some send it before the end),
 * else our estimate of what was produced. Never less than what the client received.
 */
export async function estimateOr(usage: TokenUsage | undefined, body: ChatCompletionRequest, target: CatalogueTarget, text: string): Promise<BillableUsage> {
  const est = await estimate(body, target, text);
  if (usage === undefined) return est;
  const completion = Math.max(usage.completion, est.tokens.completion);
  return { tokens: { ...usage, completion }, estimated: usage.completion < est.tokens.completion };
}

/**
 * The billable usage of an answer that finished: the upstream's own usage, else our estimate of the
 * prompt and of `text()` (the output produced). An answer cut at its held output
 * (`outputCut`, routing/fallback-router.ts) bills the output tokens the meter counted (the settle
 * charges the hold at most) and the upstream's prompt count when it sent one: any usage the upstream
 * sent was not the answer's.
 */
export async function answerUsage(
  body: ChatCompletionRequest,
  target: CatalogueTarget,
  usage: TokenUsage | undefined,
  outputCut: number | undefined,
  text: () => string,
): Promise<BillableUsage> {
  if (outputCut === undefined) return usage !== undefined ? fromUsage(usage) : estimate(body, target, text());
  // The upstream's prompt buckets when it sent them, our count of the prompt otherwise; the output cut.
  const prompt = usage ?? (await estimate(body, target, '')).tokens;
  return { tokens: { ...prompt, completion: outputCut, reasoning: Math.min(prompt.reasoning, outputCut) }, estimated: true };
}

import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { chatDemand } from '../billing/hold-demand';
import type { RequestBill } from '../billing/request-bill';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import type { GatewayRequest, GatewayResult, JsonResult } from '../http/types';
import { chatCompletionRequest } from '../openai/chat-request';
import type { ChatCompletion } from '../openai/chat-response';
import type { RoutedChatRequest } from '../providers/types';
import { openAiUsage } from '../openai/chat-response';
import { parseJsonBody } from '../openai/parse-body';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { planAttempts, requestFallbacks, requiredCapabilities } from '../routing/attempt-plan';
import { effectivePreferences, honouringParameters } from '../routing/attempt-plan';
import { splitModelSuffix } from '../openai/provider-preferences';
import { adjustChatRequest, hidingReasoning, withHeaders } from './request-adjust';
import { overheadMs } from '../routing/attempt-loop';
import { routeBuffered, routeStream } from '../routing/fallback-router';
import { warmTokenizer } from '../usage/estimate';
import { dashboardUrl } from '../http/public-url';
import { recordOverhead } from '../observability/metrics';
import type { AuthenticatedKey } from '../accounts/authenticate';
import { authenticateRequest, billRequest, routeOptions } from './guard';
import { answerUsage, callerIds, completionText, recordingCaller, settleRequest, usageEntry } from './settle-request';
import { conversationKey, rememberSticky, stickyFirst } from '../routing/sticky';
import { commitAt } from '../routing/timeouts';
import {
  chatSurface,
  completionId,
  heldJson,
  routingHeaders,
  settledWithin,
  streamed,
  streamedLate,
  usdOf,
  type CallContext,
  type ChatSurface,
} from './chat-answer';

/**
 * `POST /v1/chat/completions`: authenticate → validate → {@link runChatExchange}.
 */
export async function chatCompletions(req: GatewayRequest): Promise<GatewayResult> {
  const caller = await authenticateRequest(req);
  return runChatExchange(req, caller, parseJsonBody(req.body, chatCompletionRequest));
}

/**
 * One chat exchange for an authenticated caller and a validated chat request: resolve the model (and
 * the client's `models` fallback list) → hold the most it can cost (402/429 before any upstream call;
 * billing/request-bill.ts) → route (fallback inside) → answer (`chat.completion`, or its chunks as
 * SSE) → settle the hold after the answer is out. When this container's view of the account predicts
 * the hold, the upstream is connected while the hold is written; nothing reaches the client before
 * the hold is confirmed, and an upstream started for a refused hold is aborted. `surface` writes the
 * answer in the client's API (app/chat-answer.ts: a buffered body — also one held past the budget —
 * its stream events, its error bodies after a commit); `POST /v1/responses` and `POST /v1/messages`
 * run their requests through this same function, so every API shares one plan, router, admission,
 * settle and error rules. A body carrying its native original (providers/types.ts `NATIVE_REQUEST`)
 * reaches an upstream that speaks that protocol unchanged.
 * @throws GatewayError before any byte is sent (404 unknown model, 402, 400, 5xx when no upstream answered).
 */
export async function runChatExchange(
  req: GatewayRequest,
  caller: AuthenticatedKey,
  asked: RoutedChatRequest,
  surface: ChatSurface = chatSurface(asked.stream_options?.include_usage === true),
): Promise<GatewayResult> {
  // A name is a model id or an alias; `:nitro` / `:floor` and `provider` steer the plan.
  const named = splitModelSuffix(asked.model);
  const entry = getModel(named.model, 'chat');
  // An output budget over the cap is lowered, reasoning a model cannot do dropped, each with its header.
  const { body, headers } = adjustChatRequest(asked, entry);
  const shown = asked.reasoning?.exclude === true ? hidingReasoning(surface) : surface;
  return withHeaders(await exchange(req, caller, body, shown, entry, named.sort), headers);
}

async function exchange(
  req: GatewayRequest,
  caller: AuthenticatedKey,
  body: RoutedChatRequest,
  surface: ChatSurface,
  entry: ReturnType<typeof getModel>,
  sort: ReturnType<typeof splitModelSuffix>['sort'],
): Promise<GatewayResult> {
  const fallbacks = requestFallbacks(body.models, CATALOGUE);
  const prefs = effectivePreferences(body.provider, sort);
  // The account's own provider keys (BYOK) go first in the plan, and price its attempts
  // at the platform fee alone (the hold's most, and the settle's price: billing/hold-demand.ts).
  const [credentials, byok] = await Promise.all([loadUpstreamCredentials(), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  // A conversation goes back to the target whose prompt cache it warmed (routing/sticky.ts).
  const conversation = conversationKey(caller.accountId, body, req.headers);
  const planned = stickyFirst(planAttempts(entry, CATALOGUE, credentials, requiredCapabilities(body), fallbacks, byok, prefs), conversation);
  const plan = prefs?.require_parameters === true ? honouringParameters(planned, body, entry.id, new Set([entry.id, ...fallbacks.map((f) => f.id)])) : planned;
  const { demand, promptTokensEstimate, outputLimit } = chatDemand(body, entry, plan);
  const ids = callerIds(body, req.headers);
  const bill = recordingCaller(billRequest(req, caller, body.model, { demand, promptTokensEstimate }), ids);
  if (!bill.predicted) await bill.confirmed;
  // The held output limit always goes upstream, so no completion can outgrow the hold.
  const sent: RoutedChatRequest = body.max_completion_tokens == null && body.max_tokens == null ? { ...body, max_tokens: outputLimit } : body;
  // Stops the upstream when the client leaves or the hold is refused.
  const upstream = new AbortController();
  // No answer outgrows its hold, whatever the upstream does with the limit (usage/output-meter.ts).
  const opts = { ...routeOptions(req, caller), signal: AbortSignal.any([req.signal, upstream.signal]), outputBudget: demand.outputTokens };
  const ctx: CallContext = { req, body, bill, created: Math.floor(req.receivedAt / 1000), surface };
  if (body.stream !== true) {
    // Routing runs to the function's deadline; the status waits for the answer until the budget,
    // then is committed with JSON-whitespace beats (chat-answer.ts `heldJson`).
    const routing = routeBuffered(sent, plan, opts);
    await stickyAfterHold(routing, conversation, bill, upstream);
    const answered = routing.catch(cancelling(bill));
    if (await settledWithin(answered, commitAt(req, false) - Date.now())) return withRateHeaders(bill, await buffered(ctx, await answered));
    return withRateHeaders(
      bill,
      heldJson(
        answered.then((outcome) => buffered(ctx, outcome)),
        req.signal,
        req.requestId,
        surface.errorBody,
      ),
    );
  }
  const routing = routeStream(sent, plan, opts);
  await stickyAfterHold(routing, conversation, bill, upstream);
  // Counted from the request's arrival: the hold's time is part of what the client waits.
  const early = await settledWithin(routing, Math.max(0, commitAt(req, true) - Date.now()));
  return withRateHeaders(bill, early ? streamed(ctx, await routing.catch(cancelling(bill))) : streamedLate(ctx, routing));
}

/** OpenAI's `x-ratelimit-*-requests` headers on every answer, from the hold's own write. */
export function withRateHeaders<R extends GatewayResult>(bill: RequestBill, result: R): R {
  return { ...result, headers: { ...result.headers, ...bill.rateHeaders() } };
}

/**
 * Waits for the hold before anything can reach the client. A refused hold aborts the upstream
 * (as a client abort: no breaker tick) and closes a stream that already started.
 */
async function holdBeforeAnswer(bill: RequestBill, routing: Promise<unknown>, upstream: AbortController): Promise<void> {
  try {
    await bill.confirmed;
  } catch (err) {
    upstream.abort();
    routing.then(
      (o) => (o as { close?: () => void }).close?.(),
      () => undefined,
    );
    throw err;
  }
}

/** A routing failure after the hold: release the hold (durably), then let the error answer. */
function cancelling(bill: RequestBill): (err: unknown) => Promise<never> {
  return async (err) => {
    await bill.cancel();
    throw err;
  };
}

/**
 * A buffered answer: the `chat.completion` (with `usage.cost`, USD), its routing headers, and the
 * settle of the bill after the body is sent (the upstream's usage, or our estimate when it sent none).
 */
async function buffered(ctx: CallContext, outcome: Awaited<ReturnType<typeof routeBuffered>>): Promise<JsonResult> {
  const { parts } = outcome;
  const billable = await answerUsage(ctx.body, outcome.attempt.target, parts.usage, outcome.outputCut, () => completionText(parts.choices));
  const entry = usageEntry({
    requestedModel: ctx.body.model,
    attempt: outcome.attempt,
    attempts: outcome.attempts,
    usage: billable,
    status: 'complete',
    finishReason: parts.choices[0]?.finish_reason,
  });
  const completion: ChatCompletion = {
    id: completionId(ctx.req.requestId),
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.body.model,
    choices: parts.choices,
    // `cost` (OpenRouter's): what this request was billed, USD — the same charge the settle writes.
    usage: { ...openAiUsage(billable.tokens), cost: usdOf(ctx.bill.charge(entry).costNanoUsd) },
  };
  // A string or absent, never null (OpenAI's OpenAPI description): only OpenAI-compatible hosts send one.
  if (typeof parts.system_fingerprint === 'string') completion.system_fingerprint = parts.system_fingerprint;
  recordOverhead(overheadMs(ctx.req.receivedAt, outcome.attempts));
  const body = ctx.surface.present(completion, parts);
  await ctx.surface.beforeBody?.(body);
  return {
    kind: 'json',
    status: 200,
    headers: routingHeaders(outcome),
    body,
    after: async () => {
      await settleRequest(ctx.bill, entry, { requestId: ctx.req.requestId, receivedAt: ctx.req.receivedAt, attempts: outcome.attempts.length });
      await warmTokenizer();
    },
  };
}

/**
 * Remembers the conversation's target once `routing` answers (sticky routing; a routing that fails, a
 * client error, is ignored here), and waits for the hold (chat-answer.ts `holdBeforeAnswer`).
 * @throws the hold's refusal (402, 429), having stopped the upstream.
 */
async function stickyAfterHold(
  routing: Promise<{ attempt: Parameters<typeof rememberSticky>[1] }>,
  conversation: Parameters<typeof rememberSticky>[0],
  bill: RequestBill,
  upstream: AbortController,
): Promise<void> {
  routing.then(
    (o) => rememberSticky(conversation, o.attempt),
    () => undefined,
  ); // may fail (a client error) while the hold is still being written
  await holdBeforeAnswer(bill, routing, upstream);
}

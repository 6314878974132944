import type { AuthenticatedKey } from '../accounts/authenticate';
import { loadAccountByok } from '../accounts/byok/byok-credentials';
import { CATALOGUE, getModel } from '../catalogue/catalogue';
import { loadUpstreamCredentials } from '../config/upstream-credentials';
import { dashboardUrl } from '../http/public-url';
import type { GatewayRequest, GatewayResult } from '../http/types';
import { chatMessages } from '../messages/to-chat';
import { countTokensRequest, forwardedHeaders, type CountTokensRequest } from '../messages/request';
import { resolveMessagesModel } from '../messages/model-names';
import { logger } from '../observability/logger';
import { parseJsonBody } from '../openai/parse-body';
import type { NativeRequest } from '../providers/types';
import { planAttempts } from '../routing/attempt-plan';
import { routeBufferedCall } from '../routing/fallback-router';
import { UpstreamAttemptError } from '../providers/types';
import { makeFailure } from '../providers/upstream-failure';
import { estimateTextTokens } from '../usage/estimate';
import { estimateChatPromptTokens } from '../usage/prompt-tokens';
import { chatCompletionRequest } from '../openai/chat-request';
import { safeParse } from '../validation/zod';
import { authenticateRequest, billRequest, routeOptions } from './guard';
import { inMessagesApi } from './messages';

/**
 * `POST /v1/messages/count_tokens` (Anthropic's): `{"input_tokens": n}` for a Messages prompt
 * (system, messages, tools), never billed. Exact for a Claude model — the upstream's own count
 * endpoint, through the router (its time limits, retries and breakers) with the platform's or the
 * account's own Anthropic key — and otherwise, or when that count fails, the gateway's tokenizer
 * estimate (usage/prompt-tokens.ts: the same count the hold uses; other models' tokenizers differ, so it
 * is approximate there). Admitted like any request: it takes a hold of nothing (the request-rate and
 * concurrency limits of the account and key apply; a 429 is `rate_limit_error`), released at once.
 */
export function countTokens(req: GatewayRequest): Promise<GatewayResult> {
  return inMessagesApi(req, async () => {
    const caller = await authenticateRequest(req);
    const body = parseJsonBody(req.body, countTokensRequest);
    const model = resolveMessagesModel(body.model);
    const bill = billRequest(req, caller, model, { demand: NOTHING, promptTokensEstimate: 0 });
    await bill.confirmed;
    try {
      const native: NativeRequest = { protocol: 'anthropic-messages', body, headers: forwardedHeaders(req.headers) };
      const inputTokens = (await exactCount(req, caller, model, native)) ?? (await estimateCount(body, model));
      return { kind: 'json', status: 200, headers: {}, body: { input_tokens: inputTokens } };
    } finally {
      await bill.cancel();
    }
  });
}

/** A hold of nothing: admission only (rate and concurrency limits). */
const NOTHING = { promptTokens: 0, outputTokens: 0, outputLimitPerChoice: 0, choices: 1, inputPrice: 0, outputPrice: 0 };

/** The upstream's own count from the model's own targets that can count; undefined when none can or all failed. */
async function exactCount(req: GatewayRequest, caller: AuthenticatedKey, model: string, native: NativeRequest): Promise<number | undefined> {
  const entry = getModel(model, 'chat');
  const own = entry.targets.map((t) => t.key);
  if (!entry.targets.some((t) => t.provider === 'anthropic')) return undefined;
  const [credentials, byok] = await Promise.all([loadUpstreamCredentials(), loadAccountByok(caller.accountId, dashboardUrl(req))]);
  const plan = planAttempts(entry, CATALOGUE, credentials, undefined, [], byok).filter(
    (a) => own.includes(a.target.key) && a.adapter.buildCountTokensRequest !== undefined,
  );
  if (plan.length === 0) return undefined;
  try {
    const out = await routeBufferedCall(
      plan,
      routeOptions(req, caller),
      (attempt, ctx) => attempt.adapter.buildCountTokensRequest?.(native, ctx),
      (text, attempt) => {
        const parse = attempt.adapter.parseCountTokensResponse;
        if (parse === undefined) throw new UpstreamAttemptError(makeFailure('server', 200, 'no count_tokens parser'));
        return parse(text);
      },
    );
    return out.result;
  } catch (err) {
    logger.warn('count_tokens: the upstream count failed; answering the estimate', { requestId: req.requestId, error: err as Error });
    return undefined;
  }
}

/**
 * The gateway's estimate: the conversation counted by the one rule holds and no-usage estimates use
 * (usage/prompt-tokens.ts, media at the model's first target's rate), plus the tool definitions' JSON.
 */
async function estimateCount(body: CountTokensRequest, model: string): Promise<number> {
  const tools = body.tools === undefined ? 0 : await estimateTextTokens(JSON.stringify(body.tools));
  const target = getModel(model, 'chat').targets[0];
  if (target === undefined) throw new Error(`catalogue entry ${model} has no target`);
  const chat = safeParse(chatCompletionRequest, { model, messages: chatMessages(body) });
  // A conversation with no chat counterpart (none here: count_tokens takes what /v1/messages takes) counts its JSON.
  if (!chat.success) return (await estimateTextTokens(JSON.stringify(body.messages))) + tools;
  return (await estimateChatPromptTokens(chat.data, target)) + tools;
}

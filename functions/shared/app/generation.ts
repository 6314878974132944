import { readState } from '../billing/account-state';
import { findLedgerEntry, type LedgerItem } from '../billing/ledger';
import { NANO_USD_PER_USD } from '../money/money';
import type { GatewayRequest, JsonResult } from '../http/types';
import { InvalidRequestError, NotFoundError } from '../errors/gateway-errors';
import { authenticateRequest } from './guard';

/**
 * `GET /v1/generation?id=<id>`: one request looked up afterwards, OpenRouter's `GET
 * /api/v1/generation` (peers.md A): model, provider, tokens, cost, latency, time to first token, the
 * attempts and fallback path, the finish reason, the caller's end user and session — from the request's ledger entry, no other table.
 * `id` is the request id (`x-request-id`) or an id made from it (`chatcmpl-…`, `resp_…`). Only the
 * API key that made the request may read it: any other key (the same account's included) gets the
 * 404 an unknown id gets, as does a request still in flight (OpenRouter: 404 until it is ready).
 */

/** Our request id inside any id derived from it (http/request-id.ts). */
const REQUEST_ID = /req_\d{13}_[0-9a-f]{16}/;

/** One attempt of the fallback path. */
interface AttemptView {
  model: string;
  provider: string;
  upstream_model: string;
  outcome: string;
}

/** The generation object (`data`). Tokens; USD (`total_cost`) and nano-USD; ms. */
export interface GenerationObject {
  id: string;
  created_at: string;
  /** The model the client asked for, and the public model that answered (after a fallback). */
  model: string;
  served_model: string;
  provider_name: string;
  upstream_model: string | null;
  status: LedgerItem['status'];
  finish_reason: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  /** Tokens paid with free tokens (prompt first). */
  free_tokens_used: number;
  /** True when the upstream sent no usage and the counts are our tokenizer's. */
  usage_estimated: boolean;
  /** What the request was billed, USD (= cost_nano_usd / 1e9) and nano-USD (the ledger's integer). */
  total_cost: number;
  cost_nano_usd: number;
  /** The prices billed, µUSD per 1M tokens (fee included; the fee alone when BYOK). */
  price: { prompt_micro_usd_per_mtok: number; completion_micro_usd_per_mtok: number };
  is_byok: boolean;
  /** ms from arrival to the answer's end; to its first token; from first token to the end. */
  latency: number | null;
  time_to_first_token: number | null;
  generation_time: number | null;
  attempts: number;
  fallback_path: AttemptView[];
  /** The caller's end user (OpenRouter's `external_user`: the request's `user`), and its session (OpenRouter's `session_id`); null when the request named none. */
  external_user: string | null;
  session_id: string | null;
}

/** @throws InvalidRequestError (400) without a usable `id`; NotFoundError (404) for none of the caller's. */
export async function generation(req: GatewayRequest): Promise<JsonResult> {
  const caller = await authenticateRequest(req);
  const raw = new URLSearchParams(req.query ?? '').get('id');
  if (raw === null || raw === '')
    throw new InvalidRequestError('Missing required query parameter: id (the request id from x-request-id, or the completion id).', {
      param: 'id',
      code: 'missing_required_parameter',
    });
  const requestId = REQUEST_ID.exec(raw)?.[0];
  const root = requestId === undefined ? undefined : await readState(caller.accountId, { consistent: true });
  const entry = requestId === undefined ? undefined : await findLedgerEntry(caller.accountId, requestId, root?.shards ?? 1);
  if (requestId === undefined || entry === undefined || entry.keyHash !== caller.keyHash) {
    throw new NotFoundError(`Generation ${raw} not found. It may still be in progress, or it was made with another API key.`, {
      param: 'id',
      code: 'generation_not_found',
    });
  }
  return { kind: 'json', status: 200, headers: { 'cache-control': 'no-store' }, body: { data: toGeneration(requestId, entry) } };
}

/** The generation object of a settled ledger entry. */
export function toGeneration(requestId: string, e: LedgerItem): GenerationObject {
  const arrivedAt = Number(requestId.slice(4, 17));
  return {
    id: requestId,
    created_at: new Date(arrivedAt).toISOString(),
    model: e.publicModel,
    served_model: e.servedModel,
    provider_name: e.provider,
    upstream_model: e.upstreamModel ?? null,
    status: e.status,
    finish_reason: e.finishReason ?? null,
    tokens_prompt: e.promptTokens,
    tokens_completion: e.completionTokens,
    free_tokens_used: e.freeTokensUsed,
    usage_estimated: e.usageEstimated,
    total_cost: e.costNanoUsd / NANO_USD_PER_USD,
    cost_nano_usd: e.costNanoUsd,
    price: { prompt_micro_usd_per_mtok: e.inputPrice, completion_micro_usd_per_mtok: e.outputPrice },
    is_byok: e.byok === true,
    latency: e.endedAt === undefined ? null : e.endedAt - arrivedAt,
    time_to_first_token: e.firstTokenAt === undefined ? null : e.firstTokenAt - arrivedAt,
    generation_time: e.endedAt === undefined || e.firstTokenAt === undefined ? null : e.endedAt - e.firstTokenAt,
    attempts: e.fallbackPath.length,
    fallback_path: e.fallbackPath.map(parseAttempt),
    external_user: e.user ?? null,
    session_id: e.sessionId ?? null,
  };
}

/** `model@provider/upstreamModel:outcome` (app/settle-request.ts) → its parts. */
function parseAttempt(step: string): AttemptView {
  const at = step.indexOf('@');
  const slash = step.indexOf('/', at);
  const colon = step.lastIndexOf(':');
  return { model: step.slice(0, at), provider: step.slice(at + 1, slash), upstream_model: step.slice(slash + 1, colon), outcome: step.slice(colon + 1) };
}

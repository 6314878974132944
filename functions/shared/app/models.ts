import { CATALOGUE, getModel, getModelAnyKind, priceValidUntil, type CatalogueEntry, type TokenPrices } from '../catalogue/catalogue';
import { servedTargetAt } from '../routing/attempt-plan';
import { now } from '../time/clock';
import type { GatewayRequest, GatewayResult } from '../http/types';
import { anthropicModelInfo, anthropicModelPage } from '../messages/model-list';
import { resolveMessagesModel } from '../messages/model-names';
import { inMessagesApi } from './messages';
import { authenticateRequest } from './guard';

/**
 * `GET /v1/models` and `GET /v1/models/{id}`: OpenAI's model objects (`{id, object:"model", created,
 * owned_by}`, providers.md §1.8) plus what a router's users need to choose: kind, context window,
 * capabilities and the displayed per-token prices in USD as decimal strings, as OpenRouter's models
 * API does (peers.md A, "Model list").
 */

/** Our model object. */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  kind: CatalogueEntry['kind'];
  description: string;
  context_length: number;
  max_output_tokens: number;
  capabilities: { tools: boolean; vision: boolean; reasoning: string; json_mode: boolean; files: boolean; audio: boolean };
  /**
   * USD per token, incl. the 5.5% platform fee, exact decimal strings, in force NOW (a request is billed
   * at the price in force when it starts); cache buckets in OpenRouter's names when the target has them.
   * `long_context`: the prices of a request whose prompt has more than `prompt_tokens_above` tokens,
   * when the model has such a tier. `pricing_valid_until`: when these prices next change (ISO 8601 UTC;
   * DeepSeek's weekday peak hours, a dated price change), or null when no change is known.
   * `pricing_source`: where the upstream price comes from (docs/prices.md).
   */
  pricing: {
    prompt: string;
    completion: string;
    input_cache_read?: string;
    input_cache_write?: string;
    input_cache_write_1h?: string;
    long_context?: { prompt_tokens_above: number; prompt: string; completion: string };
    pricing_valid_until: string | null;
    pricing_source: string;
  };
  /**
   * Other names that serve this model (catalogue/aliases.ts): `slug` (OpenRouter's `provider/model`),
   * `dated` (a snapshot id), `latest`, `deprecated` (a retired name this model is the documented
   * successor of). Each is accepted wherever a model is named.
   */
  aliases: Array<{ id: string; kind: CatalogueEntry['aliases'][number]['kind'] }>;
}

/**
 * Lists every model. Sent with `anthropic-version` (the Anthropic SDKs, Claude Code's model
 * discovery), the chat models in Anthropic's list shape and errors (messages/model-list.ts).
 */
export async function listModels(req: GatewayRequest): Promise<GatewayResult> {
  if (isAnthropicClient(req)) {
    return inMessagesApi(req, async () => {
      await authenticateRequest(req);
      const chat = [...CATALOGUE.values()].filter((e) => e.kind === 'chat');
      return { kind: 'json', status: 200, headers: {}, body: anthropicModelPage(chat, req.query) };
    });
  }
  await authenticateRequest(req);
  return { kind: 'json', status: 200, headers: {}, body: { object: 'list', data: [...CATALOGUE.values()].map(toModelObject) } };
}

/** One model, by id or alias (an alias answers its model's object); 404 `model_not_found` when unknown. */
export async function retrieveModel(req: GatewayRequest, id: string): Promise<GatewayResult> {
  if (isAnthropicClient(req)) {
    return inMessagesApi(req, async () => {
      await authenticateRequest(req);
      return { kind: 'json', status: 200, headers: {}, body: anthropicModelInfo(getModel(resolveMessagesModel(id), 'chat')) };
    });
  }
  await authenticateRequest(req);
  return { kind: 'json', status: 200, headers: {}, body: toModelObject(getModelAnyKind(id)) };
}

/** An Anthropic client: it sends `anthropic-version` on every request (the SDKs always do). */
function isAnthropicClient(req: GatewayRequest): boolean {
  return req.headers['anthropic-version'] !== undefined;
}

function toModelObject(e: CatalogueEntry): ModelObject {
  const first = e.targets[0];
  if (first === undefined) throw new Error(`catalogue entry ${e.id} has no target`);
  const at = now();
  const [t] = servedTargetAt(first, e.id, CATALOGUE, at);
  const until = priceValidUntil(t, at);
  return {
    id: e.id,
    object: 'model',
    created: e.created,
    owned_by: e.ownedBy,
    kind: e.kind,
    description: e.description,
    context_length: t.contextWindow,
    max_output_tokens: t.maxOutputTokens,
    capabilities: {
      tools: t.capabilities.tools,
      vision: t.capabilities.vision,
      reasoning: t.capabilities.reasoning,
      json_mode: t.capabilities.jsonMode,
      files: t.capabilities.files,
      audio: t.capabilities.audio,
    },
    pricing: {
      prompt: usdPerToken(t.displayedPrice.input),
      completion: usdPerToken(t.displayedPrice.output),
      ...cachePricing(t.displayedPrice),
      ...(t.longContext && {
        long_context: {
          prompt_tokens_above: t.longContext.promptTokensAbove,
          prompt: usdPerToken(t.longContext.displayedPrice.input),
          completion: usdPerToken(t.longContext.displayedPrice.output),
          ...cachePricing(t.longContext.displayedPrice),
        },
      }),
      pricing_valid_until: until === undefined ? null : new Date(until).toISOString(),
      pricing_source: t.priceSource,
    },
    aliases: e.aliases.map((a) => ({ id: a.alias, kind: a.kind })),
  };
}

/**
 * The prompt-cache prices a target has (USD per token, fee included), in OpenRouter's names:
 * `input_cache_read` (a cache read), `input_cache_write` (a 5-minute write, Anthropic's default) and
 * `input_cache_write_1h` (a 1-hour write). A bucket billed at the input price is left out.
 */
function cachePricing(p: TokenPrices): Record<string, string> {
  const out: Record<string, string> = {};
  if (p.cachedInput !== p.input) out.input_cache_read = usdPerToken(p.cachedInput);
  if (p.cacheWrite5m !== p.input) out.input_cache_write = usdPerToken(p.cacheWrite5m);
  if (p.cacheWrite1h !== p.input) out.input_cache_write_1h = usdPerToken(p.cacheWrite1h);
  return out;
}

/**
 * micro-USD per 1M tokens → USD per token as an exact decimal string (1 USD = 1e6 µUSD, per token =
 * / 1e6 more, so the integer is shifted 12 places). E.g. 2,637,500 → "0.0000026375".
 */
export function usdPerToken(microUsdPerMTok: number): string {
  if (microUsdPerMTok === 0) return '0';
  const digits = String(microUsdPerMTok).padStart(13, '0');
  const whole = digits.slice(0, -12);
  const frac = digits.slice(-12).replace(/0+$/, '');
  return frac === '' ? whole : `${whole}.${frac}`;
}

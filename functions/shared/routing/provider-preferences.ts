import type { CatalogueTarget } from '../catalogue/catalogue';
import type { ChatCompletionRequest } from '../openai/chat-request';
import { GatewayError, NotFoundError } from '../openai/errors';
import type { Attempt } from './attempt-plan';
import type { ProviderPreferences, ProviderSort } from '../openai/provider-preferences';
import { measuredSpeed } from './target-speed';

export type { ProviderPreferences, ProviderSort } from '../openai/provider-preferences';

/**
 * OpenRouter's provider preferences (the `provider` object of a chat request, and the `:nitro` /
 * `:floor` model suffixes): which providers may serve a request and in which order. Semantics and
 * defaults follow OpenRouter's provider-routing page (docs/provider-routing.md, with its sources):
 *
 * - `only` / `ignore`: provider names allowed / skipped (every attempt, equivalents included).
 * - `order`: providers tried first, in that order, among a model's own targets; with
 *   `allow_fallbacks: false` no other provider serves, and no catalogue equivalent either.
 * - `allow_fallbacks` (default true): false keeps only the ordered providers (or, with no `order`,
 *   the first target left) of the requested model and the client's own `models`.
 * - `sort`: `price` (cheapest displayed input + output price first), `throughput` (highest measured
 *   output tokens/s first), `latency` (lowest measured time to first token first); measured per
 *   container and decayed (target-speed.ts); unmeasured targets keep catalogue order after measured ones.
 *   `order` wins over `sort`. `:nitro` = `sort: "throughput"`, `:floor` = `sort: "price"`.
 * - `max_price`: `{prompt, completion}`, USD per 1M tokens, against the displayed (billed) price.
 * - `data_collection: "deny"`: only targets whose provider does not train on API data; `zdr: true`:
 *   only targets whose provider keeps nothing (catalogue/data-policies.ts).
 * - `require_parameters`: only targets able to honour every parameter of the request (app layer,
 *   by building each target's upstream request: see chat-completions.ts).
 *
 * A request no target can satisfy is OpenRouter's 404 with the reason.
 */

/** The preferences one request routes by: its `provider` object, with a suffix's sort unless it sets one. */
export function effectivePreferences(prefs: ProviderPreferences | null | undefined, suffixSort: ProviderSort | undefined): ProviderPreferences | undefined {
  if (suffixSort === undefined) return prefs ?? undefined;
  return { ...prefs, sort: prefs?.sort ?? suffixSort };
}

/** Why a target is excluded by the preferences, or undefined when it may serve. */
export function exclusionReason(t: CatalogueTarget, p: ProviderPreferences): string | undefined {
  if (p.only !== undefined && !p.only.includes(t.provider)) return `provider.only: ${p.only.join(', ')}`;
  if (p.ignore?.includes(t.provider) === true) return `provider.ignore: ${p.ignore.join(', ')}`;
  if (p.data_collection === 'deny' && t.dataPolicy.training) return 'data_collection: deny (providers that may train on prompts)';
  if (p.zdr === true && t.dataPolicy.retainsPrompts) return 'zdr: true (zero data retention)';
  const max = p.max_price;
  if (max?.prompt !== undefined && t.displayedPrice.input > max.prompt * 1e6) return `max_price.prompt: ${max.prompt} USD per 1M tokens`;
  if (max?.completion !== undefined && t.displayedPrice.output > max.completion * 1e6) return `max_price.completion: ${max.completion} USD per 1M tokens`;
  return undefined;
}

/**
 * One model's targets ordered by the preferences: `order`'s providers first (in its order), then the
 * rest by `sort` (stable: catalogue order among equals); with `allow_fallbacks: false`, only the
 * ordered providers (or the first target when there is no `order`).
 */
export function orderTargets(targets: readonly CatalogueTarget[], p: ProviderPreferences): CatalogueTarget[] {
  const order = p.order ?? [];
  const rank = (t: CatalogueTarget) => {
    const i = order.indexOf(t.provider);
    return i === -1 ? order.length : i;
  };
  const sorted = [...targets].sort((a, b) => rank(a) - rank(b) || compare(sortKey(a, p.sort), sortKey(b, p.sort)));
  if (p.allow_fallbacks !== false) return sorted;
  return order.length > 0 ? sorted.filter((t) => order.includes(t.provider)) : sorted.slice(0, 1);
}

function compare(a: number, b: number): number {
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Smaller first: displayed price, minus tokens/s, or time to first token; unmeasured last. */
function sortKey(t: CatalogueTarget, sort: ProviderSort | null | undefined): number {
  if (sort === 'price') return t.displayedPrice.input + t.displayedPrice.output;
  if (sort === 'throughput') return -(measuredSpeed(t.key)?.tokensPerSecond ?? Number.NEGATIVE_INFINITY);
  if (sort === 'latency') return measuredSpeed(t.key)?.firstTokenMs ?? Number.POSITIVE_INFINITY;
  return 0;
}

/**
 * OpenRouter's 404 when the preferences leave no target: "No endpoints found matching your data
 * policy…" and its siblings, naming each reason that excluded a target.
 */
export function noEndpoints(model: string, reasons: ReadonlySet<string>): NotFoundError {
  const why = reasons.size > 0 ? ` Excluded by: ${[...reasons].join('; ')}.` : '';
  return new NotFoundError(`No endpoints found for \`${model}\` matching your provider preferences.${why}`, { param: 'provider', code: 'no_endpoints_found' });
}

/**
 * `require_parameters: true`: only the attempts whose adapter can build the request with every
 * parameter it sets (an adapter refuses what its provider cannot honour with a 400:
 * providers/unsupported-parameters.ts); the others are dropped instead of failing the request.
 * @param chosen the public models the client named (the requested one and its `models`): when none
 *   of their targets is left, the request is refused rather than silently served by an equivalent.
 * @throws NotFoundError (404, `no_endpoints_found`) then, with the first refusal's reason.
 */
export function honouringParameters(plan: readonly Attempt[], req: ChatCompletionRequest, model: string, chosen: ReadonlySet<string>): Attempt[] {
  let refusal: string | undefined;
  const kept = plan.filter((a) => {
    try {
      a.adapter.buildChatRequest(req, { target: a.target, endpoint: a.endpoint });
      return true;
    } catch (err) {
      if (!(err instanceof GatewayError) || err.status !== 400) throw err;
      refusal ??= `require_parameters: ${a.target.provider} refuses: ${err.message}`;
      return false;
    }
  });
  if (!kept.some((a) => chosen.has(a.publicModel))) throw noEndpoints(model, new Set(refusal === undefined ? [] : [refusal]));
  return kept;
}

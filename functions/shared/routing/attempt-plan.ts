import { findModel, targetAt, type Catalogue, type CatalogueEntry, type CatalogueTarget } from '../catalogue/catalogue';
import { now } from '../time/clock';
import { geminiCachedContent, type ChatCompletionRequest } from '../openai/chat-request';
import { GatewayError, InvalidRequestError, NotFoundError, UpstreamUnavailableError } from '../errors/gateway-errors';
import type { AccountByok } from '../accounts/byok/byok-credentials';
import { providerSpec, resolveByokEndpoint, resolveEndpoint } from '../providers/registry';
import type { ProviderAdapter, ProviderEndpoint } from '../providers/types';
import type { TimeoutOverrides } from './timeouts';
import type { ProviderPreferences, ProviderSort } from '../openai/provider-preferences';
import { measuredSpeed } from './target-speed';

/**
 * The ordered list of upstream targets one request may try — "the plan", the single source of truth
 * for what a request may cost (billing holds price the plan's targets) and where it may go: the
 * model's own targets, then those of the client's own fallback list (`models`, in its order), then
 * each catalogue equivalent's targets (catalogue order), each target at most once, skipping providers
 * with no key and targets that lack a capability the request uses.
 */

/** One place the request can be sent. */
export interface Attempt {
  /** The public model whose target this is (differs from the requested one after a fallback). */
  publicModel: string;
  target: CatalogueTarget;
  endpoint: ProviderEndpoint;
  adapter: ProviderAdapter;
  /** The provider's attempt time limits (routing/timeouts.ts). */
  providerTimeouts: TimeoutOverrides | undefined;
  /** The public model's hedging, when it opted in (routing/hedge.ts). */
  hedge: CatalogueEntry['hedge'];
  /**
   * Set when this attempt uses the account's own provider key (BYOK): the answer is billed the platform
   * fee only, a refusal of the key is the user's to hear (never the platform breaker's), and
   * `allowFallback` says whether the platform's key may serve the same provider after it.
   */
  byok?: { accountId: string; last4: string; allowFallback: boolean; dashboard: string };
}

/**
 * The circuit-breaker key of an attempt: the target for the platform's key; a per-account key for a
 * user's own key, so a user's dead or refused key never opens the platform-wide breaker (nor the
 * reverse).
 */
export function breakerKey(attempt: Attempt): string {
  return attempt.byok === undefined ? attempt.target.key : `byok:${attempt.byok.accountId}:${attempt.target.key}`;
}

/** Capabilities a chat request needs, derived from its content. */
export interface RequiredCapabilities {
  vision: boolean;
  tools: boolean;
  /** A `file` content part (OpenAI's PDF input). */
  files: boolean;
  /** An `input_audio` content part. */
  audio: boolean;
  /** A named context cache (`google.cached_content`): only an upstream holding it can read it. */
  contextCache?: boolean;
}

type Need = keyof RequiredCapabilities;

/** A request that uses nothing beyond text (embeddings, plain chat). */
const NO_NEEDS: RequiredCapabilities = { vision: false, tools: false, files: false, audio: false };

/** Each need: how a 400 names it, the request field at fault, and whether a target has it. */
const NEEDS: ReadonlyArray<{ need: Need; label: string; param: string; has: (t: CatalogueTarget) => boolean }> = [
  { need: 'vision', label: 'image input (vision)', param: 'messages', has: (t) => t.capabilities.vision },
  { need: 'files', label: 'file input', param: 'messages', has: (t) => t.capabilities.files },
  { need: 'audio', label: 'audio input', param: 'messages', has: (t) => t.capabilities.audio },
  { need: 'tools', label: 'tool calling', param: 'tools', has: (t) => t.capabilities.tools },
  // The cache lives at the upstream that made it: another provider would answer without its contents.
  {
    need: 'contextCache',
    label: 'a named context cache (google.cached_content)',
    param: 'google',
    has: (t) => providerSpec(t.provider).adapter.namedContextCache === true,
  },
];

/** What the request uses that not every model has. */
export function requiredCapabilities(req: ChatCompletionRequest): RequiredCapabilities {
  const parts = req.messages.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : []));
  return {
    vision: parts.some((p) => p.type === 'image_url'),
    tools: (req.tools?.length ?? 0) > 0,
    files: parts.some((p) => p.type === 'file'),
    audio: parts.some((p) => p.type === 'input_audio'),
    contextCache: geminiCachedContent(req) !== undefined,
  };
}

function supports(target: CatalogueTarget, need: RequiredCapabilities): boolean {
  return NEEDS.every((n) => need[n.need] !== true || n.has(target));
}

/** The capability to name when none of `entry`'s targets serves `need`: one no target has, else one the first target lacks. */
function missingCapability(entry: CatalogueEntry, need: RequiredCapabilities): { label: string; param: string } {
  const wanted = NEEDS.filter((n) => need[n.need] === true);
  const first = entry.targets[0];
  const found = wanted.find((n) => !entry.targets.some(n.has)) ?? wanted.find((n) => first === undefined || !n.has(first));
  return found ?? { label: 'a capability the request uses', param: 'messages' };
}

/**
 * Builds the plan.
 * @param fallbacks the client's own fallback models (`models`, resolved by {@link requestFallbacks}),
 *   tried after the model's own targets and before its catalogue equivalents; like equivalents, their
 *   targets lacking a capability the request uses are skipped.
 * @throws InvalidRequestError (400, code `unsupported_capability`) when the requested model itself
 *   lacks a capability the request uses — image input (vision), file input, audio input, tool
 *   calling — named in the message, so the client hears it plainly rather than an upstream's error.
 * @throws UpstreamUnavailableError (503) when no target of the model, its fallbacks or its
 *   equivalents has a key.
 * @param byok the account's own provider keys: each target of such a provider is tried with the user's
 *   key first, then with the platform's key only if the user allows fallback for that provider.
 * @param prefs OpenRouter's provider preferences (openai/provider-preferences.ts): filter every model's
 *   targets, order each model's own, and (`allow_fallbacks: false`) drop the catalogue equivalents.
 * @throws NotFoundError (404, code `no_endpoints_found`) when the preferences leave the requested
 *   model and the client's `models` no target, naming each reason.
 */
export function planAttempts(
  entry: CatalogueEntry,
  catalogue: Catalogue,
  credentials: Readonly<Record<string, string | undefined>>,
  need: RequiredCapabilities = NO_NEEDS,
  fallbacks: readonly CatalogueEntry[] = [],
  byok?: AccountByok,
  prefs?: ProviderPreferences,
): Attempt[] {
  if (!entry.targets.some((t) => supports(t, need))) {
    const missing = missingCapability(entry, need);
    throw new InvalidRequestError(`The model \`${entry.id}\` does not support ${missing.label}.`, { param: missing.param, code: 'unsupported_capability' });
  }
  const plan: Attempt[] = [];
  const seen = new Set<string>();
  const excluded = new Set<string>();
  // Without fallbacks allowed, no other model stands in either (only the client's own `models`).
  const equivalents =
    prefs?.allow_fallbacks === false ? [] : entry.equivalents.map((id) => catalogue.get(id)).filter((e): e is CatalogueEntry => e !== undefined);
  const chosen = [entry, ...fallbacks];
  // The request's start: every attempt is priced (and retired targets replaced) at this one instant,
  // so its hold and its bill use the same price (catalogue/price-schedule.ts).
  const at = now();
  for (const [i, e] of [...chosen, ...equivalents].entries()) {
    if (i === chosen.length && prefs !== undefined && plan.length === 0 && excluded.size > 0) {
      // The preferences left the requested model (and the client's list) nothing: OpenRouter's 404,
      // never a silent switch to another model.
      throw noEndpoints(entry.id, excluded);
    }
    const served = new Map(e.targets.map((t) => servedTargetAt(t, e.id, catalogue, at)));
    const targets = [...served.keys()];
    for (const target of prefs === undefined ? targets : preferred(targets, prefs, excluded)) {
      const publicModel = served.get(target) ?? e.id;
      if (seen.has(target.key) || !supports(target, need)) continue;
      seen.add(target.key);
      const spec = providerSpec(target.provider);
      const own = byok?.keys.get(target.provider);
      if (byok !== undefined && own !== undefined) {
        const byokEndpoint = resolveByokEndpoint(target.provider, credentials, own.apiKey);
        const info = { accountId: byok.accountId, last4: own.last4, allowFallback: own.allowFallback, dashboard: byok.dashboard };
        plan.push({ publicModel, target, endpoint: byokEndpoint, adapter: spec.adapter, providerTimeouts: spec.timeouts, hedge: e.hedge, byok: info });
        if (!own.allowFallback) continue;
      }
      const endpoint = resolveEndpoint(target.provider, credentials);
      if (endpoint === undefined) continue;
      plan.push({ publicModel, target, endpoint, adapter: spec.adapter, providerTimeouts: spec.timeouts, hedge: e.hedge });
    }
  }
  if (plan.length === 0) {
    if (excluded.size > 0) throw noEndpoints(entry.id, excluded);
    throw new UpstreamUnavailableError(503, `No upstream provider is configured for the model \`${entry.id}\`.`);
  }
  return plan;
}

/**
 * What serves `target` of the public model `model` at `atMs`: the target priced at that instant, or,
 * once its provider has retired it, the first target of the successor model the catalogue names
 * (catalogue/retirements.ts) with that model's id — so `x-modelmux-model` says who served.
 */
export function servedTargetAt(target: CatalogueTarget, model: string, catalogue: Catalogue, atMs: number): [CatalogueTarget, string] {
  const retired = target.retirement !== undefined && atMs >= target.retirement.atMs ? catalogue.get(target.retirement.successorModel) : undefined;
  const successor = retired?.targets[0];
  return retired === undefined || successor === undefined ? [targetAt(target, atMs), model] : [targetAt(successor, atMs), retired.id];
}

/** One model's targets the preferences allow, in their order; each exclusion's reason added to `excluded`. */
function preferred(targets: readonly CatalogueTarget[], prefs: ProviderPreferences, excluded: Set<string>): CatalogueTarget[] {
  const allowed = targets.filter((t) => {
    const reason = exclusionReason(t, prefs);
    if (reason !== undefined) excluded.add(reason);
    return reason === undefined;
  });
  return orderTargets(allowed, prefs);
}

/**
 * The client's own fallback list, OpenRouter's way (`models: ["a", "b"]`, optionally with
 * `route: "fallback"`): catalogue chat models tried in that order after the requested model's own
 * targets. Names resolve like `model` does (ids or aliases). A name repeated, or the requested model
 * itself, adds nothing.
 * @throws InvalidRequestError (400, param `models[i]`) naming the first entry that is not a catalogue
 *   model (code `model_not_found`) or not a chat model (code `invalid_value`).
 */
export function requestFallbacks(names: readonly string[] | null | undefined, catalogue: Catalogue): CatalogueEntry[] {
  const out: CatalogueEntry[] = [];
  (names ?? []).forEach((name, i) => {
    const e = findModel(name, catalogue);
    if (e === undefined) {
      throw new InvalidRequestError(`The model \`${name}\` in \`models\` does not exist or you do not have access to it.`, {
        param: `models[${i}]`,
        code: 'model_not_found',
      });
    }
    if (e.kind !== 'chat') {
      throw new InvalidRequestError(
        `The model \`${name}\` in \`models\` is ${e.kind === 'image' ? 'an image' : 'an embedding'} model; a chat request can only fall back to chat models.`,
        { param: `models[${i}]`, code: 'invalid_value' },
      );
    }
    if (!out.includes(e)) out.push(e);
  });
  return out;
}

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

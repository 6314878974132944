import { findModel, type Catalogue, type CatalogueEntry, type CatalogueTarget } from '../catalogue/catalogue';
import { geminiCachedContent, type ChatCompletionRequest } from '../openai/chat-request';
import { InvalidRequestError, UpstreamUnavailableError } from '../openai/errors';
import type { AccountByok } from '../accounts/byok/byok-credentials';
import { providerSpec, resolveByokEndpoint, resolveEndpoint } from '../providers/registry';
import type { ProviderAdapter, ProviderEndpoint } from '../providers/types';
import type { TimeoutOverrides } from './timeouts';
import { exclusionReason, noEndpoints, orderTargets, type ProviderPreferences } from './provider-preferences';

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
  { need: 'contextCache', label: 'a named context cache (google.cached_content)', param: 'google', has: (t) => providerSpec(t.provider).adapter.namedContextCache === true },
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
 * @param prefs OpenRouter's provider preferences (provider-preferences.ts): filter every model's
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
  const equivalents = prefs?.allow_fallbacks === false ? [] : entry.equivalents.map((id) => catalogue.get(id)).filter((e): e is CatalogueEntry => e !== undefined);
  const chosen = [entry, ...fallbacks];
  for (const [i, e] of [...chosen, ...equivalents].entries()) {
    if (i === chosen.length && prefs !== undefined && plan.length === 0 && excluded.size > 0) {
      // The preferences left the requested model (and the client's list) nothing: OpenRouter's 404,
      // never a silent switch to another model.
      throw noEndpoints(entry.id, excluded);
    }
    for (const target of prefs === undefined ? e.targets : preferred(e.targets, prefs, excluded)) {
      if (seen.has(target.key) || !supports(target, need)) continue;
      seen.add(target.key);
      const spec = providerSpec(target.provider);
      const own = byok?.keys.get(target.provider);
      if (byok !== undefined && own !== undefined) {
        const byokEndpoint = resolveByokEndpoint(target.provider, credentials, own.apiKey);
        const info = { accountId: byok.accountId, last4: own.last4, allowFallback: own.allowFallback, dashboard: byok.dashboard };
        plan.push({ publicModel: e.id, target, endpoint: byokEndpoint, adapter: spec.adapter, providerTimeouts: spec.timeouts, hedge: e.hedge, byok: info });
        if (!own.allowFallback) continue;
      }
      const endpoint = resolveEndpoint(target.provider, credentials);
      if (endpoint === undefined) continue;
      plan.push({ publicModel: e.id, target, endpoint, adapter: spec.adapter, providerTimeouts: spec.timeouts, hedge: e.hedge });
    }
  }
  if (plan.length === 0) {
    if (excluded.size > 0) throw noEndpoints(entry.id, excluded);
    throw new UpstreamUnavailableError(503, `No upstream provider is configured for the model \`${entry.id}\`.`);
  }
  return plan;
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
      throw new InvalidRequestError(`The model \`${name}\` in \`models\` does not exist or you do not have access to it.`, { param: `models[${i}]`, code: 'model_not_found' });
    }
    if (e.kind !== 'chat') {
      throw new InvalidRequestError(`The model \`${name}\` in \`models\` is ${e.kind === 'image' ? 'an image' : 'an embedding'} model; a chat request can only fall back to chat models.`, { param: `models[${i}]`, code: 'invalid_value' });
    }
    if (!out.includes(e)) out.push(e);
  });
  return out;
}

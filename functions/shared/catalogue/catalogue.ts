import { NotFoundError } from '../errors/gateway-errors';
import { displayedPrice } from '../money/price';
import { now } from '../time/clock';
import { manifestEntry, type ImageTokenRule, type ProviderName } from '../providers/manifest';
import { CATALOGUE_ALIASES } from './aliases';
import { providerDataPolicy } from './data-policies';
import { CATALOGUE_DATA } from './models';
import { OPERATOR_PRICES } from './operator-prices';
import { PRICE_DATA, PRICE_DATA_SOURCE } from './price-data';
import { PRICE_OVERRIDES, type PriceOverride } from './price-overrides';
import { nextPriceChange, ruleIndexAt, type PriceRule, type RulePrices } from './price-schedule';
import { RETIREMENTS } from './retirements';
import type { Capabilities, CatalogueAliasData, CatalogueEntryData, CatalogueTargetData, DataPolicyData, ImageTargetData, LatencyProfile } from './schema';

/**
 * The loaded catalogue: the data of `models.ts` with displayed prices computed once, built at module
 * load (once per Lambda container).
 *
 * The built-in data is typed by the schema (tsc) and validated against `catalogueSchema` in the test
 * suite (test/catalogue), not at every cold start: zod parsing it cost ~10 ms of INIT (BENCHMARKS.md,
 * load profile). Data from anywhere else goes through `loadCatalogue` (load.ts), which validates.
 */

/** A target with its prices in integer micro-USD per 1M tokens, upstream and displayed (incl. fee). */
export interface CatalogueTarget {
  /** Stable id for breakers and logs: `provider:upstreamModel`. */
  key: string;
  provider: ProviderName;
  upstreamModel: string;
  contextWindow: number;
  maxOutputTokens: number;
  capabilities: Capabilities;
  upstreamParams: Readonly<Record<string, unknown>> | undefined;
  dimensions: number | undefined;
  /** Embeddings: the upstream refuses a `dimensions` parameter. */
  fixedDimensions: boolean;
  /** Image models: sizes, output tokens per image by quality, formats (schema.ts `imageSchema`). */
  image: ImageTargetData | undefined;
  /** What the provider does with prompts (training, retention), with its source (data-policies.ts). */
  dataPolicy: DataPolicyData;
  /** The rule bounding an image's or PDF page's prompt tokens: the target's, else its provider's; undefined = none known (usage/media-tokens.ts holds the largest). */
  imageTokens: ImageTokenRule | undefined;
  /** Per-target time-limit overrides (ms). */
  timeouts: CatalogueTargetData['timeouts'];
  /** How the target starts answering, when the data says (routing/timeouts.ts derives it otherwise). */
  latency: LatencyProfile | undefined;
  /**
   * Upstream price, micro-USD per 1M tokens, of the rule in force when this object was made: at
   * catalogue build for the catalogue's own targets; at the request's start for an attempt's target
   * ({@link targetAt}), so the hold and the bill use one price.
   */
  upstreamPrice: TokenPrices;
  /** What the client pays: upstream × 1.055, micro-USD per 1M tokens. */
  displayedPrice: TokenPrices;
  /** The long-prompt tier, when the upstream has one: prices for requests whose prompt exceeds the threshold. */
  longContext: { promptTokensAbove: number; upstreamPrice: TokenPrices; displayedPrice: TokenPrices } | undefined;
  /** Every price rule of the target (price-schedule.ts), from the price data or its overrides. */
  priceRules: readonly PriceRule[];
  /** Where the prices come from: the dataset and its version, or an override's source. */
  priceSource: string;
  /** When the provider retires this upstream id and the catalogue model that then serves it (retirements.ts). */
  retirement: { atMs: number; successorModel: string } | undefined;
}

/**
 * The price of each token bucket (usage/token-usage.ts), integer micro-USD per 1M tokens. A target
 * without a cache bucket carries the input price in it (the tokens cost what uncached input costs).
 */
export interface TokenPrices {
  input: number;
  /** A prompt token read from the provider's cache. */
  cachedInput: number;
  /** A prompt token written to the cache for 5 minutes. */
  cacheWrite5m: number;
  /** A prompt token written to the cache for 1 hour. */
  cacheWrite1h: number;
  /** An output token, reasoning included. */
  output: number;
}

/** One public model. */
export interface CatalogueEntry {
  id: string;
  kind: CatalogueEntryData['kind'];
  description: string;
  ownedBy: string;
  created: number;
  targets: readonly CatalogueTarget[];
  equivalents: readonly string[];
  /** Hedging of slow first tokens, when the operator opted in for this model (routing/hedge.ts). */
  hedge: { afterMs?: number | undefined } | undefined;
  /** Other names of this model (aliases.ts): OpenRouter slugs, dated ids, retired names it succeeds. */
  aliases: readonly CatalogueAlias[];
}

/** One other name of a model (schema.ts `aliasSchema`). */
export type CatalogueAlias = Omit<CatalogueAliasData, 'model'>;

/** An id → entry map, in catalogue order (aliases resolve through {@link findModel}). */
export type Catalogue = ReadonlyMap<string, CatalogueEntry>;

/**
 * How a catalogue is priced: at which instant its targets' own price fields are taken (epoch ms;
 * default now), and prices that win over every other source (a synthetic catalogue's, in tests; a
 * loaded catalogue's own).
 */
export interface BuildOptions {
  atMs?: number;
  prices?: readonly PriceOverride[];
}
type Priced = { atMs: number; prices: readonly PriceOverride[] };

/** Each built catalogue's alias → entry index. */
const aliasIndex = new WeakMap<Catalogue, ReadonlyMap<string, CatalogueEntry>>();

/**
 * Builds the catalogue from typed entries and aliases: computes prices, attaches each alias to its
 * model, and checks what a type cannot.
 * @throws Error when an id repeats, an equivalent names an unknown id, itself or one of another kind,
 *   an embedding model names any equivalent, an alias names an unknown model or repeats a model id
 *   or another alias, a target has no price (price data, overrides or `options.prices`) or no context
 *   window, or a retirement names a successor that is not a model of the same kind.
 */
export function buildCatalogue(entries: readonly CatalogueEntryData[], aliases: readonly CatalogueAliasData[] = [], options: BuildOptions = {}): Catalogue {
  const priced = { atMs: options.atMs ?? now(), prices: options.prices ?? [] };
  const byId = new Map<string, CatalogueEntry>();
  for (const e of entries) {
    if (byId.has(e.id)) throw new Error(`catalogue: duplicate model id ${e.id}`);
    byId.set(
      e.id,
      toEntry(
        e,
        aliases.filter((a) => a.model === e.id),
        priced,
      ),
    );
  }
  const byAlias = new Map<string, CatalogueEntry>();
  for (const a of aliases) {
    const entry = byId.get(a.model);
    if (entry === undefined) throw new Error(`catalogue: alias ${a.alias} names unknown model ${a.model}`);
    if (byId.has(a.alias) || byAlias.has(a.alias)) throw new Error(`catalogue: alias ${a.alias} repeats a model id or another alias`);
    byAlias.set(a.alias, entry);
  }
  aliasIndex.set(byId, byAlias);
  for (const e of byId.values()) {
    for (const eq of e.equivalents) {
      const other = byId.get(eq);
      if (other === undefined) throw new Error(`catalogue: ${e.id} names unknown equivalent ${eq}`);
      if (other.kind !== e.kind) throw new Error(`catalogue: ${e.id} (${e.kind}) names equivalent ${eq} of kind ${other.kind}`);
      if (eq === e.id) throw new Error(`catalogue: ${e.id} names itself as equivalent`);
      // Vectors of different models live in different spaces: an embedding never falls back to another model.
      if (e.kind === 'embedding')
        throw new Error(`catalogue: embedding model ${e.id} names an equivalent (${eq}); embeddings never fall back to another model`);
    }
    for (const t of e.targets) {
      const successor = t.retirement === undefined ? undefined : byId.get(t.retirement.successorModel);
      if (t.retirement !== undefined && successor?.kind !== e.kind)
        throw new Error(`catalogue: ${t.key} retires to ${t.retirement.successorModel}, which is not a ${e.kind} model of the catalogue`);
    }
    if (e.kind !== 'chat' && e.hedge !== undefined) throw new Error(`catalogue: ${e.kind} model ${e.id} cannot hedge: only chat races first tokens`);
    // An image model's targets say what they can make; no other kind has that.
    if (e.targets.some((t) => (t.image !== undefined) !== (e.kind === 'image')))
      throw new Error(`catalogue: ${e.id}: a target has \`image\` data if and only if the model is of kind image`);
  }
  return byId;
}

function toEntry(e: CatalogueEntryData, aliases: readonly CatalogueAliasData[], priced: Priced): CatalogueEntry {
  return {
    id: e.id,
    kind: e.kind,
    description: e.description,
    ownedBy: e.ownedBy,
    created: e.created,
    targets: e.targets.map((t) => toTarget(t, priced)),
    equivalents: e.equivalents,
    hedge: e.hedge,
    aliases: aliases.map(({ alias, kind, source }) => (source === undefined ? { alias, kind } : { alias, kind, source })),
  };
}

/** A target's price rules and context window: the operator's, else the built-in override's, else the price data's. */
function priceOf(key: string, extra: readonly PriceOverride[]): { rules: readonly PriceRule[]; contextWindow: number | undefined; source: string } {
  const own = extra.find((o) => o.key === key) ?? OPERATOR_PRICES.find((o) => o.key === key) ?? PRICE_OVERRIDES.find((o) => o.key === key);
  const data = PRICE_DATA[key];
  if (own !== undefined) return { rules: own.rules, contextWindow: own.contextWindow ?? data?.contextWindow, source: own.source };
  if (data !== undefined) return { rules: data.rules, contextWindow: data.contextWindow, source: `${PRICE_DATA_SOURCE} (${data.datasetModel})` };
  throw new Error(`catalogue: no price for ${key}: add it to price-overrides.ts with its source, or run npm run prices`);
}

function toTarget(t: CatalogueTargetData, { atMs, prices: extra }: Priced): CatalogueTarget {
  const key = `${t.provider}:${t.upstreamModel}`;
  const price = priceOf(key, extra);
  const rules = t.passiveCache === true ? price.rules.map(withoutCacheWrites) : price.rules;
  const contextWindow = t.contextWindow ?? price.contextWindow;
  if (contextWindow === undefined) throw new Error(`catalogue: ${key} has no context window in the catalogue or the price data`);
  const retirement = RETIREMENTS.find((r) => r.key === key);
  const base: Omit<CatalogueTarget, 'upstreamPrice' | 'displayedPrice' | 'longContext'> = {
    key,
    provider: t.provider,
    upstreamModel: t.upstreamModel,
    contextWindow,
    maxOutputTokens: t.maxOutputTokens,
    capabilities: t.capabilities,
    upstreamParams: t.upstreamParams,
    dimensions: t.dimensions,
    fixedDimensions: t.fixedDimensions === true,
    image: t.image,
    dataPolicy: t.dataPolicy ?? providerDataPolicy(t.provider),
    imageTokens: t.imageTokens ?? manifestEntry(t.provider).imageTokens,
    timeouts: t.timeouts,
    latency: t.latency,
    priceRules: rules,
    priceSource: price.source,
    retirement: retirement === undefined ? undefined : { atMs: Date.parse(retirement.retiresAt), successorModel: retirement.successorModel },
  };
  return { ...base, ...pricedBy(rules[ruleIndexAt(rules, atMs)] as PriceRule) };
}

/** A rule whose cache writes cost the input price (a passive cache: schema.ts `passiveCache`). */
function withoutCacheWrites(rule: PriceRule): PriceRule {
  const strip = <T extends { cacheWrite5m?: number; cacheWrite1h?: number }>({ cacheWrite5m: _5m, cacheWrite1h: _1h, ...rest }: T) => rest;
  const long = rule.prices.longContext;
  return { ...rule, prices: { ...strip(rule.prices), ...(long !== undefined && { longContext: strip(long) }) } as PriceRule['prices'] };
}

/** The price fields of a target under one rule. */
function pricedBy(rule: PriceRule): Pick<CatalogueTarget, 'upstreamPrice' | 'displayedPrice' | 'longContext'> {
  const upstreamPrice = prices(rule.prices);
  const long = rule.prices.longContext;
  return {
    upstreamPrice,
    displayedPrice: withFee(upstreamPrice),
    longContext: long === undefined ? undefined : longContextTier(long.promptTokensAbove, prices(long)),
  };
}

/** Each target's variant per rule index, made on first use. */
const variants = new WeakMap<CatalogueTarget, Map<number, CatalogueTarget>>();

/**
 * `target` priced at the instant `atMs` (epoch ms): the same object when the rule in force is the one
 * it carries, else its variant for that rule (made once, then reused: no allocation per request).
 */
export function targetAt(target: CatalogueTarget, atMs: number): CatalogueTarget {
  if (target.priceRules.length === 1) return target;
  const index = ruleIndexAt(target.priceRules, atMs);
  let byRule = variants.get(target);
  if (byRule === undefined) variants.set(target, (byRule = new Map()));
  let variant = byRule.get(index);
  if (variant === undefined) {
    variant = { ...target, ...pricedBy(target.priceRules[index] as PriceRule) };
    if (samePrices(variant, target)) variant = target;
    byRule.set(index, variant);
  }
  return variant;
}

function samePrices(a: CatalogueTarget, b: CatalogueTarget): boolean {
  return JSON.stringify([a.upstreamPrice, a.longContext]) === JSON.stringify([b.upstreamPrice, b.longContext]);
}

/**
 * When the price of `target` next changes after `atMs` (epoch ms, within 8 days), for `GET /v1/models`'
 * `pricing_valid_until`; undefined when it does not.
 */
export function priceValidUntil(target: CatalogueTarget, atMs: number): number | undefined {
  return target.priceRules.length === 1 ? undefined : nextPriceChange(target.priceRules, atMs);
}

/** Upstream prices in µUSD/MTok of one tier: a bucket the rule leaves out costs the tier's input price. */
function prices(p: RulePrices | Omit<NonNullable<RulePrices['longContext']>, 'promptTokensAbove'>): TokenPrices {
  return {
    input: p.input,
    cachedInput: p.cachedInput ?? p.input,
    cacheWrite5m: p.cacheWrite5m ?? p.input,
    cacheWrite1h: p.cacheWrite1h ?? p.input,
    output: p.output,
  };
}

/** Displayed prices: each bucket's upstream price × 1.055, rounded up once (money/price.ts). */
function withFee(p: TokenPrices): TokenPrices {
  return {
    input: displayedPrice(p.input),
    cachedInput: displayedPrice(p.cachedInput),
    cacheWrite5m: displayedPrice(p.cacheWrite5m),
    cacheWrite1h: displayedPrice(p.cacheWrite1h),
    output: displayedPrice(p.output),
  };
}

function longContextTier(promptTokensAbove: number, upstreamPrice: TokenPrices): NonNullable<CatalogueTarget['longContext']> {
  return { promptTokensAbove, upstreamPrice, displayedPrice: withFee(upstreamPrice) };
}

/**
 * The displayed prices (µUSD per 1M tokens, fee included) one request pays on `target`: its
 * long-context tier when the prompt is over that tier's threshold, else the base prices.
 */
export function displayedPricesFor(target: CatalogueTarget, promptTokens: number): TokenPrices {
  const long = target.longContext;
  return long !== undefined && promptTokens > long.promptTokensAbove ? long.displayedPrice : target.displayedPrice;
}

/**
 * The platform fee alone (µUSD per 1M tokens) one request pays on `target` when it is served with the
 * account's own provider key (BYOK): displayed − upstream price of each bucket, i.e. the 5.5% fee as
 * rounded into the displayed price, its long-context tier included.
 */
export function byokFeePricesFor(target: CatalogueTarget, promptTokens: number): TokenPrices {
  const long = target.longContext;
  const tier = long !== undefined && promptTokens > long.promptTokensAbove ? long : target;
  const d = tier.displayedPrice;
  const u = tier.upstreamPrice;
  return {
    input: d.input - u.input,
    cachedInput: d.cachedInput - u.cachedInput,
    cacheWrite5m: d.cacheWrite5m - u.cacheWrite5m,
    cacheWrite1h: d.cacheWrite1h - u.cacheWrite1h,
    output: d.output - u.output,
  };
}

/** The catalogue of this deployment (built once per container). */
export const CATALOGUE: Catalogue = buildCatalogue(CATALOGUE_DATA, CATALOGUE_ALIASES);

/** The model a public name means: a model id, or one of its aliases (aliases.ts); undefined if none. */
export function findModel(name: string, catalogue: Catalogue = CATALOGUE): CatalogueEntry | undefined {
  return catalogue.get(name) ?? aliasIndex.get(catalogue)?.get(name);
}

/** Where each kind of model is served, for the 404 of a model asked on another kind's route. */
const KIND_ROUTE: Readonly<Record<CatalogueEntry['kind'], { what: string; route: string }>> = {
  chat: { what: 'a chat model', route: '/v1/chat/completions' },
  embedding: { what: 'an embedding model', route: '/v1/embeddings' },
  image: { what: 'an image generation model', route: '/v1/images/generations' },
};

/**
 * Looks up a public model of the given kind.
 * @throws NotFoundError (404, code `model_not_found`, param `model`) for an unknown id or one of the
 *   other kind, with OpenAI's wording.
 */
export function getModel(id: string, kind: CatalogueEntry['kind'], catalogue: Catalogue = CATALOGUE): CatalogueEntry {
  const entry = findModel(id, catalogue);
  if (entry === undefined || entry.kind !== kind) {
    const hint = entry === undefined ? '' : ` It is ${KIND_ROUTE[entry.kind].what}; use ${KIND_ROUTE[entry.kind].route}.`;
    throw new NotFoundError(`The model \`${id}\` does not exist or you do not have access to it.${hint}`, {
      param: 'model',
      code: 'model_not_found',
    });
  }
  return entry;
}

/**
 * Looks up a public model of any kind (for `GET /v1/models/{id}`).
 * @throws NotFoundError (404, code `model_not_found`).
 */
export function getModelAnyKind(id: string, catalogue: Catalogue = CATALOGUE): CatalogueEntry {
  const entry = findModel(id, catalogue);
  if (entry === undefined) {
    throw new NotFoundError(`The model \`${id}\` does not exist or you do not have access to it.`, { param: 'model', code: 'model_not_found' });
  }
  return entry;
}

/**
 * The public models a provider's key serves: those with a target on `provider` (catalogue order). The
 * BYOK page shows it (account API `GET /v1/byok`), so what it says is the catalogue's truth.
 */
export function modelsServedBy(provider: ProviderName, catalogue: Catalogue = CATALOGUE): string[] {
  return [...catalogue.values()].filter((e) => e.targets.some((t) => t.provider === provider)).map((e) => e.id);
}

import { NotFoundError } from '../errors/gateway-errors';
import { displayedPrice, usdPerMTokToMicro } from '../money/price';
import { manifestEntry, type ImageTokenRule, type ProviderName } from '../providers/manifest';
import { CATALOGUE_ALIASES } from './aliases';
import { providerDataPolicy } from './data-policies';
import { CATALOGUE_DATA } from './models';
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
  /** Upstream price, micro-USD per 1M tokens. */
  upstreamPrice: TokenPrices;
  /** What the client pays: upstream × 1.055, micro-USD per 1M tokens. */
  displayedPrice: TokenPrices;
  /** The long-prompt tier, when the upstream has one: prices for requests whose prompt exceeds the threshold. */
  longContext: { promptTokensAbove: number; upstreamPrice: TokenPrices; displayedPrice: TokenPrices } | undefined;
  priceReadOn: string;
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

/** Each built catalogue's alias → entry index. */
const aliasIndex = new WeakMap<Catalogue, ReadonlyMap<string, CatalogueEntry>>();

/**
 * Builds the catalogue from typed entries and aliases: computes prices, attaches each alias to its
 * model, and checks what a type cannot.
 * @throws Error when an id repeats, an equivalent names an unknown id, itself or one of another kind,
 *   an embedding model names any equivalent, or an alias names an unknown model or repeats a model id
 *   or another alias.
 */
export function buildCatalogue(entries: readonly CatalogueEntryData[], aliases: readonly CatalogueAliasData[] = []): Catalogue {
  const byId = new Map<string, CatalogueEntry>();
  for (const e of entries) {
    if (byId.has(e.id)) throw new Error(`catalogue: duplicate model id ${e.id}`);
    byId.set(
      e.id,
      toEntry(
        e,
        aliases.filter((a) => a.model === e.id),
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
    if (e.kind !== 'chat' && e.hedge !== undefined) throw new Error(`catalogue: ${e.kind} model ${e.id} cannot hedge: only chat races first tokens`);
    // An image model's targets say what they can make; no other kind has that.
    if (e.targets.some((t) => (t.image !== undefined) !== (e.kind === 'image')))
      throw new Error(`catalogue: ${e.id}: a target has \`image\` data if and only if the model is of kind image`);
  }
  return byId;
}

function toEntry(e: CatalogueEntryData, aliases: readonly CatalogueAliasData[]): CatalogueEntry {
  return {
    id: e.id,
    kind: e.kind,
    description: e.description,
    ownedBy: e.ownedBy,
    created: e.created,
    targets: e.targets.map(toTarget),
    equivalents: e.equivalents,
    hedge: e.hedge,
    aliases: aliases.map(({ alias, kind, source }) => (source === undefined ? { alias, kind } : { alias, kind, source })),
  };
}

function toTarget(t: CatalogueTargetData): CatalogueTarget {
  const p = t.price;
  const upstreamPrice = prices(p);
  const long = p.longContext;
  return {
    key: `${t.provider}:${t.upstreamModel}`,
    provider: t.provider,
    upstreamModel: t.upstreamModel,
    contextWindow: t.contextWindow,
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
    upstreamPrice,
    displayedPrice: withFee(upstreamPrice),
    longContext: long === undefined ? undefined : longContextTier(long.promptTokensAbove, prices(p, long)),
    priceReadOn: t.price.readOn,
  };
}

/**
 * Upstream prices in µUSD/MTok of a tier. A bucket the data leaves out costs the tier's input price. A
 * long-context tier scales the base tier's cache prices by its input price (Anthropic's and Google's
 * are fixed fractions or multiples of the input) unless it names its own cached-input price.
 */
function prices(
  base: CatalogueTargetData['price'],
  tier: { inputUsdPerMTok: number; outputUsdPerMTok: number; cachedInputUsdPerMTok?: number | undefined } = base,
): TokenPrices {
  const input = usdPerMTokToMicro(tier.inputUsdPerMTok);
  const baseInput = usdPerMTokToMicro(base.inputUsdPerMTok);
  const scaled = (usd: number | undefined): number =>
    usd === undefined ? input : baseInput === input ? usdPerMTokToMicro(usd) : Math.ceil((usdPerMTokToMicro(usd) * input) / Math.max(1, baseInput));
  return {
    input,
    cachedInput: tier.cachedInputUsdPerMTok !== undefined ? usdPerMTokToMicro(tier.cachedInputUsdPerMTok) : scaled(base.cachedInputUsdPerMTok),
    cacheWrite5m: scaled(base.cacheWrite5mUsdPerMTok),
    cacheWrite1h: scaled(base.cacheWrite1hUsdPerMTok),
    output: usdPerMTokToMicro(tier.outputUsdPerMTok),
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

/**
 * `npm run prices`: writes functions/shared/catalogue/price-data.ts, the upstream prices of every
 * catalogue target, from pydantic's maintained dataset `@pydantic/genai-prices` (pinned in
 * package.json). Only the targets the catalogue names are written, so the Lambda bundle carries a few
 * kilobytes, not the dataset. test/catalogue/price-data.test.ts regenerates it in memory and fails
 * when the file is stale, so bumping the package and running this is how prices move.
 *
 * Conversion (docs/prices.md "Where each price comes from"): the dataset's USD-per-1M-token numbers
 * are read through their shortest decimal form (`String(0.003625)` = `"0.003625"`) into integer µUSD
 * per 1M tokens, exactly (a price with more than 6 decimals fails the run); start-date constraints
 * become `fromMs` (00:00 UTC of the date), time-of-day constraints daily windows on every day, and a
 * tiered price (all buckets tiered at one threshold) a long-prompt tier.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { findProvider, type ConditionalPrice, type MatchLogic, type ModelInfo, type ModelPrice, type Provider } from '@pydantic/genai-prices';
import { format, type Options } from 'prettier';
import { CATALOGUE_DATA } from '../functions/shared/catalogue/models';
import type { BucketPrices, PriceRule, RulePrices } from '../functions/shared/catalogue/price-schedule';
import { utcMinute } from '../functions/shared/catalogue/price-schedule';
import { usdPerMTokToMicro } from '../functions/shared/money/price';
import type { ProviderName } from '../functions/shared/providers/manifest';

/**
 * The dataset's provider id where it differs from ours (`null`: the dataset has none; price-overrides.ts
 * prices its targets). Any other provider is looked up under its own name, so a new provider the dataset
 * knows (mistral, for one) is priced by `npm run prices` with no edit here.
 */
const DATASET_PROVIDER: Partial<Record<ProviderName, string | null>> = { gemini: 'google' };

/** What the generated file holds per target key `provider:upstreamModel`. */
export interface GeneratedPrice {
  /** The dataset's model id that matched. */
  datasetModel: string;
  contextWindow?: number;
  rules: PriceRule[];
}

function matches(logic: MatchLogic, id: string): boolean {
  const v = id.toLowerCase();
  if ('or' in logic) return logic.or.some((l) => matches(l, id));
  if ('and' in logic) return logic.and.every((l) => matches(l, id));
  if ('equals' in logic) return v === logic.equals.toLowerCase();
  if ('starts_with' in logic) return v.startsWith(logic.starts_with.toLowerCase());
  if ('ends_with' in logic) return v.endsWith(logic.ends_with.toLowerCase());
  if ('contains' in logic) return v.includes(logic.contains.toLowerCase());
  return new RegExp(logic.regex).test(id);
}

type Tiered = { base: number; tiers: { start: number; price: number }[] };
const micro = (usd: number): number => usdPerMTokToMicro(Number(String(usd)));

/** Our buckets ← the dataset's keys. An image model's output is its image output (images are output tokens). */
function bucketKeys(kind: string): Record<keyof BucketPrices, string> {
  return {
    input: 'input_mtok',
    output: kind === 'image' ? 'output_image_mtok' : 'output_mtok',
    cachedInput: 'cache_read_mtok',
    cacheWrite5m: 'cache_write_mtok',
    cacheWrite1h: 'cache_write_1h_mtok',
  };
}

function rulePrices(p: ModelPrice, kind: string, where: string): RulePrices {
  const base: Partial<BucketPrices> = {};
  const long: Partial<BucketPrices> = {};
  let threshold: number | undefined;
  for (const [ours, theirs] of Object.entries(bucketKeys(kind)) as [keyof BucketPrices, string][]) {
    const v = p[theirs] as number | Tiered | undefined;
    if (v === undefined) continue;
    if (typeof v === 'number') {
      base[ours] = micro(v);
      long[ours] = micro(v);
      continue;
    }
    const [tier, ...more] = v.tiers;
    if (tier === undefined || more.length > 0 || (threshold !== undefined && threshold !== tier.start))
      throw new Error(`${where}: only one long-prompt tier at one threshold is supported`);
    threshold = tier.start;
    base[ours] = micro(v.base);
    long[ours] = micro(tier.price);
  }
  if (base.input === undefined) throw new Error(`${where}: no input price`);
  // An embedding model has no output: its output bucket is 0.
  if (base.output === undefined) {
    if (kind !== 'embedding') throw new Error(`${where}: no output price`);
    base.output = 0;
    long.output = 0;
  }
  const prices = base as RulePrices;
  return threshold === undefined ? prices : { ...prices, longContext: { ...(long as BucketPrices), promptTokensAbove: threshold } };
}

function rules(model: ModelInfo, kind: string, where: string): PriceRule[] {
  const list: ConditionalPrice[] = Array.isArray(model.prices) ? model.prices : [{ prices: model.prices }];
  return list.map((c) => {
    const prices = rulePrices(c.prices, kind, where);
    const k = c.constraint;
    if (k === undefined) return { prices };
    if (k.type === 'start_date') return { fromMs: Date.parse(`${k.start_date}T00:00:00Z`), prices };
    return { windows: [{ startMinute: utcMinute(k.start_time.slice(0, 5)), endMinute: utcMinute(k.end_time.slice(0, 5)) }], prices };
  });
}

/** The dataset's prices of every catalogue target it knows, keyed `provider:upstreamModel` (sorted). */
export function generatedPrices(): Record<string, GeneratedPrice> {
  const out: Record<string, GeneratedPrice> = {};
  const providers = new Map<string, Provider | undefined>();
  for (const entry of CATALOGUE_DATA) {
    for (const t of entry.targets) {
      const mapped = DATASET_PROVIDER[t.provider];
      const pid = mapped === undefined ? t.provider : mapped;
      if (pid === null) continue;
      if (!providers.has(pid)) providers.set(pid, findProvider({ providerId: pid }));
      const model = providers.get(pid)?.models.find((m) => matches(m.match, t.upstreamModel));
      if (model === undefined) continue;
      const key = `${t.provider}:${t.upstreamModel}`;
      out[key] = {
        datasetModel: model.id,
        ...(model.context_window !== undefined && { contextWindow: model.context_window }),
        rules: rules(model, entry.kind, key),
      };
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The dataset's version, from the installed package (its exports hide package.json: read the file). */
function datasetVersion(): string {
  const path = resolve(import.meta.dirname, '../node_modules/@pydantic/genai-prices/package.json');
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

/** The generated module's text, formatted as the repository's Prettier settings write it. */
export async function priceDataModule(): Promise<string> {
  const version = datasetVersion();
  const text = `/**
 * GENERATED by \`npm run prices\` (bin/price-data.ts) from @pydantic/genai-prices ${version}: do not edit.
 * Upstream prices of the catalogue's targets, integer µUSD per 1M tokens, as {@link PriceRule} lists
 * (catalogue/price-schedule.ts); corrections where a provider's page is newer live in price-overrides.ts.
 */
import type { PriceRule } from './price-schedule';

/** The dataset and version these prices come from. */
export const PRICE_DATA_SOURCE = '@pydantic/genai-prices ${version}';

/** Prices per target key \`provider:upstreamModel\`: the dataset's model id, its context window (tokens), its rules. */
export const PRICE_DATA: Readonly<Record<string, { datasetModel: string; contextWindow?: number; rules: readonly PriceRule[] }>> = ${JSON.stringify(generatedPrices())};
`;
  const settings = JSON.parse(readFileSync(resolve(import.meta.dirname, '../.prettierrc.json'), 'utf8')) as Options;
  return format(text, { ...settings, parser: 'typescript' });
}

/** Where the generated module lives. */
export const PRICE_DATA_PATH = resolve(import.meta.dirname, '../functions/shared/catalogue/price-data.ts');

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.dirname, 'price-data.ts')) {
  writeFileSync(PRICE_DATA_PATH, await priceDataModule());
  console.log(`wrote ${PRICE_DATA_PATH}`);
}

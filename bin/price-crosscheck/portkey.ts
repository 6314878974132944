/**
 * Portkey's open pricing database (github.com/Portkey-AI/models, `pricing/{provider}.json`) as the
 * price cross-check reads it (docs/prices.md "Cross-check against Portkey"): its units, which of its
 * entries stands for a catalogue target, and the trimmed, dated snapshot committed under
 * docs/price-sources/.
 *
 * Units: Portkey writes **cents (US) per token** (Portkey's own README, its Pricing Unit table: `0.00025` = $2.50 per 1M
 * tokens); modelmux prices in integer µUSD per 1M tokens (money/price.ts). 1 cent/token = 10^6 tokens ×
 * 10^4 µUSD = 10^10 µUSD per 1M tokens, so the conversion is a shift of the decimal point by ten places,
 * done on the number's shortest decimal text (`String(3.625e-7)` = `"3.625e-7"` → 3,625), never in
 * floating point.
 */
import { decimalToScaledInteger } from '../../functions/shared/money/money';
import type { BucketPrices } from '../../functions/shared/catalogue/price-schedule';
import type { ProviderName } from '../../functions/shared/providers/manifest';

/** One Portkey price field: `{ "price": <cents per token> }`. */
interface PortkeyPrice {
  price: number;
}

/**
 * An entry's `pricing_config.pay_as_you_go`, reduced to the fields the cross-check reads (Portkey's
 * README, its Fields table): text input and output, cache read and (5-minute) write, the 1-hour write
 * (`additional_units.cache_write_1h`), and an image model's text input, cached text input and image
 * output (`request_text_token`, `cache_read_text_input_token`, `response_image_token`, or Google's
 * `additional_units.image_token`).
 */
export interface PortkeyRates {
  request_token?: PortkeyPrice;
  response_token?: PortkeyPrice;
  cache_read_input_token?: PortkeyPrice;
  cache_write_input_token?: PortkeyPrice;
  request_text_token?: PortkeyPrice;
  cache_read_text_input_token?: PortkeyPrice;
  response_image_token?: PortkeyPrice;
  additional_units?: { cache_write_1h?: PortkeyPrice; image_token?: PortkeyPrice };
}

/** The committed snapshot: where and when it was taken, and the entries the catalogue's targets use, by Portkey provider file. */
export interface PortkeySnapshot {
  source: string;
  /** The upstream commit (40 hex digits) and its commit date (ISO 8601). */
  commit: string;
  committedAt: string;
  /** When it was brought here, YYYY-MM-DD. */
  fetchedOn: string;
  unit: string;
  note: string;
  providers: Record<string, Record<string, PortkeyRates>>;
}

/**
 * Portkey's provider file (`pricing/<name>.json`) for each catalogue provider whose file is named
 * otherwise; any other provider's is its own name (so adding a provider needs no edit here).
 */
const PORTKEY_PROVIDER: Readonly<Partial<Record<ProviderName, string>>> = {
  gemini: 'google',
  together: 'together-ai',
};

/** The Portkey provider file of a catalogue provider (see {@link PORTKEY_PROVIDER}). */
export const portkeyFile = (provider: ProviderName): string => PORTKEY_PROVIDER[provider] ?? provider;

/**
 * Targets Portkey lists under another id: DeepSeek serves the legacy `deepseek-v4-flash` with
 * `deepseek-flash` (providers.md §8, docs/prices.md "Where each price comes from"), and Portkey's
 * snapshot predates the new name.
 */
const PORTKEY_ALIAS: Readonly<Record<string, string>> = { 'deepseek:deepseek-flash': 'deepseek-v4-flash' };

/**
 * Cents per token (a JSON number, as Portkey writes it) → integer µUSD per 1M tokens, exactly.
 * @throws RangeError for a negative price or one finer than 10^-10 cent per token (not a whole µUSD per 1M tokens).
 */
export function centsPerTokenToMicroPerMTok(cents: number): number {
  return decimalToScaledInteger(plainDecimal(cents), 10);
}

/** A number's shortest decimal text without an exponent: 3.625e-7 → "0.0000003625". */
function plainDecimal(n: number): string {
  const text = String(n);
  const m = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (m === null) return text;
  const digits = `${m[1]}${m[2] ?? ''}`;
  const point = (m[1] as string).length + Number(m[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  return point >= digits.length ? digits.padEnd(point, '0') : `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** The Portkey entries that price one target: the base tier's id, and the long-prompt tier's when Portkey splits one. */
export interface PortkeyMatch {
  file: string;
  baseId: string;
  base: PortkeyRates;
  long: { id: string; promptTokensAbove: number; rates: PortkeyRates } | undefined;
}

/**
 * The ids Portkey may list a target under, best first: its own id (or {@link PORTKEY_ALIAS}), then
 * Google's tier-split ids `<id>-lte-200k` / `<id>-lte-128k`, each with its long tier (`-gt-…`).
 */
export function candidateIds(key: string, upstreamModel: string): { base: string; long?: { id: string; promptTokensAbove: number } }[] {
  const id = PORTKEY_ALIAS[key] ?? upstreamModel;
  return [
    { base: id, long: { id: `${id}-gt-128k`, promptTokensAbove: 128_000 } },
    { base: `${id}-lte-200k`, long: { id: `${id}-gt-200k`, promptTokensAbove: 200_000 } },
    { base: `${id}-lte-128k`, long: { id: `${id}-gt-128k`, promptTokensAbove: 128_000 } },
  ];
}

/** The snapshot's entries for the target `provider:upstreamModel`; undefined when Portkey has none. */
export function portkeyMatch(snapshot: PortkeySnapshot, provider: ProviderName, upstreamModel: string): PortkeyMatch | undefined {
  const file = portkeyFile(provider);
  const entries = snapshot.providers[file] ?? {};
  for (const c of candidateIds(`${provider}:${upstreamModel}`, upstreamModel)) {
    const base = entries[c.base];
    if (base === undefined) continue;
    const long = c.long === undefined ? undefined : entries[c.long.id];
    return { file, baseId: c.base, base, long: long === undefined || c.long === undefined ? undefined : { ...c.long, rates: long } };
  }
  return undefined;
}

/**
 * One tier's explicit buckets, µUSD per 1M tokens. A cache price of 0 is no bucket (Portkey writes 0
 * where a provider bills no such bucket, e.g. OpenAI's cache writes); an image model's input and
 * output are its text input and image output.
 */
export function portkeyBuckets(rates: PortkeyRates, kind: 'chat' | 'embedding' | 'image'): Partial<BucketPrices> {
  const image = kind === 'image';
  const u = rates.additional_units;
  const fields: Record<keyof BucketPrices, PortkeyPrice | undefined> = {
    input: image ? (rates.request_text_token ?? rates.request_token) : rates.request_token,
    output: image ? (rates.response_image_token ?? u?.image_token ?? rates.response_token) : rates.response_token,
    cachedInput: image ? (rates.cache_read_text_input_token ?? rates.cache_read_input_token) : rates.cache_read_input_token,
    cacheWrite5m: image ? undefined : rates.cache_write_input_token,
    cacheWrite1h: image ? undefined : u?.cache_write_1h,
  };
  const out: Partial<BucketPrices> = {};
  for (const [bucket, field] of Object.entries(fields) as [keyof BucketPrices, PortkeyPrice | undefined][]) {
    if (field === undefined) continue;
    const micro = centsPerTokenToMicroPerMTok(field.price);
    if (micro === 0 && bucket !== 'input' && bucket !== 'output') continue;
    out[bucket] = micro;
  }
  return out;
}

/** The fields of {@link PortkeyRates} kept in a snapshot entry; everything else (web search, batch, audio) is dropped. */
export function trimRates(payAsYouGo: Record<string, unknown>): PortkeyRates {
  const keep = [
    'request_token',
    'response_token',
    'cache_read_input_token',
    'cache_write_input_token',
    'request_text_token',
    'cache_read_text_input_token',
    'response_image_token',
  ];
  const out: Record<string, unknown> = Object.fromEntries(keep.filter((k) => payAsYouGo[k] !== undefined).map((k) => [k, payAsYouGo[k]]));
  const units = payAsYouGo.additional_units as Record<string, unknown> | undefined;
  const kept = Object.fromEntries(['cache_write_1h', 'image_token'].filter((k) => units?.[k] !== undefined).map((k) => [k, units?.[k]]));
  if (Object.keys(kept).length > 0) out.additional_units = kept;
  return out as PortkeyRates;
}

/**
 * The price cross-check, pure: every catalogue target's upstream price (before the 1.055 fee) in force
 * at one instant, bucket by bucket, against Portkey's snapshot (portkey.ts); what differs by more than
 * 1 %, and what one side has and the other lacks (docs/prices.md "Cross-check against Portkey").
 *
 * Units: every price is integer µUSD per 1M tokens (money/price.ts); instants epoch ms. A difference is
 * reported when |Portkey − modelmux| × 100 > modelmux (exact, in integers): over 1 % of modelmux's price,
 * or any difference from a price of 0.
 */
import { ruleIndexAt, type BucketPrices, type PriceRule } from '../../functions/shared/catalogue/price-schedule';
import type { ProviderName } from '../../functions/shared/providers/manifest';
import { portkeyBuckets, portkeyMatch, type PortkeySnapshot } from './portkey';

/** One catalogue target as the cross-check sees it: its key, the public models it serves, its price rules as the catalogue applies them. */
export interface CrosscheckTarget {
  key: string;
  provider: ProviderName;
  upstreamModel: string;
  kind: 'chat' | 'embedding' | 'image';
  models: readonly string[];
  rules: readonly PriceRule[];
}

/** The buckets compared, in report order. */
export const BUCKETS: readonly (keyof BucketPrices)[] = ['input', 'output', 'cachedInput', 'cacheWrite5m', 'cacheWrite1h'];

/** `base`: every request; `long`: the long-prompt tier (a prompt over its threshold). */
type Tier = 'base' | 'long';

/** What the cross-check found. Prices µUSD per 1M tokens. */
export type Finding =
  | { kind: 'price'; key: string; tier: Tier; bucket: keyof BucketPrices; modelmux: number; portkey: number; portkeyId: string }
  | { kind: 'bucket-one-side'; key: string; tier: Tier; bucket: keyof BucketPrices; side: 'modelmux' | 'portkey'; price: number; portkeyId: string }
  | { kind: 'tier-threshold'; key: string; modelmux: number | undefined; portkey: number | undefined; portkeyId: string }
  | { kind: 'missing-in-portkey'; key: string; models: readonly string[] }
  | { kind: 'missing-in-catalogue'; file: string; portkeyId: string };

/** One target's outcome: what it was compared with, and the rule in force. */
export interface TargetCheck {
  target: CrosscheckTarget;
  /** The snapshot's entries read (`<file>/<id>`: the base tier's, and its long tier's sibling when there is one); empty when Portkey has none. */
  read: string[];
  /** Portkey's ids compared (the base tier, and the long tier when Portkey's differs from its base). */
  portkeyIds: string[] | undefined;
  /** The index of the rule in force at the instant, and whether any rule has daily windows (time-of-day prices). */
  ruleIndex: number;
  timeOfDay: boolean;
  /** Buckets compared on both sides (base and long tiers together). */
  compared: number;
  findings: Finding[];
}

/** The outcome of one run. */
export interface Crosscheck {
  atMs: number;
  targets: TargetCheck[];
  /** Every finding, targets' first (in catalogue order), then the snapshot's entries no target uses. */
  findings: Finding[];
}

/** Whether `portkey` differs from `modelmux` by more than 1 % of modelmux's price (any difference from 0). */
export function differsOverOnePercent(modelmux: number, portkey: number): boolean {
  const diff = BigInt(Math.abs(portkey - modelmux));
  return diff * 100n > BigInt(modelmux) || (modelmux === 0 && diff > 0n);
}

/** Explicit buckets of a modelmux tier (a bucket left out costs the input price: catalogue.ts). */
function ownBuckets(p: Partial<BucketPrices>): Partial<BucketPrices> {
  return Object.fromEntries(BUCKETS.filter((b) => p[b] !== undefined).map((b) => [b, p[b]]));
}

/**
 * One tier's findings. A cache bucket on one side only is a finding unless it costs that side's input
 * price (what the missing bucket costs anyway).
 */
function compareTier(
  key: string,
  tier: Tier,
  mm: Partial<BucketPrices>,
  pk: Partial<BucketPrices>,
  portkeyId: string,
): { compared: number; findings: Finding[] } {
  const findings: Finding[] = [];
  let compared = 0;
  for (const bucket of BUCKETS) {
    const a = mm[bucket];
    const b = pk[bucket];
    if (a !== undefined && b !== undefined) {
      compared++;
      if (differsOverOnePercent(a, b)) findings.push({ kind: 'price', key, tier, bucket, modelmux: a, portkey: b, portkeyId });
    } else if (a !== undefined && a !== mm.input) findings.push({ kind: 'bucket-one-side', key, tier, bucket, side: 'modelmux', price: a, portkeyId });
    else if (b !== undefined && b !== pk.input) findings.push({ kind: 'bucket-one-side', key, tier, bucket, side: 'portkey', price: b, portkeyId });
  }
  return { compared, findings };
}

/** One target against the snapshot, at `atMs`. */
function checkTarget(t: CrosscheckTarget, snapshot: PortkeySnapshot, atMs: number): TargetCheck {
  const ruleIndex = ruleIndexAt(t.rules, atMs);
  const rule = t.rules[ruleIndex] as PriceRule;
  const timeOfDay = t.rules.some((r) => r.windows !== undefined);
  const match = portkeyMatch(snapshot, t.provider, t.upstreamModel);
  if (match === undefined)
    return {
      target: t,
      read: [],
      portkeyIds: undefined,
      ruleIndex,
      timeOfDay,
      compared: 0,
      findings: [{ kind: 'missing-in-portkey', key: t.key, models: t.models }],
    };
  const read = [match.baseId, ...(match.long === undefined ? [] : [match.long.id])].map((id) => `${match.file}/${id}`);
  const pkBase = portkeyBuckets(match.base, t.kind);
  const base = compareTier(t.key, 'base', ownBuckets(rule.prices), pkBase, match.baseId);
  const findings = [...base.findings];
  let compared = base.compared;
  const pkLong = match.long === undefined ? undefined : portkeyBuckets(match.long.rates, t.kind);
  // Portkey splits some models at 128K with the same prices on both sides: that is no tier.
  const portkeyTier = pkLong !== undefined && (pkLong.input !== pkBase.input || pkLong.output !== pkBase.output) ? match.long : undefined;
  const ownLong = rule.prices.longContext;
  const ids = [match.baseId, ...(portkeyTier === undefined ? [] : [portkeyTier.id])];
  if (ownLong?.promptTokensAbove !== portkeyTier?.promptTokensAbove)
    findings.push({
      kind: 'tier-threshold',
      key: t.key,
      modelmux: ownLong?.promptTokensAbove,
      portkey: portkeyTier?.promptTokensAbove,
      portkeyId: ids.join(', '),
    });
  if (ownLong !== undefined && portkeyTier !== undefined) {
    const long = compareTier(t.key, 'long', ownBuckets(ownLong), portkeyBuckets(portkeyTier.rates, t.kind), portkeyTier.id);
    findings.push(...long.findings);
    compared += long.compared;
  }
  return { target: t, read, portkeyIds: ids, ruleIndex, timeOfDay, compared, findings };
}

/**
 * Compares every target with the snapshot at the instant `atMs` (epoch ms): the rule in force then
 * (price-schedule.ts) gives modelmux's side. Snapshot entries that no target uses are findings too
 * (`missing-in-catalogue`), so a model dropped from the catalogue shows up here.
 * @throws RangeError from portkey.ts for a Portkey price that is not a whole µUSD per 1M tokens.
 */
export function crosscheck(targets: readonly CrosscheckTarget[], snapshot: PortkeySnapshot, atMs: number): Crosscheck {
  const checks = targets.map((t) => checkTarget(t, snapshot, atMs));
  const used = new Set(checks.flatMap((c) => c.read));
  const unused = Object.entries(snapshot.providers).flatMap(([file, entries]) =>
    Object.keys(entries)
      .filter((id) => !used.has(`${file}/${id}`))
      .map((portkeyId): Finding => ({ kind: 'missing-in-catalogue', file, portkeyId })),
  );
  return { atMs, targets: checks, findings: [...checks.flatMap((c) => c.findings), ...unused] };
}

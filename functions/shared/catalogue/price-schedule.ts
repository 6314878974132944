/**
 * Upstream prices that change with time: a model's list of {@link PriceRule}s, as pydantic's
 * genai-prices dataset writes them (docs/prices.md "Where each price comes from"), plus what that
 * dataset cannot say (a rule with both a start date and a daily window, weekdays).
 *
 * Resolution (the dataset's own rule): the LAST rule whose conditions all hold at the instant wins; when
 * none holds, the first rule. A rule without conditions always holds, so it is normally first.
 *
 * Units: prices are integer µUSD per 1M tokens (money/money.ts); instants epoch ms; daily windows are
 * UTC minutes after midnight, `[start, end)`, on UTC weekdays (0 = Sunday … 6 = Saturday).
 */

/** One bucket set, µUSD per 1M tokens. A bucket left out costs the input price. */
export interface BucketPrices {
  input: number;
  output: number;
  /** A prompt token read from the provider's cache. */
  cachedInput?: number;
  /** A prompt token written to the cache for 5 minutes (Anthropic; OpenAI's and Gemini's writes cost input). */
  cacheWrite5m?: number;
  /** A prompt token written to the cache for 1 hour. */
  cacheWrite1h?: number;
}

/** The prices of one rule: base buckets, and a long-prompt tier that prices ALL of a request's tokens once its prompt is over `promptTokensAbove`. */
export interface RulePrices extends BucketPrices {
  longContext?: BucketPrices & { promptTokensAbove: number };
}

/** A daily UTC window on some weekdays. */
export interface DailyWindow {
  /** Minutes after 00:00 UTC, inclusive. */
  startMinute: number;
  /** Minutes after 00:00 UTC, exclusive; below `startMinute` when the window crosses midnight. */
  endMinute: number;
  /** UTC weekdays it applies on (0 = Sunday); absent: every day. */
  weekdays?: readonly number[];
}

/** One price rule: its prices, and when they apply. */
export interface PriceRule {
  /** Applies from this instant on (epoch ms); absent: from the beginning. */
  fromMs?: number;
  /** Applies only inside one of these daily windows; absent: all day. */
  windows?: readonly DailyWindow[];
  prices: RulePrices;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

function inWindow(w: DailyWindow, atMs: number): boolean {
  const day = Math.floor(atMs / DAY_MS);
  const minute = Math.floor((atMs - day * DAY_MS) / MINUTE_MS);
  // 1970-01-01 was a Thursday (weekday 4). A window crossing midnight belongs to the day it starts on.
  const crossing = w.endMinute < w.startMinute;
  const startedYesterday = crossing && minute < w.endMinute;
  const weekday = (((day - (startedYesterday ? 1 : 0) + 4) % 7) + 7) % 7;
  if (w.weekdays !== undefined && !w.weekdays.includes(weekday)) return false;
  return crossing ? minute >= w.startMinute || minute < w.endMinute : minute >= w.startMinute && minute < w.endMinute;
}

/** Whether `rule`'s conditions hold at `atMs`. */
function holds(rule: PriceRule, atMs: number): boolean {
  if (rule.fromMs !== undefined && atMs < rule.fromMs) return false;
  return rule.windows === undefined || rule.windows.some((w) => inWindow(w, atMs));
}

/**
 * The index of the rule in force at `atMs` (the last that holds; 0 when none does).
 * @throws RangeError for an empty rule list.
 */
export function ruleIndexAt(rules: readonly PriceRule[], atMs: number): number {
  if (rules.length === 0) throw new RangeError('a price schedule needs at least one rule');
  for (let i = rules.length - 1; i >= 0; i--) if (holds(rules[i] as PriceRule, atMs)) return i;
  return 0;
}

/**
 * The next instant after `atMs` at which a different rule is in force, epoch ms; undefined when none
 * is. Candidate instants are every rule's start (however far ahead) and every daily window's edges
 * over the next 8 days (a weekly pattern repeats within that).
 */
export function nextPriceChange(rules: readonly PriceRule[], atMs: number): number | undefined {
  const current = ruleIndexAt(rules, atMs);
  const horizon = atMs + 8 * DAY_MS;
  const candidates = new Set<number>();
  const firstDay = Math.floor(atMs / DAY_MS) * DAY_MS;
  for (const r of rules) {
    if (r.fromMs !== undefined && r.fromMs > atMs) candidates.add(r.fromMs);
    for (const w of r.windows ?? [])
      for (let day = firstDay; day <= horizon; day += DAY_MS)
        for (const m of [w.startMinute, w.endMinute]) if (day + m * MINUTE_MS > atMs) candidates.add(day + m * MINUTE_MS);
  }
  for (const t of [...candidates].sort((a, b) => a - b)) if (ruleIndexAt(rules, t) !== current) return t;
  return undefined;
}

/** `"HH:MM"` (UTC) → minutes after midnight. @throws RangeError for another form. */
export function utcMinute(hhmm: string): number {
  const m = /^(\d{2}):(\d{2})(?::00)?Z?$/.exec(hhmm);
  const h = Number(m?.[1]);
  const min = Number(m?.[2]);
  if (m === null || h > 24 || min > 59 || (h === 24 && min > 0)) throw new RangeError(`"${hhmm}" is not an HH:MM UTC time`);
  return h * 60 + min;
}

/** Monday to Friday, as UTC weekdays. */
export const WEEKDAYS: readonly number[] = [1, 2, 3, 4, 5];

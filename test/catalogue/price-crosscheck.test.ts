import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogueTargets, crosscheckReport, DEFAULT_AT_MS, findingLine, newestSnapshotPath } from '../../bin/price-crosscheck';
import { crosscheck, differsOverOnePercent, type Finding } from '../../bin/price-crosscheck/compare';
import { centsPerTokenToMicroPerMTok, portkeyBuckets, type PortkeySnapshot } from '../../bin/price-crosscheck/portkey';
import { CATALOGUE } from '../../functions/shared/catalogue/catalogue';

/**
 * The cross-check of the catalogue's upstream prices against the committed Portkey snapshot
 * (docs/prices.md "Cross-check against Portkey"), run on the real catalogue and snapshot.
 */

const path = newestSnapshotPath();
const snapshot = JSON.parse(readFileSync(path, 'utf8')) as PortkeySnapshot;
const targets = catalogueTargets();
const result = crosscheck(targets, snapshot, DEFAULT_AT_MS);
/** Monday 2026-12-07 02:00 UTC: inside DeepSeek's first peak window. */
const PEAK = Date.parse('2026-12-07T02:00:00Z');

const priceFinding = (findings: readonly Finding[], key: string, bucket: string) =>
  findings.find((f) => f.kind === 'price' && f.key === key && f.bucket === bucket && f.tier === 'base');

describe('the unit conversion (Portkey cents per token → µUSD per 1M tokens)', () => {
  it('shifts the decimal point by ten places, exactly, exponent forms included', () => {
    expect(centsPerTokenToMicroPerMTok(0.00025)).toBe(2_500_000); // $2.50 per 1M (Portkey's README example)
    expect(centsPerTokenToMicroPerMTok(0.003)).toBe(30_000_000); // $30 per 1M
    expect(centsPerTokenToMicroPerMTok(3.625e-7)).toBe(3_625); // $0.003625 per 1M
    expect(centsPerTokenToMicroPerMTok(1)).toBe(10_000_000_000);
    expect(centsPerTokenToMicroPerMTok(0)).toBe(0);
  });

  it('refuses a price finer than a whole µUSD per 1M tokens, or negative, rather than round it', () => {
    expect(() => centsPerTokenToMicroPerMTok(1e-11)).toThrow(RangeError);
    expect(() => centsPerTokenToMicroPerMTok(-0.001)).toThrow(RangeError);
  });

  it("reads the snapshot's gpt-4o as the catalogue's upstream price, bucket by bucket", () => {
    const gpt4o = portkeyBuckets(snapshot.providers.openai?.['gpt-4o'] ?? {}, 'chat');
    const own = CATALOGUE.get('gpt-4o')?.targets[0]?.upstreamPrice;
    // OpenAI bills no cache write: Portkey's 0 there is no bucket, not a free write.
    expect(gpt4o).toEqual({ input: 2_500_000, output: 10_000_000, cachedInput: 1_250_000 });
    expect(own).toMatchObject({ input: 2_500_000, output: 10_000_000, cachedInput: 1_250_000 });
  });
});

describe('the comparison', () => {
  it('reports over 1 % of modelmux’s price only', () => {
    expect(differsOverOnePercent(1000, 1010)).toBe(false);
    expect(differsOverOnePercent(1000, 990)).toBe(false);
    expect(differsOverOnePercent(1000, 1011)).toBe(true);
    expect(differsOverOnePercent(1000, 989)).toBe(true);
    expect(differsOverOnePercent(0, 0)).toBe(false);
    expect(differsOverOnePercent(0, 1)).toBe(true);
  });

  it("finds MiniMax's prices 100 times lower in Portkey", () => {
    expect(priceFinding(result.findings, 'minimax:MiniMax-M2.7', 'input')).toMatchObject({ modelmux: 300_000, portkey: 3_000 });
    expect(priceFinding(result.findings, 'minimax:MiniMax-M2.7', 'output')).toMatchObject({ modelmux: 1_200_000, portkey: 12_000 });
  });

  it("compares DeepSeek at the instant's rule: off-peak at noon, the peak price at 02:00 UTC on a weekday", () => {
    const check = result.targets.find((c) => c.target.key === 'deepseek:deepseek-v4-pro');
    expect(check?.timeOfDay).toBe(true);
    expect(priceFinding(result.findings, 'deepseek:deepseek-v4-pro', 'input')).toMatchObject({ modelmux: 660_000, portkey: 435_000 });
    const atPeak = crosscheck(targets, snapshot, PEAK);
    expect(priceFinding(atPeak.findings, 'deepseek:deepseek-v4-pro', 'input')).toMatchObject({ modelmux: 1_320_000, portkey: 435_000 });
    // deepseek-flash is compared with Portkey's legacy id, which it serves.
    expect(priceFinding(atPeak.findings, 'deepseek:deepseek-flash', 'output')).toMatchObject({
      modelmux: 1_200_000,
      portkey: 280_000,
      portkeyId: 'deepseek-v4-flash',
    });
  });

  it("finds Gemini 2.5 Pro's long-prompt tier at another threshold, and its prices the same", () => {
    const pro = result.findings.filter((f) => 'key' in f && f.key === 'gemini:gemini-2.5-pro');
    expect(pro).toEqual([expect.objectContaining({ kind: 'tier-threshold', modelmux: 200_000, portkey: 128_000 })]);
  });

  it('agrees on Claude Opus 4.6 in all five buckets, cache writes of 5 minutes and 1 hour included', () => {
    const opus = result.targets.find((c) => c.target.key === 'anthropic:claude-opus-4-6');
    expect(opus).toMatchObject({ compared: 5, findings: [] });
  });

  it('names the catalogue models Portkey lacks, and a snapshot entry no target uses', () => {
    const missing = result.findings.flatMap((f) => (f.kind === 'missing-in-portkey' ? [f.key] : []));
    expect(missing).toContain('anthropic:claude-sonnet-5-5');
    expect(missing).not.toContain('openai:gpt-5');
    // The snapshot is trimmed to the catalogue: every entry is read.
    expect(result.findings.filter((f) => f.kind === 'missing-in-catalogue')).toEqual([]);
    const withoutGpt4o = crosscheck(
      targets.filter((t) => t.key !== 'openai:gpt-4o'),
      snapshot,
      DEFAULT_AT_MS,
    );
    expect(withoutGpt4o.findings.filter((f) => f.kind === 'missing-in-catalogue')).toEqual([
      { kind: 'missing-in-catalogue', file: 'openai', portkeyId: 'gpt-4o' },
    ]);
  });
});

describe('the report', () => {
  const lines = crosscheckReport(result, snapshot, path);

  it('lists exactly the findings the comparison makes, each once (grouped by section)', () => {
    const listed = lines.filter((l) => /^ {2}(DIFF|ONLY|TIER|MISSING) /.test(l)).map((l) => l.trim());
    expect(listed.toSorted()).toEqual(result.findings.map(findingLine).toSorted());
    expect(new Set(listed).size).toBe(listed.length);
    const header = lines.find((l) => l.startsWith('Disagreements over 1%'));
    expect(header).toBe(`Disagreements over 1% (${result.findings.filter((f) => f.kind === 'price').length}):`);
  });

  it('says what was compared: the snapshot commit, the instant, and every target', () => {
    expect(lines.some((l) => l.includes(snapshot.commit) && l.includes(snapshot.committedAt))).toBe(true);
    expect(lines).toContain("  instant: 2026-12-07T12:00:00.000Z (Monday, UTC): modelmux's price rule in force then");
    expect(lines.filter((l) => / \(.*\): .*rule \d+ of \d+ in force/.test(l))).toHaveLength(targets.length);
    expect(lines.find((l) => l.startsWith('  deepseek:deepseek-flash '))).toContain('time-of-day rules');
  });

  it('prints a price disagreement in USD per 1M tokens on both sides', () => {
    const f = priceFinding(result.findings, 'deepseek:deepseek-v4-pro', 'cachedInput');
    expect(f && findingLine(f)).toBe('DIFF deepseek:deepseek-v4-pro cachedInput: modelmux $0.022, Portkey $0.003625 (-83.5%) [deepseek-v4-pro]');
  });
});

/**
 * `npm run prices:crosscheck`: compares every catalogue target's upstream price (before the 1.055 fee,
 * in force at one instant, printed) with the newest Portkey snapshot in docs/price-sources/, bucket by
 * bucket, and prints each difference over 1 %, each bucket or long-prompt tier one side lacks, and each
 * model missing from either side (docs/prices.md "Cross-check against Portkey"). The comparison is
 * bin/price-crosscheck/compare.ts; this file reads the catalogue, prints, and takes a new snapshot.
 *
 *   npm run prices:crosscheck [-- --at=2026-12-07T02:00:00Z] [--snapshot=docs/price-sources/portkey-….json]
 *   npm run prices:crosscheck -- --snapshot-from=<git dir of Portkey-AI/models>   (writes a new trimmed snapshot)
 *
 * Exit code 0 either way: a difference is for a person to judge against the provider's page.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { CATALOGUE, type Catalogue } from '../functions/shared/catalogue/catalogue';
import { crosscheck, type Crosscheck, type CrosscheckTarget, type Finding, type TargetCheck } from './price-crosscheck/compare';
import { portkeyFile, portkeyMatch, trimRates, type PortkeyRates, type PortkeySnapshot } from './price-crosscheck/portkey';

/** The instant compared when none is given: Monday 2026-12-07 12:00 UTC (off-peak for DeepSeek). */
export const DEFAULT_AT_MS = Date.parse('2026-12-07T12:00:00Z');

const ROOT = resolve(import.meta.dirname, '..');
const SNAPSHOT_DIR = resolve(ROOT, 'docs/price-sources');

/** The newest snapshot's path (`portkey-<date>.json` sorts by date). @throws Error when there is none. */
export function newestSnapshotPath(): string {
  const names = readdirSync(SNAPSHOT_DIR)
    .filter((n) => /^portkey-\d{4}-\d{2}-\d{2}\.json$/.test(n))
    .sort();
  const newest = names.at(-1);
  if (newest === undefined) throw new Error(`no portkey-<date>.json in ${SNAPSHOT_DIR}`);
  return resolve(SNAPSHOT_DIR, newest);
}

/** The catalogue's targets, one per key `provider:upstreamModel`, with the public models each serves (catalogue order). */
export function catalogueTargets(catalogue: Catalogue = CATALOGUE): CrosscheckTarget[] {
  const byKey = new Map<string, CrosscheckTarget>();
  for (const entry of catalogue.values())
    for (const t of entry.targets) {
      const seen = byKey.get(t.key);
      if (seen !== undefined) {
        if (!seen.models.includes(entry.id)) byKey.set(t.key, { ...seen, models: [...seen.models, entry.id] });
        continue;
      }
      byKey.set(t.key, { key: t.key, provider: t.provider, upstreamModel: t.upstreamModel, kind: entry.kind, models: [entry.id], rules: t.priceRules });
    }
  return [...byKey.values()];
}

/** µUSD per 1M tokens → `$0.003625`. */
function usd(micro: number): string {
  const whole = Math.floor(micro / 1e6);
  const fraction = String(micro % 1e6)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `$${whole}.${fraction}`;
}

const TIER = { base: '', long: ' (long prompt)' } as const;

/** One finding as the report prints it: a tag, the target, what differs. */
export function findingLine(f: Finding): string {
  switch (f.kind) {
    case 'price': {
      const pct = (((f.portkey - f.modelmux) / f.modelmux) * 100).toFixed(1);
      return `DIFF ${f.key} ${f.bucket}${TIER[f.tier]}: modelmux ${usd(f.modelmux)}, Portkey ${usd(f.portkey)} (${f.modelmux === 0 ? 'from 0' : `${pct}%`}) [${f.portkeyId}]`;
    }
    case 'bucket-one-side':
      return `ONLY ${f.key} ${f.bucket}${TIER[f.tier]}: ${f.side === 'modelmux' ? `modelmux ${usd(f.price)}, Portkey none` : `Portkey ${usd(f.price)}, modelmux none (input price)`} [${f.portkeyId}]`;
    case 'tier-threshold':
      return `TIER ${f.key}: long-prompt tier above ${f.modelmux ?? 'none'} (modelmux) vs ${f.portkey ?? 'none'} (Portkey) prompt tokens [${f.portkeyId}]`;
    case 'missing-in-portkey':
      return `MISSING ${f.key}: not in Portkey (serves ${f.models.join(', ')})`;
    case 'missing-in-catalogue':
      return `MISSING ${f.file}/${f.portkeyId}: in the snapshot, no catalogue target`;
  }
}

function targetLine(c: TargetCheck): string {
  const rules = c.target.rules;
  const daily = rules[c.ruleIndex]?.windows !== undefined ? ' (a daily-window rule)' : '';
  const schedule = `${c.timeOfDay ? 'time-of-day rules; ' : ''}rule ${c.ruleIndex + 1} of ${rules.length} in force${daily}`;
  const vs = c.portkeyIds === undefined ? 'no Portkey entry' : `Portkey ${c.portkeyIds.join(' + ')}: ${c.compared} buckets compared`;
  return `  ${c.target.key} (${c.target.models.join(', ')}): ${schedule}; ${vs}; ${c.findings.length === 0 ? 'agree' : `${c.findings.length} finding(s)`}`;
}

const SECTIONS: readonly { title: string; kinds: readonly Finding['kind'][] }[] = [
  { title: 'Disagreements over 1%', kinds: ['price'] },
  { title: 'A bucket or long-prompt tier on one side only', kinds: ['bucket-one-side', 'tier-threshold'] },
  { title: 'Missing from one side', kinds: ['missing-in-portkey', 'missing-in-catalogue'] },
];

/** The report's lines: what was compared (snapshot, instant, units), every target, then the findings by section. */
export function crosscheckReport(result: Crosscheck, snapshot: PortkeySnapshot, snapshotPath: string): string[] {
  const at = new Date(result.atMs);
  const weekday = at.toLocaleDateString('en-GB', { weekday: 'long', timeZone: 'UTC' });
  const lines = [
    "Cross-check of modelmux's upstream prices (before the 1.055 fee) against Portkey's pricing database",
    `  snapshot: ${relative(ROOT, snapshotPath)} (${snapshot.source} @ ${snapshot.commit}, committed ${snapshot.committedAt}, fetched ${snapshot.fetchedOn})`,
    `  instant: ${at.toISOString()} (${weekday}, UTC): modelmux's price rule in force then`,
    '  units: USD per 1M tokens; Portkey writes cents per token (× 10^10 = integer µUSD per 1M tokens, exact)',
    "  a difference is reported when it is over 1% of modelmux's price",
    '',
    `Targets (${result.targets.length}):`,
    ...result.targets.map(targetLine),
  ];
  for (const s of SECTIONS) {
    const found = result.findings.filter((f) => s.kinds.includes(f.kind));
    lines.push('', `${s.title} (${found.length}):`, ...found.map((f) => `  ${findingLine(f)}`));
  }
  return lines;
}

/**
 * A trimmed snapshot of a Portkey checkout (a git directory, read at HEAD): the entries
 * {@link portkeyMatch} reads for the catalogue's targets, only the fields portkey.ts compares.
 * @throws Error when git fails or a provider file is missing.
 */
export function takeSnapshot(gitDir: string, targets: readonly CrosscheckTarget[], fetchedOn: string): PortkeySnapshot {
  const git = (...args: string[]) => execFileSync('git', ['-C', gitDir, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const [commit, committedAt] = git('log', '-1', '--format=%H%n%cI').trim().split('\n') as [string, string];
  const files = [...new Set(targets.map((t) => portkeyFile(t.provider)))];
  const full: PortkeySnapshot['providers'] = {};
  for (const file of files) {
    const raw = JSON.parse(git('show', `HEAD:pricing/${file}.json`)) as Record<string, { pricing_config?: { pay_as_you_go?: Record<string, unknown> } }>;
    full[file] = Object.fromEntries(Object.entries(raw).map(([id, e]) => [id, trimRates(e.pricing_config?.pay_as_you_go ?? {})]));
  }
  const providers: Record<string, Record<string, PortkeyRates>> = {};
  for (const t of targets) {
    const m = portkeyMatch({ providers: full } as PortkeySnapshot, t.provider, t.upstreamModel);
    if (m === undefined) continue;
    const into = (providers[m.file] ??= {});
    into[m.baseId] = m.base;
    if (m.long !== undefined) into[m.long.id] = m.long.rates;
  }
  const sorted = Object.fromEntries(
    Object.entries(providers).map(([f, e]) => [f, Object.fromEntries(Object.entries(e).sort(([a], [b]) => a.localeCompare(b)))]),
  );
  return {
    source: 'github.com/Portkey-AI/models',
    commit,
    committedAt,
    fetchedOn,
    unit: 'US cents per token (README "Pricing Unit")',
    note: 'Trimmed by `npm run prices:crosscheck -- --snapshot-from=<dir>`: only the entries of pricing/{provider}.json that price a catalogue target, and of each only the pay_as_you_go fields the cross-check compares.',
    providers: sorted,
  };
}

/** The snapshot as committed: one line per Portkey entry, so a diff of two snapshots shows each changed model. */
function snapshotText(s: PortkeySnapshot): string {
  const { providers, ...head } = s;
  const files = Object.entries(providers).map(
    ([file, entries]) =>
      `    ${JSON.stringify(file)}: {\n${Object.entries(entries)
        .map(([id, rates]) => `      ${JSON.stringify(id)}: ${JSON.stringify(rates)}`)
        .join(',\n')}\n    }`,
  );
  return `${JSON.stringify(head, null, 2).replace(/\n}$/, ',')}\n  "providers": {\n${files.join(',\n')}\n  }\n}\n`;
}

async function main(args: readonly string[]): Promise<number> {
  const opt = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const from = opt('snapshot-from');
  if (from !== undefined) {
    const snapshot = takeSnapshot(from, catalogueTargets(), new Date().toISOString().slice(0, 10));
    const path = resolve(SNAPSHOT_DIR, `portkey-${new Date(snapshot.committedAt).toISOString().slice(0, 10)}.json`);
    writeFileSync(path, snapshotText(snapshot));
    console.log(`wrote ${path}`);
    return 0;
  }
  const at = opt('at');
  const atMs = at === undefined ? DEFAULT_AT_MS : Date.parse(at);
  if (Number.isNaN(atMs)) throw new RangeError(`--at=${at} is not an ISO 8601 instant`);
  const path = opt('snapshot') ?? newestSnapshotPath();
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as PortkeySnapshot;
  console.log(crosscheckReport(crosscheck(catalogueTargets(), snapshot, atMs), snapshot, path).join('\n'));
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.dirname, 'price-crosscheck.ts')) {
  process.exitCode = await main(process.argv.slice(2));
}

/** Report section: bundle sizes, what fills them, and cold-start times. */
import { kb, ms, pct, signedMs, table } from './format';
import type { ProfileSummary } from './profile-summary';
import type { BenchReport } from './report-types';

/** Categories of a profile as "name share" rows, largest first (idle and root left out). */
export function categoryRows(summary: ProfileSummary): string[][] {
  return Object.entries(summary.categories)
    .filter(([name]) => name !== 'idle' && name !== 'root')
    .sort((a, b) => b[1] - a[1])
    .map(([name, msValue]) => [name, ms(msValue), pct(msValue / Math.max(1e-9, summary.busyMs))]);
}

/** Bundles, packages, load times and the load profile. */
export function startupSection(r: BenchReport): string {
  const sizes = table(
    ['Function', 'index.mjs (minified)', 'gzip -9', 'index.mjs.map', 'tokenizer file (lazy)'],
    r.bundles.map((b) => [b.name, kb(b.indexBytes), kb(b.indexGzipBytes), kb(b.mapBytes), kb(b.tokenizerBytes)]),
  );
  const chat = r.bundles.find((b) => b.name === 'Chat') ?? r.bundles[0];
  const packages = chat
    ? table(['Package (Chat index.mjs)', 'bytesInOutput', 'Share'], chat.packages.slice(0, 10).map((p) => [p.name, kb(p.bytes), pct(p.bytes / chat.indexBytes)]))
    : '(no bundle)';
  const c = r.coldStarts;
  const loads = table(
    ['Module', 'import() median (min), source maps on (as deployed)', 'import() median (min), source maps off', 'process start → handler, median (maps on)', 'over an empty module (maps on)'],
    [
      ['empty module (baseline)', `${ms(c.empty.importMs)} (${ms(c.empty.importMinMs)})`, '—', ms(c.empty.readyMs), '—'],
      ...r.bundles.map((b) => {
        const on = c.sourceMaps[b.name];
        const off = c.plain[b.name];
        return [
          `${b.name} index.mjs`,
          `${ms(on?.importMs ?? Number.NaN)} (${ms(on?.importMinMs ?? Number.NaN)})`,
          `${ms(off?.importMs ?? Number.NaN)} (${ms(off?.importMinMs ?? Number.NaN)})`,
          ms(on?.readyMs ?? Number.NaN),
          signedMs(on?.addedMs ?? Number.NaN),
        ];
      }),
    ],
  );
  const parts = [
    'Built by `cdk synth --quiet` into a temporary directory (the construct\'s own esbuild options: ESM, minified, names',
    'kept, tokenizer in its own lazily imported file, metafile). Load time: a fresh `node` process defines a',
    '`globalThis.awslambda` shim, sets the env the handlers read at load (table names, region, dummy credentials,',
    `Powertools settings), and times \`await import(bundle)\` until \`handler\` is in hand; median of ${c.empty.runs} runs per module,`,
    'after one unmeasured run (warm page cache, as on a Lambda host). Node here is the bench machine\'s, not Lambda\'s Node 24 on arm64.',
    `Other processes kept ${c.otherCores.toFixed(2)} of the ${r.machine.cores} cores busy meanwhile; the min column is the run least`,
    'disturbed by anything else on the machine.',
    '',
    sizes,
    '',
    packages,
    '',
    loads,
  ];
  if (r.loadProfile) {
    parts.push(
      '',
      `**Load profile** (one \`node --cpu-prof\` load of the Chat bundle, mapped to sources with index.mjs.map; sampling slows it, read the shares): busy ${ms(r.loadProfile.busyMs)} ms.`,
      '',
      table(['Category', 'Self ms', 'Share'], categoryRows(r.loadProfile)),
      '',
      table(['Our code (functions/**) and what it calls', 'ms', 'Share'], r.loadProfile.topOwn.map((h) => [h.where, ms(h.selfMs), pct(h.share)])),
    );
  }
  return parts.join('\n');
}

/** Report section "Where the time goes": the gateway's hot-path profile. */
import { int, ms, pct, table } from './format';
import { HOT_PATH_MATCHERS, inclusiveTimes } from './profile-inclusive';
import { categoryRows } from './report-startup';
import type { BenchReport } from './report-types';

/** Categories, inclusive cost centres, top self-time functions and our frames with their callees. */
export function profileSection(r: BenchReport): string {
  const p = r.hotProfile;
  const inclusive = inclusiveTimes(p.file, HOT_PATH_MATCHERS);
  return [
    `CPU profile of the gateway process during ${int(p.requests)} buffered chat requests at c=16 (a separate, unmeasured run;`,
    `sampling every 200 µs slows the gateway), positions mapped to the TypeScript sources. Busy ${ms(p.summary.busyMs)} ms of`,
    `${ms(p.summary.durationMs)} ms, i.e. ${ms(p.summary.busyMs / Math.max(1, p.requests))} ms CPU per request under the profiler.`,
    '',
    '**By category (self time):**',
    '',
    table(['Category', 'Self ms', 'Share of busy'], categoryRows(p.summary)),
    '',
    '**Cost centres (inclusive: any frame on the stack; async continuations make these lower bounds):**',
    '',
    table(['Code', 'ms', 'Share of busy'], inclusive.map((x) => [x.label, ms(x.ms), pct(x.share)])),
    '',
    '**Top 10 functions by self time:**',
    '',
    table(['Function (file:line)', 'Self ms', 'Share'], p.summary.topSelf.map((h) => [h.where, ms(h.selfMs), pct(h.share)])),
    '',
    '**Top 10 of our frames (functions/**, local/**) charged with the self time of everything they call outside our code:**',
    '',
    table(['Our frame (file:line)', 'ms', 'Share'], p.summary.topOwn.map((h) => [h.where, ms(h.selfMs), pct(h.share)])),
  ].join('\n');
}

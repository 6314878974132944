/** Report sections of the load runs: buffered, CPU split, streaming, DynamoDB calls. */
import { BENCH_CONFIG } from './config';
import { int, ms, signedMs, table } from './format';
import { OTHER_PROCESSES } from './process-cpu';
import type { BenchReport } from './report-types';

/** The buffered table, its noise and the CPU per request by process. */
export function bufferedSection(r: BenchReport): string {
  const main = table(
    ['Scenario', 'Requests / target', 'direct p50', 'direct p99', 'direct req/s', 'modelmux p50', 'modelmux p99', 'modelmux req/s', 'Added p50', 'Added p99', 'Throughput ratio'],
    r.buffered.map((b) => [
      b.label,
      int(b.requestsPerTarget),
      ms(b.direct.latency.p50),
      ms(b.direct.latency.p99),
      b.latencyOnly ? '—' : int(b.direct.sustainedReqPerSec),
      ms(b.modelmux.latency.p50),
      ms(b.modelmux.latency.p99),
      b.latencyOnly ? '—' : int(b.modelmux.sustainedReqPerSec),
      signedMs(b.addedP50),
      signedMs(b.addedP99),
      b.latencyOnly ? '—' : `${b.throughputRatio.toFixed(2)}×`,
    ]),
  );
  const noise = table(
    ['Scenario', 'direct round p50 (min–max)', 'modelmux round p50 (min–max)', 'direct round req/s (min–max)', 'modelmux round req/s (min–max)', 'modelmux client-visible req/s', 'other processes (cores, direct / modelmux)', 'failures'],
    r.buffered.map((b) => [
      b.label,
      `${ms(b.direct.roundP50.min)}–${ms(b.direct.roundP50.max)}`,
      `${ms(b.modelmux.roundP50.min)}–${ms(b.modelmux.roundP50.max)}`,
      `${int(b.direct.roundReqPerSec.min)}–${int(b.direct.roundReqPerSec.max)}`,
      `${int(b.modelmux.roundReqPerSec.min)}–${int(b.modelmux.roundReqPerSec.max)}`,
      int(b.modelmux.reqPerSec),
      `${b.direct.otherCores.toFixed(2)} / ${b.modelmux.otherCores.toFixed(2)}`,
      `${b.direct.failures + b.modelmux.failures}${b.direct.capped || b.modelmux.capped ? ' (time cap hit)' : ''}`,
    ]),
  );
  const groups = ['client', 'gateway', 'simulator', 'dynamodb'];
  const cpu = table(
    ['Scenario', 'Target', ...groups.map((g) => `${g} CPU ms/req`), 'Σ ms/req', '2-core bound req/s', 'other processes ms/req'],
    r.buffered.filter((b) => !b.latencyOnly).flatMap((b) =>
      (['direct', 'modelmux'] as const).map((t) => {
        const c = b[t].cpuMsPerRequest;
        const total = groups.reduce((a, g) => a + (c[g] ?? 0), 0);
        return [b.label, t, ...groups.map((g) => ms(c[g] ?? 0)), ms(total), int(2000 / total), ms(c[OTHER_PROCESSES] ?? 0)];
      }),
    ),
  );
  return [
    'Latency in ms (send → last body byte, nearest-rank percentiles over all rounds pooled); req/s for modelmux is',
    '**sustained**: requests ÷ (load time + the time the gateway still needed to finish their ledger writes, which',
    'run after the response). "Added" = modelmux − direct. "One invocation at a time": each request is sent only once',
    'the previous one\'s ledger write has finished, as a Lambda container would take it; the plain c=1 row lets the',
    'ledger write of request n overlap request n+1, which a single process hosting every invocation allows.',
    '',
    main,
    '',
    '**Noise across rounds** (each round alternates which target goes first):',
    '',
    noise,
    '',
    '**CPU per request by process** (from /proc, load + ledger drain; 1,000 ms of CPU = one core-second). "2-core bound"',
    'is what the machine could serve if CPU were the only limit: 2,000 ÷ Σ. "other processes" is machine busy time no bench',
    'process accounts for (other users of this machine, kernel threads): the noise floor of the run.',
    '',
    cpu,
  ].join('\n');
}

/** The streaming table. */
export function streamSection(r: BenchReport): string {
  const d = BENCH_CONFIG.chunkDelayMs;
  const rows = r.streams.flatMap((s) =>
    (['direct', 'modelmux'] as const).map((t) => {
      const x = s[t];
      return [
        s.label,
        t,
        int(x.streams),
        ms(x.firstByte.p50),
        ms(x.firstToken.p50),
        ms(x.firstToken.p99),
        `${ms(s.roundFirstTokenP50[t].min)}–${ms(s.roundFirstTokenP50[t].max)}`,
        ms(x.gap.p50),
        ms(x.deviationP50),
        ms(x.deviationP99),
        ms(x.deviationMax),
        `${x.batchedChunks} / ${int(x.contentEvents)}`,
        String(x.unfinished),
        s.otherCores[t].toFixed(2),
      ];
    }),
  );
  const added = r.streams.map((s) => `${s.label}: first byte ${signedMs(s.addedFirstByteP50)} ms, first token ${signedMs(s.addedFirstTokenP50)} ms p50 / ${signedMs(s.addedFirstTokenP99)} ms p99`);
  return [
    `The simulator paces stream events ${d} ms apart (role chunk at once, then one content event every ${d} ms). Every`,
    'content event\'s arrival is timed at the client; "batched" = content events that arrived in the same socket read as another.',
    '"One invocation at a time" waits for the previous stream\'s ledger write before the next stream, as a Lambda container would.',
    '',
    table(['Scenario', 'Target', 'Streams', 'TTFB p50', 'TTFT p50', 'TTFT p99', 'round TTFT p50 (min–max)', 'gap p50', `|gap−${d}| median`, `|gap−${d}| p99`, `|gap−${d}| max`, 'batched / content events', 'unfinished', 'other processes (cores)'], rows),
    '',
    ...added.map((a) => `- Added by modelmux, ${a}.`),
  ].join('\n');
}

/** DynamoDB calls per request. */
export function storeCallsSection(r: BenchReport): string {
  const ops = (operations: Record<string, { calls: number; errors: Record<string, number>; totalMs: number }>, per: number): string =>
    Object.entries(operations)
      .map(([name, c]) => `${name} ×${(c.calls / per).toFixed(2)} (${ms(c.totalMs / Math.max(1, c.calls))} ms avg${Object.keys(c.errors).length ? `, errors ${JSON.stringify(c.errors)}` : ''})`)
      .join(', ') || 'none';
  const warm = table(
    ['Request (warm)', 'Requests', 'Reads / req', 'Writes / req', 'Operations per request', 'Log lines / req', 'Windows re-measured (cache TTL ran out)'],
    r.storeCalls.map((s) => [
      s.kind,
      String(s.requests),
      (s.snapshot.reads / s.requests).toFixed(2),
      (s.snapshot.writes / s.requests).toFixed(2),
      ops(s.snapshot.operations, s.requests),
      s.logLinesPerRequest.toFixed(2),
      String(s.refreshedWindows),
    ]),
  );
  const a = r.amortizedStoreCalls;
  return [
    'Counted by an SDK middleware on the gateway\'s document client (bench/store-call-counter.ts), after one',
    'unmeasured request of each kind; ledger writes that finish after the response are included. A window in which a',
    'cache entry reached its TTL (one refresh read) is measured again; those refresh reads are in the amortised line below.',
    '',
    warm,
    '',
    `Over all measured buffered rounds (${int(a.requests)} gateway requests, caches expiring on their own TTLs): ` +
      `${(a.snapshot.reads / Math.max(1, a.requests)).toFixed(4)} reads and ${(a.snapshot.writes / Math.max(1, a.requests)).toFixed(4)} writes per request — ${ops(a.snapshot.operations, Math.max(1, a.requests))}.`,
  ].join('\n');
}

/**
 * BENCHMARKS.md from one run: the goals first (each figure against its goal, met or not, and what
 * limits it), then the cost of the mix, write units, CPU by phase, latency and load, cold start.
 */
import type { ImportTiming } from './cold-start';
import {
  ASSUMPTIONS,
  billedMs,
  breakEvenPerMonth,
  CLOUDFRONT_FLAT_RATE_PER_1M,
  costRow,
  INIT_GOAL_MS,
  initMs,
  MANAGED,
  managedRow,
  MIX,
  PRICES,
  rightSizedMb,
  withUpstream,
  type CostInputs,
  type CostRow,
  type RequestFigures,
} from './cost';
import { DEV_KEY_LOAD, KINDS, percentile, type BenchConfig, type Kind, type KindResult, type LoadResult, type PhaseProfile, type WruRow } from './measure';
import { BENCH_COUNTER_PHASE } from './profile';
import { leanGoalRows } from './lean-goals';
import { kb, loadGoal, met, pct, round, sum, table, usd } from './report-cells';
import { stackFunction, type StackInfo } from './stack';

/** Everything one run measured. */
export interface Results {
  cfg: BenchConfig;
  header: string;
  stack: StackInfo;
  imports: ImportTiming[];
  kinds: Record<Kind, KindResult>;
  load: LoadResult[];
  wru: WruRow[];
  phases: PhaseProfile;
  leaseEnv: Record<string, string>;
}

const units = (w: WruRow | undefined): string =>
  Object.entries(w?.byTable ?? {})
    .filter(([, u]) => u >= 0.005)
    .map(([t, u]) => `${t} ${round(u)}`)
    .join(', ');

/** Gateway CPU of the handler path: the process's CPU minus the stand-in's replay of the same answer, minus the bench's call counter. */
function handlerCpu(r: Results, k: Kind): number {
  const kr = r.kinds[k];
  const counter = (r.phases[k].get(BENCH_COUNTER_PHASE) ?? 0) / Math.max(1e-9, sum([...r.phases[k].values()]));
  return Math.max(0, kr.cpuPerRequest.modelmux * (1 - counter) - kr.cpuPerRequest.replay);
}

const added = (kr: KindResult, p: number): number => percentile(kr.latencyMs.modelmux ?? [], p) - percentile(kr.latencyMs.direct ?? [], p);

function figures(r: Results, k: Kind): RequestFigures {
  const kr = r.kinds[k];
  const calls = Object.entries(kr.calls);
  const per = (f: (op: string, c: { calls: number; capacityUnits: number }) => number): number =>
    sum(calls.map(([op, c]) => f(op, c))) / Math.max(1, kr.requests);
  return {
    cpuMs: handlerCpu(r, k),
    dynamoCalls: per((op, c) => (op.startsWith('DynamoDB.') ? c.calls : 0)),
    writeUnits: per((op, c) => (/Put|Update|Delete|Write/.test(op) ? c.capacityUnits : 0)),
    readUnits: per((op, c) => (/Get|Query|Scan/.test(op) ? c.capacityUnits : 0)),
    sqsCalls: per((op, c) => (op.startsWith('SQS.') ? c.calls : 0)),
    logBytes: kr.logBytes / Math.max(1, kr.requests),
    logLines: kr.logLines / Math.max(1, kr.requests),
    responseBytes: kr.responseBytes,
    decodedResponseBytes: kr.decodedResponseBytes,
    requestBytes: kr.requestBytes,
  };
}

/** The largest phases of a profile scaled to `total` ms, as "name x ms (y%)". */
function topPhases(phases: Map<string, number>, total: number, n = 3): string {
  const busy = sum([...phases.values()]);
  return [...phases]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, t]) => `${name} ${round((t / busy) * total)} ms (${pct(t / busy)})`)
    .join('; ');
}

/** The whole report. */
export function renderReport(r: Results): string {
  const chatFn = stackFunction(r.stack, 'Chat');
  const configured = { Chat: chatFn.memoryMb, Embeddings: stackFunction(r.stack, 'Embeddings').memoryMb };
  const chatImport = r.imports.find((i) => i.label === 'Chat');
  const ready = chatImport?.readyCpuMs ?? Number.NaN;
  const empty = r.imports.find((i) => i.label === 'empty');
  const rightSized = rightSizedMb(ready);
  const inputs: CostInputs = {
    mix: MIX.map((p) => ({ ...p, figures: figures(r, p.kind) })),
    architecture: chatFn.architecture,
    readyMs: ready,
    waf: (r.stack.resourceTypes['AWS::WAFv2::WebACL'] ?? 0) > 0,
    platformLogs: chatFn.platformLogs,
  };
  const at = (ms: number): CostInputs => ({ ...inputs, mix: withUpstream(inputs.mix, ms) });
  const asConfigured = `per-invocation Lambda as configured (chat ${configured.Chat} MB, embeddings ${configured.Embeddings} MB)`;
  const lambda = { 2: costRow(`${asConfigured}, 2-s upstream`, configured, at(2000)), 5: costRow(`${asConfigured}, 5-s upstream`, configured, at(5000)) };
  const managed = {
    2: managedRow(`Managed Instances, 2-s upstream, ${pct(MANAGED.utilisation)} used`, at(2000)),
    5: managedRow(`Managed Instances, 5-s upstream, ${pct(MANAGED.utilisation)} used`, at(5000)),
  };
  const breakEven = breakEvenPerMonth(lambda[2], managed[2]);

  // Goal rows: figure, goal, measured, met, what limits it.
  const chat = r.kinds.chat;
  const load = (t: string): LoadResult | undefined => r.load.find((l) => l.target.startsWith(t));
  const mm = load('modelmux');
  const dev = load(DEV_KEY_LOAD);
  const pk = load('Portkey');
  const wru = (mode: string): WruRow[] => r.wru.filter((w) => w.mode === mode);
  const worstWru = (mode: string): number => Math.max(...wru(mode).map((w) => w.wru));
  const cpu = { chat: handlerCpu(r, 'chat'), stream: handlerCpu(r, 'stream') };
  const chatCost = lambda[2];
  const topCost = (c: CostRow): string =>
    (
      [
        ['compute', c.lambdaUsd],
        ['DynamoDB', c.dynamoUsd],
        ['CloudFront', c.cloudfrontUsd],
        ['logs', c.logsUsd],
      ] as Array<[string, number]>
    )
      .sort((a, b) => b[1] - a[1])
      .map(([n, v]) => `${n} ${usd(v)}`)
      .join(', ');
  const leases = wru('leases');
  const perRequest = (row: WruRow | undefined, table: string): number =>
    sum(
      Object.entries(row?.byTable ?? {})
        .filter(([t]) => t.startsWith(table))
        .map(([, u]) => u),
    );
  const one = leases.find((w) => w.inFlight === 1);
  const ledgerPerReq = perRequest(one, 'ledger');
  const accountPerReq = perRequest(one, 'accounts');
  const keysPerReq = perRequest(one, 'keys');
  const accountCeiling = Math.min(1000 / Math.max(1e-9, ledgerPerReq), 1000 / Math.max(1e-9, accountPerReq + keysPerReq));
  const goals: string[][] = [
    [
      'added p50 at concurrency 1, buffered chat, account with credit (one invocation at a time)',
      '≤ 2 ms',
      `+${round(added(chat, 50))} ms (p99 +${round(added(chat, 99))})`,
      met(added(chat, 50) <= 2),
      added(chat, 50) <= 2
        ? ''
        : `the gateway's CPU per request (${round(chat.cpuPerRequest.modelmux)} ms in its process, ${round(cpu.chat)} on the handler path: see "CPU per request by phase"); AWS calls per request, the ledger write after the answer included: ${
            Object.entries(chat.calls)
              .map(([op, c]) => `${op} ×${round(c.calls / chat.requests)} (${round(c.totalMs / Math.max(1, c.calls))} ms)`)
              .join(', ') || 'none'
          }`,
    ],
    loadGoal(
      'req/s at concurrency 16, billing on, beside Portkey in the same run',
      mm,
      pk,
      (l) =>
        `gateway CPU per request: modelmux ${round(l.gatewayCpuMs)} ms, Portkey ${round(pk?.gatewayCpuMs ?? Number.NaN)} ms (it bills nothing and writes nothing); each modelmux request also waits for DynamoDB Local, whose calls took ${round(sum(Object.values(chat.calls).map((c) => c.totalMs)) / Math.max(1, sum(Object.values(chat.calls).map((c) => c.calls))))} ms here (its JVM shares the same 2 cores)`,
    ),
    loadGoal(
      'req/s at concurrency 16 with the dev key (free tokens and credit), beside Portkey in the same run',
      dev,
      pk,
      (l) =>
        `gateway CPU per request ${round(l.gatewayCpuMs)} ms, as on the credit-only key: a free-token lease, like a credit one, makes no store call before the answer`,
    ),
    ...(['holds', 'leases'] as const).map((mode) => [
      `WRU per request, dashboard account (email, 5 keys), 1 / 10 / 50 in flight, ${mode === 'holds' ? 'holds (CREDIT_LEASE_VALIDITY_MS=0)' : `leases (CREDIT_LEASE_VALIDITY_MS=${r.leaseEnv.CREDIT_LEASE_VALIDITY_MS})`}`,
      '≤ 1.5 each',
      wru(mode)
        .map((w) => round(w.wru))
        .join(' / '),
      met(worstWru(mode) <= 1.5),
      worstWru(mode) <= 1.5 ? '' : `by table at 50 in flight: ${units(wru(mode).at(-1))}`,
    ]),
    [
      'CPU per buffered chat / 12-chunk stream (handler path, c=1, Node 24)',
      '≤ 2 / ≤ 3 ms',
      `${round(cpu.chat)} / ${round(cpu.stream)} ms`,
      met(cpu.chat <= 2 && cpu.stream <= 3),
      cpu.chat <= 2 && cpu.stream <= 3
        ? ''
        : `buffered: ${topPhases(r.phases.chat, chat.cpuPerRequest.modelmux)}; stream: ${topPhases(r.phases.stream, r.kinds.stream.cpuPerRequest.modelmux)}`,
    ],
    [
      `AWS $ per 1M of the mix, default stack (chat ${configured.Chat} MB), per-invocation Lambda`,
      '≤ $8.00',
      `${usd(lambda[2].totalUsd)} (5-s upstream: ${usd(lambda[5].totalUsd)})`,
      met(chatCost.totalUsd <= 8),
      chatCost.totalUsd <= 8
        ? ''
        : `${topCost(chatCost)}: Lambda bills the upstream wait (${pct(sum(inputs.mix.map((p) => p.share * p.upstreamMs)) / sum(inputs.mix.map((p) => p.share * billedMs(p, configured[p.fn]))))} of the billed time); each further second of upstream time adds ${usd((lambda[5].lambdaUsd - lambda[2].lambdaUsd) / 3 / 0.9)} per 1M chat requests`,
    ],
    [
      `INIT at the configured ${configured.Chat} MB, Node 24, deployed bundle, ${round(chatImport?.secretReads ?? Number.NaN)} Secrets Manager reads counted`,
      `≤ ${INIT_GOAL_MS} ms`,
      `${round(initMs(ready, configured.Chat))} ms (estimate)`,
      met(initMs(ready, configured.Chat) <= INIT_GOAL_MS),
      initMs(ready, configured.Chat) <= INIT_GOAL_MS
        ? ''
        : `the bundle's load: ${round(ready - (empty?.readyCpuMs ?? 0))} ms of CPU over an empty module; the least memory that fits is ${rightSized} MB`,
    ],
    [
      'chat bundle (index.mjs, minified)',
      '≤ 300 KB',
      kb(chatFn.indexBytes),
      met(chatFn.indexBytes <= 300 * 1024),
      chatFn.indexBytes <= 300 * 1024
        ? ''
        : chatFn.packages
            .slice(0, 3)
            .map((p) => `${p.name} ${kb(p.bytes)}`)
            .join(', '),
    ],
    [
      `high-volume mode (Managed Instances, ${MANAGED.instance}), $ per 1M of the mix at ${pct(MANAGED.utilisation)} utilisation`,
      '≤ $3.00',
      `${usd(managed[2].totalUsd)} (5-s upstream: ${usd(managed[5].totalUsd)}); floor ${usd(managed[2].floorUsd)} a month; break-even ${round(breakEven / 1e6)}M requests a month (${round(breakEven / (MANAGED.hoursPerMonth * 3600))}/s on average)`,
      met(managed[2].totalUsd <= 3),
      managed[2].totalUsd <= 3 ? '' : `${topCost(managed[2])} (NAT ${usd(managed[2].natUsd)} of the compute); an environment is limited by ${managed[2].limit}`,
    ],
    [
      "one account's sustained req/s without an operator step (leases; DynamoDB math below)",
      '≥ 1,000',
      `~${round(accountCeiling)}/s`,
      met(accountCeiling >= 1000),
      accountCeiling >= 1000 ? '' : 'the busiest partition of the account (see "One account\'s ceiling")',
    ],
  ];

  const lean = leanGoalRows({
    cpuMs: { chat: cpu.chat, stream: cpu.stream, stream500: handlerCpu(r, 'stream500') },
    stream500Chunks: 500,
    modelmux: mm,
    portkey: pk,
    chatBundleBytes: chatFn.indexBytes,
    init256Ms: initMs(ready, 256),
    lambdaUsd: lambda[2].totalUsd,
    managedUsd: managed[2].totalUsd,
    limits: {
      chat: topPhases(r.phases.chat, chat.cpuPerRequest.modelmux),
      stream: topPhases(r.phases.stream, r.kinds.stream.cpuPerRequest.modelmux),
      stream500: `${topPhases(r.phases.stream500, r.kinds.stream500.cpuPerRequest.modelmux)} (frames: "Top frames by self time")`,
      bundle: chatFn.packages
        .slice(0, 3)
        .map((p) => `${p.name} ${kb(p.bytes)}`)
        .join(', '),
      init: `the bundle's load, ${round(ready - (empty?.readyCpuMs ?? 0))} ms of CPU over an empty module (× 1769 / 256)`,
      lambda: `${topCost(lambda[2])}: the upstream wait is billed at the configured ${configured.Chat} MB (at 256 MB: ${usd(costRow('', { Chat: 256, Embeddings: 256 }, at(2000)).totalUsd)})`,
      managed: `${topCost(managed[2])} (NAT ${usd(managed[2].natUsd)} of the compute); an environment is limited by ${managed[2].limit}`,
    },
  });

  const costRows: CostRow[] = [
    ...[128, 256, 512, 1024].map((m) => costRow(`${m} MB, 2-s upstream`, { Chat: m, Embeddings: m }, at(2000))),
    lambda[2],
    lambda[5],
    managed[2],
    managed[5],
  ];
  const wruRows = r.wru.map((w) => [
    w.mode,
    String(w.inFlight),
    String(w.requests),
    `**${round(w.wru)}**`,
    units(w),
    round(w.callsPerRequest),
    round(w.ttftP50),
  ]);
  const phaseNames = [...new Set((Object.keys(KINDS) as Kind[]).flatMap((k) => [...r.phases[k].keys()]))];
  const phaseRows = phaseNames.map((name) => [
    name,
    ...(Object.keys(KINDS) as Kind[]).map((k) =>
      round(((r.phases[k].get(name) ?? 0) / Math.max(1e-9, sum([...r.phases[k].values()]))) * r.kinds[k].cpuPerRequest.modelmux),
    ),
  ]);
  return [
    '# modelmux benchmarks',
    '',
    r.header,
    '',
    '## Goals',
    '',
    table(['figure', 'goal', 'measured', '', 'what limits it'], goals),
    '',
    '## Lean hot path (bar O)',
    '',
    'The gateway\'s own work, from the same run: CPU of the handler path (as in "CPU per request by phase"), c=16 load beside Portkey, the bundle, INIT and the AWS cost of the mix.',
    '',
    table(['figure', 'goal', 'measured', '', 'what limits it'], lean),
    '',
    '## Cost of 1M requests',
    '',
    `The mix: ${MIX.map((p) => `${pct(p.share)} ${p.label}`).join('; ')}; chat upstream 2 s (and 5 s). Billed duration = upstream time + the gateway's CPU (handler path) × ${ASSUMPTIONS.fullVcpuMb} / memory + ${ASSUMPTIONS.dynamoCallMs} ms per DynamoDB call, rounded up to 1 ms; ${chatFn.architecture}, as synthesized; INIT billed for ${pct(ASSUMPTIONS.coldStartShare)} of invocations. No free tier. CloudFront pay-as-you-go (flat-rate: ${usd(CLOUDFRONT_FLAT_RATE_PER_1M.usd)} per 1M, ${CLOUDFRONT_FLAT_RATE_PER_1M.plan}). Lambda's START/END/REPORT lines ${chatFn.platformLogs ? 'are' : 'are not'} logged (system log level of the template).`,
    '',
    table(
      ['compute', 'Lambda GB-s', 'compute $', 'DynamoDB', 'CloudFront', 'logs', 'other', 'total / 1M'],
      costRows.map((c) => [
        c.label,
        round(c.lambdaGbS),
        usd(c.lambdaUsd),
        usd(c.dynamoUsd),
        usd(c.cloudfrontUsd),
        usd(c.logsUsd),
        usd(c.otherUsd),
        `**${usd(c.totalUsd)}**`,
      ]),
    ),
    '',
    `**Managed Instances** (\`-c compute=managed-instances\`): ${MANAGED.minInstances} × ${MANAGED.instance} at least (3 per function, one per AZ; docs/managed-instances.md), ${MANAGED.concurrencyPerVcpu} requests per vCPU, ${pct(MANAGED.utilisation)} of an instance's capacity used; one environment serves ~${round(managed[2].perInstanceRps)} requests/s of the mix with 2-s answers (limited by ${managed[2].limit}) and ~${round(managed[5].perInstanceRps)}/s with 5-s answers. Floor ${usd(managed[2].floorUsd)} a month (${MANAGED.minInstances} environments × $${PRICES.ec2C7gLarge.usd} an hour + ${pct(PRICES.managedInstancesFee.usd)} fee, and ${MANAGED.natGateways} NAT gateways, one per AZ, at $${PRICES.natHour.usd}, × ${MANAGED.hoursPerMonth} h), whatever the traffic; per-invocation Lambda's compute costs ${usd(lambda[2].lambdaUsd)} per 1M, so Managed Instances cost less above ~${round(breakEven / 1e6)}M requests a month (${round(breakEven / (MANAGED.hoursPerMonth * 3600))}/s on average, steady). Below that, and for traffic that is bursty or goes to zero, per-invocation Lambda (the default).`,
    '',
    `**Right-sizing**: the least memory (64 MB steps, + one step of margin) whose INIT estimate fits ${INIT_GOAL_MS} ms is ${rightSized} MB (configured: ${configured.Chat} MB).`,
    '',
    table(
      [
        'part of the mix (measured, one at a time)',
        'CPU ms (handler path)',
        'DynamoDB calls',
        'write units',
        'read units',
        'log lines / bytes',
        'response on the wire / decoded',
      ],
      inputs.mix.map((p) => [
        p.label,
        round(p.figures.cpuMs),
        round(p.figures.dynamoCalls),
        round(p.figures.writeUnits),
        round(p.figures.readUnits),
        `${round(p.figures.logLines)} / ${round(p.figures.logBytes)} B`,
        `${kb(p.figures.responseBytes)} / ${kb(p.figures.decodedResponseBytes)}`,
      ]),
    ),
    '',
    'List prices (us-east-1):',
    '',
    table(
      ['unit', 'USD', 'source', 'since'],
      Object.values(PRICES).map((p) => [p.unit, `$${p.usd < 0.001 ? p.usd.toExponential(4) : p.usd}`, p.source, p.since]),
    ),
    '',
    '## Write units per request (dashboard account)',
    '',
    `A fresh account with an email and 5 keys per row; 12-chunk streams 10 ms apart, the given number in flight, keys used in turn, through one gateway process per mode; write units as DynamoDB Local reports them (\`ReturnConsumedCapacity: INDEXES\`, every table and index), the lease takes and returns included (each row waits out CREDIT_LEASE_IDLE_MS). On per-invocation Lambda one container has one request in flight, so a lease amortizes over that container's requests in a row; N in flight in one process is Managed Instances' case.`,
    '',
    table(['mode', 'in flight', 'requests', 'WRU / request', 'by table / index', 'DynamoDB calls / request', 'TTFT p50 ms'], wruRows),
    '',
    "## One account's ceiling",
    '',
    `DynamoDB serves at most 1,000 write units a second per partition (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html); split-for-heat can give a hot key range its own partitions by sort key, but never splits one item (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html). With leases, one request of an account writes (measured above, 1 in flight): ledger ${round(ledgerPerReq)} WRU (pk accountId, sk a time-ordered requestId: new items always land at the end of the key range, so a split does not spread them — count the ledger as one partition), the account item ${round(accountPerReq)} WRU (lease takes and returns, amortized), keys ${round(keysPerReq)} WRU. The busiest of these caps one account at ~${round(accountCeiling)} requests/s without fund shards. On per-invocation Lambda each busy container holds a lease of its own: at 1,000 requests/s of 2-s answers ~2,000 containers, each taking and returning a lease once per CREDIT_LEASE_VALIDITY_MS (${round(Number(r.leaseEnv.CREDIT_LEASE_VALIDITY_MS) / 1000)} s), ~${round((2000 * 2) / (Number(r.leaseEnv.CREDIT_LEASE_VALIDITY_MS) / 1000))} writes/s on the account item, each of ⌈item KB⌉ units: within 1,000 WCU/s while the item stays small, and only while the balance can give every container its slice (CREDIT_LEASE_SHARE_PERCENT); past that, requests hold per request and the holds' ceiling applies. With holds (${round(wru('holds')[0]?.wru ?? Number.NaN)} WRU at 1 in flight, on the account item every request) the account item caps it near ${round(1000 / Math.max(1e-9, perRequest(wru('holds')[0], 'accounts')))}/s, less as holds in flight grow the item.`,
    '',
    '## CPU per request by phase',
    '',
    `CPU ms per request, profile shares (\`node --cpu-prof\`, 250 µs, frames mapped through the bundles' source maps; a sample goes to the first frame of its stack a phase names, leaf first) × the gateway process's CPU per request. The goal figure subtracts the Function URL stand-in measured alone (the same answer replayed) and the bench's call counter.`,
    '',
    table(
      ['phase', ...(Object.keys(KINDS) as Kind[]).map((k) => KINDS[k].label)],
      [
        ...phaseRows,
        ['the stand-in alone (replay)', ...(Object.keys(KINDS) as Kind[]).map((k) => round(r.kinds[k].cpuPerRequest.replay))],
        ['**handler path** (goal figure)', ...(Object.keys(KINDS) as Kind[]).map((k) => `**${round(handlerCpu(r, k))}**`)],
      ],
    ),
    '',
    '## Latency (one invocation at a time) and load',
    '',
    table(
      ['request', 'n', 'direct p50 / p99 ms', 'modelmux p50 / p99 ms', 'added p50 / p99'],
      (Object.keys(KINDS) as Kind[])
        .filter((k) => KINDS[k].direct)
        .map((k) => {
          const kr = r.kinds[k];
          const p = (t: 'direct' | 'modelmux', q: number): string => round(percentile(kr.latencyMs[t] ?? [], q));
          return [
            KINDS[k].label + (KINDS[k].stream ? ' (TTFT)' : ''),
            String(kr.requests),
            `${p('direct', 50)} / ${p('direct', 99)}`,
            `${p('modelmux', 50)} / ${p('modelmux', 99)}`,
            `+${round(added(kr, 50))} / +${round(added(kr, 99))}`,
          ];
        }),
    ),
    '',
    `Buffered chat, 16 connections, closed loop, ${r.cfg.loadSeconds} s each (autocannon), all processes on the same 2 cores; Portkey (Node 24, \`--headless\`) forwards to the same simulator as its OpenAI provider at a custom host:`,
    '',
    table(
      ['target', 'req/s', 'p50 / p99 ms', 'CPU ms / request (gateway)', 'failures'],
      r.load.map((l) => [
        l.target,
        round(l.reqPerSec),
        `${round(percentile(l.latencies, 50))} / ${round(percentile(l.latencies, 99))}`,
        round(l.gatewayCpuMs),
        l.error ?? String(l.failures),
      ]),
    ),
    '',
    '## Bundles and cold start',
    '',
    table(
      ['function', 'configured', 'index.mjs', 'gzip -9', 'lazily imported files'],
      r.stack.functions.map((f) => [f.name, `${f.memoryMb} MB ${f.architecture}`, kb(f.indexBytes), kb(f.indexGzipBytes), kb(f.lazyBytes)]),
    ),
    '',
    `A fresh Node 24 imports the bundle with the function's env and reaches \`handler\`, Secrets Manager answered by a local stand-in; median of ${r.cfg.coldStartRuns} runs. INIT at a memory = the CPU ms from process start to ready × ${ASSUMPTIONS.fullVcpuMb} / memory (CPU, not wall: on a shared machine the wall time measures the wait for a core; the network time of the secret reads in AWS is not in it).`,
    '',
    table(
      ['module', 'import() ms', 'process start → handler, CPU ms', 'secret reads', ...[128, 256, 512, 1024].map((m) => `INIT at ${m} MB`)],
      r.imports.map((i) => [
        i.label,
        round(i.importMs),
        round(i.readyCpuMs),
        round(i.secretReads),
        ...[128, 256, 512, 1024].map((m) => round(initMs(i.readyCpuMs, m))),
      ]),
    ),
    '',
    `Largest packages in the chat index.mjs: ${chatFn.packages
      .slice(0, 8)
      .map((p) => `${p.name} ${kb(p.bytes)}`)
      .join(', ')}.`,
  ].join('\n');
}

/**
 * BENCHMARKS.md from one run: the goals first (each figure against its goal, and what limits the ones
 * not met), then the cost of the mix; the rest comes from report-details.ts.
 */
import { KINDS, type Kind } from './config';
import { ASSUMPTIONS, CLOUDFRONT_FLAT_RATE_PER_1M, INIT_GOAL_MS, MIX, PRICES, billedMs, costRow, rightSizedMb, type CostInputs, type CostRow } from './cost';
import type { ImportTiming } from './cold-start';
import type { KindResult } from './measure';
import {
  added, callsSection, coldStartSection, figures, handlerCpu, kb, latencySection, loadSection, met, ms, num, pct, per, phaseSection, signed, table, usd, type Results,
} from './report-details';
import { stackFunction } from './stack';
import { storedResponsesSection } from './stored-responses';

export type { Results } from './report-details';

interface Derived {
  chatFn: ReturnType<typeof stackFunction>;
  configured: Record<'Chat' | 'Embeddings', number>;
  inputs: CostInputs;
  rows: CostRow[];
  configuredRow: CostRow;
  chatImport: ImportTiming | undefined;
  /** Least memory per function with INIT within the goal (rightSizedMb), and its cost row. */
  rightSized: Record<'Chat' | 'Embeddings', number>;
  rightSizedRow: CostRow;
}

function derive(r: Results): Derived {
  const chatFn = stackFunction(r.stack, 'Chat');
  const configured = { Chat: chatFn.memoryMb, Embeddings: stackFunction(r.stack, 'Embeddings').memoryMb };
  const chatImport = r.imports.find((i) => i.label === 'Chat');
  const inputs: CostInputs = { mix: MIX.map((part) => ({ ...part, figures: figures(r, part.kind) })), architecture: chatFn.architecture, readyMs: chatImport?.readyCpuMs ?? Number.NaN, waf: (r.stack.resourceTypes['AWS::WAFv2::WebACL'] ?? 0) > 0 };
  const rows = [128, 256, 512, 1024].map((m) => costRow(`${m} MB`, { Chat: m, Embeddings: m }, inputs));
  const configuredRow = costRow(`configured (chat ${configured.Chat} MB, embeddings ${configured.Embeddings} MB)`, configured, inputs);
  const ready = (label: string): number => r.imports.find((i) => i.label === label)?.readyCpuMs ?? Number.NaN;
  const rightSized = { Chat: rightSizedMb(ready('Chat')), Embeddings: rightSizedMb(ready('Embeddings')) };
  const rightSizedRow = costRow(`right-sized (chat ${rightSized.Chat} MB, embeddings ${rightSized.Embeddings} MB)`, rightSized, inputs);
  return { chatFn, configured, inputs, rows, configuredRow, chatImport, rightSized, rightSizedRow };
}

/** The top `n` entries of a phase map, as "name x ms (y%)". */
function topPhases(phases: Map<string, number>, total: number, n: number): string {
  const busy = [...phases.values()].reduce((a, b) => a + b, 0);
  return [...phases].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, t]) => `${name} ${ms((t / busy) * total)} ms (${pct(t / busy)})`).join('; ');
}

function goals(r: Results, d: Derived): string {
  const chat = r.kinds.chat;
  const stream = r.kinds.stream;
  const chatKb = d.chatFn.indexBytes / 1024;
  const cost = d.configuredRow;
  const rows: string[][] = [
    ['gateway CPU per buffered chat request (handler path, billing on)', '≤ 1.0 ms', `${ms(handlerCpu(r, 'chat'))} ms`, met(handlerCpu(r, 'chat') <= 1)],
    ['gateway CPU per 12-chunk stream (handler path, billing on)', '≤ 1.5 ms', `${ms(handlerCpu(r, 'stream'))} ms (${stream.chunks} chunks)`, met(handlerCpu(r, 'stream') <= 1.5)],
    ['buffered chat c=1, added p50 / p99 (one invocation at a time)', '≤ 0.5 / 2 ms', `${signed(added(chat, 50))} / ${signed(added(chat, 99))} ms`, met(added(chat, 50) <= 0.5 && added(chat, 99) <= 2)],
    ['streaming, added time to first token p50 (one at a time)', '≤ 1 ms', `${signed(added(stream, 50))} ms`, met(added(stream, 50) <= 1)],
    ['chat bundle (index.mjs, minified)', '≤ 300 KB', kb(d.chatFn.indexBytes), met(chatKb <= 300)],
    ['import → handler ready (chat, source maps as deployed, median)', '≤ 60 ms', `${ms(d.chatImport?.importMs ?? Number.NaN)} ms (fastest ${ms(d.chatImport?.importMinMs ?? Number.NaN)})`, met((d.chatImport?.importMs ?? Infinity) <= 60)],
    [`cold start INIT at the configured ${d.configured.Chat} MB (estimate)`, '≤ 400 ms', `${ms(cost.initMs)} ms`, met(cost.initMs <= 400)],
    [`AWS cost per 1M requests of the mix at the configured memory`, '≤ $5', usd(cost.totalUsd), met(cost.totalUsd <= 5)],
  ];
  const limits: string[] = [];
  const phaseLimit = (k: Kind, goal: number): void => {
    const kr = r.kinds[k];
    if (handlerCpu(r, k) > goal) limits.push(`- **CPU, ${KINDS[k].label}**: ${ms(handlerCpu(r, k))} ms; the largest phases (profile shares × ${ms(kr.cpuPerRequest.modelmux)} ms measured in the gateway process): ${topPhases(r.phases[k].phases, kr.cpuPerRequest.modelmux, 4)}.`);
  };
  phaseLimit('chat', 1);
  phaseLimit('stream', 1.5);
  const onPath = (k: KindResult): string =>
    Object.entries(k.calls).map(([op, c]) => `${op} ×${num(per(k, c.calls))} (${ms(c.totalMs / Math.max(1, c.calls))} ms each here)`).join(', ') || 'none';
  const path = (k: KindResult): string =>
    `the gateway's CPU (${ms(k.cpuPerRequest.modelmux)} ms per request in its process here) and the AWS calls made before the answer (per request: ${onPath(k)}; a settle after the last byte is off the path)`;
  if (added(chat, 50) > 0.5 || added(chat, 99) > 2) limits.push(`- **Buffered latency**: ${path(chat)}.`);
  if (added(stream, 50) > 1) limits.push(`- **Streaming TTFT**: ${path(stream)}.`);
  if (chatKb > 300) limits.push(`- **Bundle**: ${d.chatFn.packages.slice(0, 4).map((p) => `${p.name} ${kb(p.bytes)}`).join(', ')}.`);
  if ((d.chatImport?.importMs ?? Infinity) > 60) limits.push(`- **Import**: ${topPhases(r.loadProfile, d.chatImport?.importMs ?? Number.NaN, 4)} (one profiled load, shares applied to the median).`);
  if (cost.totalUsd > 5) {
    const parts: Array<[string, number]> = [['Lambda', cost.lambdaUsd], ['DynamoDB', cost.dynamoUsd], ['CloudFront', cost.cloudfrontUsd], ['logs', cost.logsUsd], ['other', cost.otherUsd]];
    limits.push(`- **Cost**: ${parts.sort((a, b) => b[1] - a[1]).map(([n, v]) => `${n} ${usd(v)}`).join(', ')} (see the cost table for the other memory sizes). ${costFloor(r, d)}`);
  }
  return [table(['figure', 'goal', 'measured', ''], rows), '', limits.length ? `What limits the goals not met:\n\n${limits.join('\n')}` : 'Every goal is met.'].join('\n');
}

/**
 * The floor of the cost goal under its own rules: a Node handler that does nothing still needs the
 * memory whose INIT estimate (this run's empty module, process start → handler, CPU) fits 400 ms, and
 * at that memory the mix's billed upstream wait alone, plus CloudFront's per-request price, is what
 * no gateway code can remove.
 */
function costFloor(r: Results, d: Derived): string {
  const empty = r.imports.find((i) => i.label === 'empty')?.readyCpuMs ?? Number.NaN;
  const floorMb = Math.max(128, Math.ceil((ASSUMPTIONS.fullVcpuMb * empty) / INIT_GOAL_MS));
  const idle = { ...d.inputs, readyMs: empty, mix: d.inputs.mix.map((p) => ({ ...p, figures: { ...p.figures, cpuMs: 0, dynamoCalls: 0, writeUnits: 0, readUnits: 0, sqsCalls: 0, logBytes: 0, logLines: 0, responseBytes: 0 } })) };
  const floor = costRow('floor', { Chat: floorMb, Embeddings: floorMb }, idle);
  return (
    `The floor under the goal's own rules: an empty Node handler takes ${ms(empty)} ms of CPU from process start to handler here, so INIT ≤ ${INIT_GOAL_MS} ms needs ≥ ${floorMb} MB; ` +
    `at ${floorMb} MB the mix's upstream wait and Lambda requests alone bill ${usd(floor.lambdaUsd)}, and CloudFront's requests ${usd(floor.cloudfrontUsd)}: ${usd(floor.totalUsd)} with Lambda's own log lines, before any gateway work, DynamoDB write or byte.`
  );
}

/**
 * Why each function has the memory it has (the CDK defaults CHAT_DEFAULT_MEMORY_MB and
 * EMBEDDINGS_DEFAULT_MEMORY_MB, context `chatMemoryMb` / `embeddingsMemoryMb`).
 */
function rightSizeText(d: Derived): string {
  // Within one 64 MB step of this run's sizes: the run-to-run spread of the estimate, not a reason to move.
  const same = Math.abs(d.rightSized.Chat - d.configured.Chat) <= 64 && Math.abs(d.rightSized.Embeddings - d.configured.Embeddings) <= 64 && d.configuredRow.initMs <= INIT_GOAL_MS;
  return [
    `**Right-sizing.** A request's billed duration is almost all upstream wait, so cost falls with memory all the way down to`,
    `128 MB; what stops it is the cold start. Each function gets the least memory (64 MB steps) whose INIT estimate (CPU ms from`,
    `process start to handler ready here × ${ASSUMPTIONS.fullVcpuMb} / memory) is within ${INIT_GOAL_MS} ms, plus one step of margin (the median moves`,
    `~15% between runs here, and a Graviton core is not this one): chat ${d.rightSized.Chat} MB, embeddings ${d.rightSized.Embeddings} MB, ${usd(d.rightSizedRow.totalUsd)} per 1M of the mix.`,
    same
      ? `The stack's defaults (CHAT_DEFAULT_MEMORY_MB, EMBEDDINGS_DEFAULT_MEMORY_MB: chat ${d.configured.Chat} MB, embeddings ${d.configured.Embeddings} MB) are these sizes within one step (the spread between runs); INIT estimate at the configured memory ${ms(d.configuredRow.initMs)} ms.`
      : `The stack is configured with chat ${d.configured.Chat} MB, embeddings ${d.configured.Embeddings} MB (INIT estimate ${ms(d.configuredRow.initMs)} ms): this run suggests other sizes; set CHAT_DEFAULT_MEMORY_MB / EMBEDDINGS_DEFAULT_MEMORY_MB (lib/constructs) from a run on a quiet machine, or the context values \`chatMemoryMb\` / \`embeddingsMemoryMb\` per deployment.`,
  ].join('\n');
}

function costSection(r: Results, d: Derived): string {
  const rowCells = (c: CostRow): string[] => [c.label, num(c.lambdaGbS, 0), usd(c.lambdaUsd), usd(c.dynamoUsd), usd(c.cloudfrontUsd), usd(c.logsUsd), usd(c.otherUsd), `**${usd(c.totalUsd)}**`, `${usd(c.totalUsd - c.cloudfrontUsd + CLOUDFRONT_FLAT_RATE_PER_1M.usd)}`, ms(c.initMs)];
  const mix = d.inputs.mix;
  const perKind = mix.map((p) => {
    const f = p.figures;
    return [`${pct(p.share)} ${p.label}`, ms(f.cpuMs), `${billedMs(p, d.configured[p.fn])} ms`, num(f.dynamoCalls), num(f.writeUnits), num(f.readUnits), num(f.sqsCalls), `${num(f.logLines)} / ${num(f.logBytes, 0)} B`, `${kb(f.responseBytes)} / ${kb(f.decodedResponseBytes)}`];
  });
  const prices = Object.values(PRICES).map((p) => [p.unit, `$${p.usd < 0.001 ? p.usd.toExponential(4) : p.usd}`, p.source, p.since]);
  return [
    `The mix: ${mix.map((p) => `${pct(p.share)} ${p.label}`).join('; ')}. Each request's figures are measured (below); the billed duration is`,
    `the upstream time + the gateway's CPU (handler path) × ${ASSUMPTIONS.fullVcpuMb} / memory (Lambda gives one full vCPU at ${ASSUMPTIONS.fullVcpuMb} MB) + ${ASSUMPTIONS.dynamoCallMs} ms per DynamoDB call,`,
    `rounded up to 1 ms. ${d.chatFn.architecture}, as synthesized. INIT is billed (since 2025-08-01) for ${pct(ASSUMPTIONS.coldStartShare)} of the invocations at the estimate in the last column.`,
    `No free tier is counted. CloudFront (pay-as-you-go) is requests + bytes out (as sent on the wire: the bench asks for gzip as the openai SDK does, and the gateway sends gzip) + request bodies to the origin; "flat-rate" puts ${usd(CLOUDFRONT_FLAT_RATE_PER_1M.usd)} in its place (${CLOUDFRONT_FLAT_RATE_PER_1M.plan}, at full use). "other": ${d.inputs.waf ? 'WAF requests, ' : ''}SQS calls counted.`,
    '',
    table(['memory (both functions)', 'Lambda GB-s', 'Lambda', 'DynamoDB', 'CloudFront', 'logs', 'other', 'total / 1M', 'total, CloudFront flat-rate', 'INIT estimate, ms'], [...d.rows, d.rightSizedRow, d.configuredRow].map(rowCells)),
    '',
    rightSizeText(d),
    '',
    `Per request, as measured (billed duration at the configured memory):`,
    '',
    table(['part of the mix', 'CPU ms (handler path)', 'billed duration', 'DynamoDB calls', 'write units', 'read units', 'SQS calls', 'log lines / bytes', 'response (headers + body): on the wire / decoded'], perKind),
    '',
    `A ledger item takes ${num(r.ledgerBytesPerItem, 0)} bytes: 1M requests add ${num(r.ledgerBytesPerItem / 1e3, 2)} GB to the ledger, ${usd((r.ledgerBytesPerItem / 1e3) * PRICES.dynamoStorage.usd)} a month for as long as they are kept (not in the totals).`,
    `Lambda's own log lines add ${ASSUMPTIONS.platformLogBytes} bytes in ${ASSUMPTIONS.platformLogEvents} events per invocation; CloudWatch counts ${ASSUMPTIONS.logEventOverheadBytes} bytes more per event.`,
    '',
    'List prices (us-east-1):',
    '',
    table(['unit', 'USD', 'source', 'since'], prices),
  ].join('\n');
}

/** The whole report. */
export function renderReport(r: Results): string {
  const d = derive(r);
  return [
    '# modelmux benchmarks',
    '',
    `_Generated by \`npm run bench\`${r.cfg.quick ? ' --quick' : ''} on ${r.startedAt.toISOString().slice(0, 16)}Z in ${Math.round(r.seconds)} s; ${r.machine}. While the gateway was measured, other processes kept ${num(r.otherCores)} of the cores busy${r.otherCores > 0.2 ? ' (a busy machine: the figures are inflated, rerun on a quiet one)' : ''}. Rerun to refresh._`,
    '',
    '## Goals (issue 14)',
    '',
    goals(r, d),
    '',
    '## Cost of 1M requests',
    '',
    costSection(r, d),
    '',
    '## CPU per request by phase',
    '',
    phaseSection(r),
    '',
    '## Latency and streams',
    '',
    latencySection(r),
    '',
    '## Load on one gateway process',
    '',
    loadSection(r),
    '',
    '## AWS calls, capacity units and logs per request',
    '',
    callsSection(r),
    '',
    ...(r.storedResponses === undefined ? [] : ['## Stored responses (Responses API)', '', storedResponsesSection(r.storedResponses), '']),
    '## Bundles and cold start',
    '',
    coldStartSection(r, d.chatFn, d.chatImport),
    '',
    '## Method',
    '',
    '- The gateway is the deployed code: the `index.mjs` bundles `cdk synth` builds, with the template\'s env (source maps on), memory and',
    '  timeout, behind the local Function URL stand-in (local/function-url), in its own process. Billing is on: a real account and key,',
    '  DynamoDB Local (in memory, its own process), every ledger write. The upstream simulator is a third process; the bench the fourth.',
    '- CPU per process from /proc (pidusage). Every figure shares the machine\'s 2 cores with the others: on Lambda, DynamoDB and the',
    '  upstream run elsewhere. This machine\'s core stands in for one Lambda vCPU (arm64 Graviton); the ratio is not measured.',
    `- Rounds: ${r.cfg.rounds}, the target order rotating each round. Counts per round: ${(Object.keys(KINDS) as Kind[]).map((k) => `${k} ${Math.max(2, Math.round(KINDS[k].perRound * r.cfg.perRoundScale))}`).join(', ')}.`,
  ].join('\n');
}

/**
 * The lean hot path's goals (bar O) in BENCHMARKS.md: the gateway's own CPU per request and per streamed
 * chunk beside Portkey's, load beside Portkey, the bundle, INIT at 256 MB and the AWS cost of the mix,
 * each against its goal from the same run, with what limits it when not met.
 */
import type { LoadResult } from './measure';
import { kb, met, round, usd } from './report-cells';

/** What one run measured for bar O. CPU in ms of the handler path per request; bytes; USD per 1M requests of the mix. */
export interface LeanFigures {
  cpuMs: { chat: number; stream: number; stream500: number };
  /** Chunks of the unpaced stream (its CPU per chunk = cpuMs.stream500 / chunks). */
  stream500Chunks: number;
  modelmux: LoadResult | undefined;
  portkey: LoadResult | undefined;
  chatBundleBytes: number;
  /** The chat bundle's INIT estimate at 256 MB, ms. */
  init256Ms: number;
  lambdaUsd: number;
  managedUsd: number;
  /** What limits each figure when it is not met (profile phases, packages, cost parts). */
  limits: { chat: string; stream: string; stream500: string; bundle: string; init: string; lambda: string; managed: string };
}

/** Goals: ms, µs per chunk, ratios to Portkey, KB, ms, USD. */
export const LEAN_GOALS = {
  handlerChatMs: 1.5,
  chunkUs: 15,
  stream500Ms: 10,
  stream12Ms: 2,
  cpuVsPortkey: 1,
  reqPerSecVsPortkey: 1.5,
  chatBundleKb: 250,
  init256Ms: 800,
  lambdaUsd: 10,
  managedUsd: 3,
} as const;

/** The rows of bar O: figure, goal, measured, met, what limits it. */
export function leanGoalRows(f: LeanFigures): string[][] {
  const g = LEAN_GOALS;
  const cpuRatio = (f.modelmux?.gatewayCpuMs ?? Number.NaN) / (f.portkey?.gatewayCpuMs ?? Number.NaN);
  const rpsRatio = (f.modelmux?.reqPerSec ?? Number.NaN) / (f.portkey?.reqPerSec ?? Number.NaN);
  const chunkUs = (f.cpuMs.stream500 * 1000) / f.stream500Chunks;
  const row = (figure: string, goal: string, measured: string, ok: boolean, limit: string): string[] => [figure, goal, measured, met(ok), ok ? '' : limit];
  return [
    row(
      'CPU per request at c=16, billing on, beside Portkey in the same run; the handler path at c=1 (buffered chat)',
      `≤ ${g.cpuVsPortkey}× Portkey; ≤ ${g.handlerChatMs} ms`,
      `${round(f.modelmux?.gatewayCpuMs ?? Number.NaN)} vs ${round(f.portkey?.gatewayCpuMs ?? Number.NaN)} ms (${round(cpuRatio)}×); ${round(f.cpuMs.chat)} ms`,
      cpuRatio <= g.cpuVsPortkey && f.cpuMs.chat <= g.handlerChatMs,
      f.limits.chat,
    ),
    row(
      `CPU per streamed chunk (${f.stream500Chunks}-chunk stream, handler path)`,
      `≤ ${g.chunkUs} µs (the stream ≤ ${g.stream500Ms} ms)`,
      `${round(chunkUs)} µs (${round(f.cpuMs.stream500)} ms)`,
      chunkUs <= g.chunkUs,
      f.limits.stream500,
    ),
    row('CPU per 12-chunk stream (handler path)', `≤ ${g.stream12Ms} ms`, `${round(f.cpuMs.stream)} ms`, f.cpuMs.stream <= g.stream12Ms, f.limits.stream),
    row(
      'req/s at c=16 with billing on, credit-only account, beside Portkey',
      `≥ ${g.reqPerSecVsPortkey}×`,
      `${round(f.modelmux?.reqPerSec ?? Number.NaN)} vs ${round(f.portkey?.reqPerSec ?? Number.NaN)} (${round(rpsRatio)}×)`,
      rpsRatio >= g.reqPerSecVsPortkey,
      `CPU per request (the first row), and each request's DynamoDB call on the same 2 cores`,
    ),
    row('chat bundle', `≤ ${g.chatBundleKb} KB`, kb(f.chatBundleBytes), f.chatBundleBytes <= g.chatBundleKb * 1024, f.limits.bundle),
    row(
      'INIT at 256 MB, Node 24, deployed bundle, secret reads counted',
      `≤ ${g.init256Ms} ms`,
      `${round(f.init256Ms)} ms (estimate)`,
      f.init256Ms <= g.init256Ms,
      f.limits.init,
    ),
    row(
      'AWS $ per 1M of the mix, default per-invocation stack, 2-s upstream',
      `≤ ${usd(g.lambdaUsd)}`,
      usd(f.lambdaUsd),
      f.lambdaUsd <= g.lambdaUsd,
      f.limits.lambda,
    ),
    row(
      'Managed Instances, $ per 1M at 50% use (NAT bytes of the upstream stream counted)',
      `≤ ${usd(g.managedUsd)}`,
      usd(f.managedUsd),
      f.managedUsd <= g.managedUsd,
      f.limits.managed,
    ),
  ];
}

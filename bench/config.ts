/**
 * How much the bench sends. Every loop has a request count and a time cap; the defaults keep a full
 * run within ~3 minutes on a 2-core machine (DynamoDB Local's ~300 ledger transactions/s bound the
 * gateway runs). `BENCH_SCALE` (e.g. 0.2 for a smoke run, 2 for more samples) scales every count.
 */

/** One buffered load scenario, run against both targets in every round. */
export interface BufferedScenario {
  id: string;
  /** Row label, e.g. `chat c=16`. */
  label: string;
  request: 'chat' | 'embeddings';
  concurrency: number;
  /** Requests per target per round. */
  requests: number;
  /**
   * Each request starts only once the gateway has no DynamoDB call in flight, i.e. after the previous
   * request's ledger write, as on Lambda, where a container takes its next invocation only when the
   * last one has returned. Latency only: the waits make req/s meaningless.
   */
  oneInvocationAtATime?: boolean;
}

/** One streaming scenario (chunk delay set on the simulator). */
export interface StreamScenario {
  id: string;
  label: string;
  concurrency: number;
  /** Streams per target per round. */
  streams: number;
  /** As for buffered scenarios: each stream starts once the previous one's ledger write is done. */
  oneInvocationAtATime?: boolean;
}

const scale = (() => {
  const raw = Number(process.env.BENCH_SCALE ?? 1);
  return Number.isFinite(raw) && raw > 0 ? raw : 1;
})();
const n = (count: number, min: number): number => Math.max(min, Math.round(count * scale));

/** Everything that shapes a run. */
export const BENCH_CONFIG = {
  scale,
  /** Reply length of the simulator, words (= completion tokens): a short chat turn. */
  replyWords: 12,
  /** Measured rounds; targets alternate inside each round, and which goes first alternates by round. */
  rounds: 5,
  /** Longest any one load run may take, ms. */
  runTimeCapMs: 20_000,
  buffered: [
    { id: 'chat-c1', label: 'chat c=1', request: 'chat', concurrency: 1, requests: n(300, 30) },
    { id: 'chat-c1-lambda', label: 'chat c=1, one invocation at a time', request: 'chat', concurrency: 1, requests: n(300, 30), oneInvocationAtATime: true },
    { id: 'chat-c16', label: 'chat c=16', request: 'chat', concurrency: 16, requests: n(1_000, 100) },
    { id: 'chat-c64', label: 'chat c=64', request: 'chat', concurrency: 64, requests: n(1_000, 128) },
    { id: 'emb-c1', label: 'embeddings c=1', request: 'embeddings', concurrency: 1, requests: n(300, 30) },
    { id: 'emb-c16', label: 'embeddings c=16', request: 'embeddings', concurrency: 16, requests: n(1_000, 100) },
  ] satisfies BufferedScenario[],
  /** Warm-up before the rounds (not measured): JIT of gateway and DynamoDB Local's JVM, connection pools. */
  warmup: { chatRequests: n(2_000, 200), embeddingsRequests: n(500, 50), concurrency: 16, streams: 5 },
  /** Gap between the simulator's stream events during the streaming part, ms. */
  chunkDelayMs: 20,
  streamRounds: 4,
  streaming: [
    { id: 'stream-c1', label: 'stream c=1', concurrency: 1, streams: n(15, 3) },
    { id: 'stream-c1-lambda', label: 'stream c=1, one invocation at a time', concurrency: 1, streams: n(15, 3), oneInvocationAtATime: true },
    { id: 'stream-c16', label: 'stream c=16', concurrency: 16, streams: n(64, 16) },
  ] satisfies StreamScenario[],
  /** Sequential requests per kind for the warm-path DynamoDB call count. */
  storeCallRequests: 20,
  /** The profiled run: buffered chat at this concurrency. */
  profile: { concurrency: 16, requests: n(1_500, 150), samplingIntervalUs: 200 },
  /** Fresh-process loads per bundle for the cold-start medians (≥ 7). */
  coldStartRuns: 11,
};

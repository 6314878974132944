/**
 * What `npm run bench` sends, and how much of it. `--quick` sends about a fifth (for iterating on
 * the hot path); only a full run rewrites BENCHMARKS.md.
 */

/** The request kinds measured one invocation at a time (as a Lambda container serves them). */
export type Kind = 'chat' | 'stream' | 'embeddings' | 'chat500' | 'stream500';

/** One request kind: its body, and how it is measured. */
export interface KindSpec {
  label: string;
  /** Path under the OpenAI base URL. */
  path: 'chat/completions' | 'embeddings';
  body: Record<string, unknown>;
  stream: boolean;
  /** Gap between the simulator's stream events, ms (0 = as fast as it can). */
  gapMs: number;
  /** Also sent straight to the simulator, to show what modelmux adds. */
  direct: boolean;
  /** Requests per target per round (full run). */
  perRound: number;
}

/** Reply length of the simulator, words (= completion tokens); requests cut it with `max_tokens`. */
export const SIMULATOR_REPLY_WORDS = 750;

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the benchmark, briefly.' }] };

/**
 * The simulator cuts its reply into stream events of alternately one and two words, so 15 words make
 * 10 content events: with the role chunk and the finish chunk, a 12-chunk stream. 750 words make 500
 * content events, OpenAI's usual one token per chunk for a 500-token answer.
 */
export const KINDS: Record<Kind, KindSpec> = {
  chat: { label: 'buffered chat, 15 tokens', path: 'chat/completions', body: { ...CHAT, max_tokens: 15 }, stream: false, gapMs: 0, direct: true, perRound: 100 },
  stream: { label: '12-chunk stream, 20 ms apart', path: 'chat/completions', body: { ...CHAT, max_tokens: 15, stream: true }, stream: true, gapMs: 20, direct: true, perRound: 10 },
  embeddings: {
    label: 'embeddings, 1 input',
    path: 'embeddings',
    // What the openai SDK sends for `embeddings.create` by default: base64-encoded float32.
    body: { model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog', encoding_format: 'base64' },
    stream: false,
    gapMs: 0,
    direct: true,
    perRound: 100,
  },
  chat500: { label: 'buffered chat, 500 tokens', path: 'chat/completions', body: { ...CHAT, max_tokens: 500 }, stream: false, gapMs: 0, direct: false, perRound: 12 },
  stream500: { label: '500-chunk stream, unpaced', path: 'chat/completions', body: { ...CHAT, max_tokens: 750, stream: true }, stream: true, gapMs: 0, direct: false, perRound: 4 },
};

/** How much of everything a run does. */
export interface BenchConfig {
  quick: boolean;
  /** Rounds of the one-invocation-at-a-time comparison; targets alternate inside each. */
  rounds: number;
  /** Multiplies every KindSpec.perRound. */
  perRoundScale: number;
  /** Autocannon runs (buffered load against one gateway process), seconds each. */
  loadSeconds: number;
  loadConcurrencies: number[];
  /** Streams per target at c=16 (event batching under load). */
  concurrentStreams: number;
  /** Requests per kind in the profiled run (a separate gateway process under `node --cpu-prof`). */
  profileRequests: Record<Kind, number>;
  /** Fresh processes per bundle for the import times. */
  coldStartRuns: number;
}

/** The full run (~3–4 min on 2 cores) or `--quick` (~1 min). */
export function benchConfig(quick: boolean): BenchConfig {
  return quick
    ? { quick, rounds: 2, perRoundScale: 0.3, loadSeconds: 2, loadConcurrencies: [16], concurrentStreams: 16, profileRequests: { chat: 150, stream: 12, embeddings: 100, chat500: 10, stream500: 4 }, coldStartRuns: 3 }
    : { quick, rounds: 5, perRoundScale: 1, loadSeconds: 4, loadConcurrencies: [16, 64], concurrentStreams: 64, profileRequests: { chat: 400, stream: 40, embeddings: 300, chat500: 40, stream500: 12 }, coldStartRuns: 11 };
}

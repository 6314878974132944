import type { CatalogueTarget } from '../catalogue/catalogue';
import type { LatencyProfile } from '../catalogue/schema';
import type { ChatCompletionRequest } from '../openai/chat-request';
import { config } from '../config/env';
import { SETTLE_RESERVE_MS } from '../config/stack-contract';
import type { AttemptTimeouts } from './upstream-call';

/**
 * THE place that sets a request's time limits: its deadline (from the host's remaining time), how
 * long its hold lives, when its status is committed, and each attempt's limits (from the latency
 * table, the settings and the request's prompt) clipped to the deadline, with the hedge delay.
 * Everyone else reads what these functions return; only the timers themselves live elsewhere
 * (upstream-call.ts arms an attempt's, app/ the commit wait).
 *
 * Time limits of an upstream attempt (ms). Chat attempts always stream upstream (a buffered answer is
 * assembled from the stream, fallback-router.ts), so the limits that matter are the time to the first
 * token and the silence between tokens; they come from ONE table, {@link LATENCY_TABLE}, by how the
 * target starts answering. Every limit is also clipped to the request's deadline.
 *
 * Precedence, lowest first: the table (chat) or {@link BUILT_IN_TIMEOUTS}.buffered (embeddings) →
 * the operator's `UPSTREAM_TIMEOUTS_MS` (every model) → the provider's override (registry.ts) → the
 * catalogue target's own `timeouts` → the prompt-size allowance ({@link promptAllowanceMs}) on top of
 * the first-token limit.
 */
export interface Timeouts {
  /** TCP + TLS connect. */
  connectMs: number;
  /**
   * Request sent → response headers. Chat: never longer than `firstTokenMs`, which counts from the
   * same moment (a hang before the headers is a missing first token). Embeddings: the whole answer.
   */
  headersMs: number;
  /**
   * Chat: request sent → first output (content, reasoning, refusal, a tool call, or a finish). Bytes
   * that carry none — SSE comments, a role-only preamble, Anthropic pings — do not stop this clock.
   */
  firstTokenMs: number;
  /**
   * Longest silence between two chunks of a body once output flows; before the first token the
   * silence may last up to `firstTokenMs` (a reasoning model thinks in silence).
   */
  idleMs: number;
}

/** A chat attempt's limits, with the first-token time by which a hedged model starts its next target (ms). */
export interface ChatTimeouts extends Timeouts {
  /** The profile's usual 95th-percentile time to first token, plus the prompt allowance (ms). */
  p95FirstTokenMs: number;
}

export type TimeoutOverrides = Partial<Record<'stream' | 'buffered', Partial<Timeouts>>>;

/** One row of {@link LATENCY_TABLE} (ms). */
interface LatencyRow {
  firstTokenMs: number;
  idleMs: number;
  p95FirstTokenMs: number;
}

/**
 * THE table of default chat limits, by how a target starts answering (catalogue `latency`, derived
 * from `capabilities.reasoning` when not set; {@link latencyProfile}). Figures are ms.
 *
 * | profile | targets | typical first token (median) | p95 (hedge) | first-token limit | idle limit |
 * |---|---|---|---|---|---|
 * | `standard` | no reasoning, or reasoning the request did not turn on: GPT-4o(-mini), Claude without `reasoning_effort`, Gemini 2.5 Flash-Lite, DeepSeek non-thinking, Llama hosts | 0.4–1.6 s (Gemini Flash-Lite 0.42, GPT-4o 0.76, Claude Sonnet 4.6 1.3, Haiku 4.5 1.4, Opus 4.6 1.6) [a]; 1.7–3.1 s through OpenRouter for Claude Sonnet 4.6 and DeepSeek V3.2/V4-Flash [b] | 3 s | 8 s | 15 s |
 * | `thinking` | reasoning streamed as it is produced: DeepSeek thinking mode, MiniMax M2.x, Gemini 2.5 Flash/Pro (thinking on by default, thoughts included), Claude with `reasoning_effort` | Gemini 2.5 Pro 6.1 s [a]; reasoning starts within seconds, but summarised thinking (Claude 4, Gemini) arrives in bursts | 15 s | 60 s | 30 s |
 * | `hidden-thinking` | reasoning billed but never streamed: o3-mini | seconds to minutes: nothing is sent until thinking ends (o-series: 2–15 s typical, minutes at high effort [c]) | 60 s | 180 s | 30 s |
 *
 * Why these numbers:
 * - First-token limit, `standard`: ~5× the slowest usual median, so a healthy model is not cut, and low
 *   enough that a hanging primary plus an equivalent's answer fits in 15 s; it sits under
 *   STREAM_COMMIT_AFTER_MS (10 s), so a stream that fails over usually still gets its real status
 *   and routing headers. DeepSeek under load holds requests with keep-alive comments before inference
 *   (providers.md §4.5): comments are not a first token, so such a wait falls back after 8 s rather
 *   than the 90 s this gateway used to give it — an equivalent's answer at 9 s beats DeepSeek's at 60.
 * - Idle limit: tokens of a healthy stream come every few tens of ms; 15 s covers Gemini's atomic
 *   function-call events (a whole call is sent in one event once generated) and thinking bursts get 30 s.
 *   A long answer is never cut for its length: no limit caps a stream that keeps producing tokens.
 * - p95: the time after which a hedged model (catalogue `hedge`) starts its next target in parallel;
 *   2–3× the medians above. A model that knows better sets `hedge.afterMs`.
 * - Prompt size: prefill takes longer for long prompts, so {@link promptAllowanceMs} is added to the
 *   first-token limit and the p95.
 *
 * Sources (read 2026-11): [a] modelstats.ai, "Claude vs GPT-4 vs Gemini — A Real Latency Comparison",
 * TTFT every 5 min, April 2026; [b] jonathanwrede.de, "TTFT varies 13x across LLM providers", hourly
 * probes through OpenRouter, 2026; [c] aiyd-com.pages.dev "AI Model Speed Benchmark", 2026-03, and
 * OpenAI's reasoning guide (reasoning happens before the first visible token).
 */
export const LATENCY_TABLE: Readonly<Record<LatencyProfile, LatencyRow>> = {
  standard: { firstTokenMs: 8_000, idleMs: 15_000, p95FirstTokenMs: 3_000 },
  thinking: { firstTokenMs: 60_000, idleMs: 30_000, p95FirstTokenMs: 15_000 },
  'hidden-thinking': { firstTokenMs: 180_000, idleMs: 30_000, p95FirstTokenMs: 60_000 },
};

/** TCP + TLS connect limit for every attempt (ms): a handshake on a healthy path takes tens of ms. */
const CONNECT_MS = 3_000;

/**
 * Prefill speed assumed for the prompt-size allowance: 10,000 tokens/s, i.e. 1 ms per 10 prompt
 * tokens (a 128K-token prompt adds 12.8 s). Large hosted models prefill at roughly 5–20K tokens/s.
 */
const PROMPT_TOKENS_PER_MS = 10;

/**
 * Built-in limits by mode. `stream` is the `standard` row (the table above overrides it per profile);
 * `buffered` is used by embeddings only — chat never calls an upstream buffered.
 */
export const BUILT_IN_TIMEOUTS: Record<'stream' | 'buffered', Timeouts> = {
  stream: {
    connectMs: CONNECT_MS,
    headersMs: LATENCY_TABLE.standard.firstTokenMs,
    firstTokenMs: LATENCY_TABLE.standard.firstTokenMs,
    idleMs: LATENCY_TABLE.standard.idleMs,
  },
  buffered: { connectMs: CONNECT_MS, headersMs: 30_000, firstTokenMs: 30_000, idleMs: 10_000 },
};

/**
 * The built-in limits with the operator's overrides (`UPSTREAM_TIMEOUTS_MS`, config/env.ts, read at
 * call time) applied, field by field, per mode (for `stream`, over the `standard` row).
 * @throws ConfigError when the variable is malformed.
 */
export function defaultTimeouts(o: TimeoutOverrides = config().UPSTREAM_TIMEOUTS_MS): Record<'stream' | 'buffered', Timeouts> {
  if (o.stream === undefined && o.buffered === undefined) return BUILT_IN_TIMEOUTS;
  return { stream: { ...BUILT_IN_TIMEOUTS.stream, ...o.stream }, buffered: { ...BUILT_IN_TIMEOUTS.buffered, ...o.buffered } };
}

/**
 * How `target` starts answering this request: its catalogue `latency` when set, else `hidden-thinking`
 * for hidden reasoning and `standard` otherwise; a `standard` target that can reason is `thinking`
 * when the request turns reasoning on (`reasoning_effort` other than `none`).
 */
export function latencyProfile(target: CatalogueTarget, req: Pick<ChatCompletionRequest, 'reasoning_effort'> | undefined): LatencyProfile {
  const base = target.latency ?? (target.capabilities.reasoning === 'hidden' ? 'hidden-thinking' : 'standard');
  const asked = req?.reasoning_effort != null && req.reasoning_effort !== 'none';
  if (base === 'standard' && asked && target.capabilities.reasoning !== 'none') return 'thinking';
  return base;
}

/**
 * Extra first-token time for the prompt's size (ms): 1 ms per {@link PROMPT_TOKENS_PER_MS} prompt tokens.
 * @param promptTokens the prompt as counted by the one rule of usage/prompt-tokens.ts
 *   (`roughChatPromptTokens`: its estimate, media not counted). Taken as a number so this module
 *   stays light enough for the edge (every bundle) to read the request's deadline here.
 */
export function promptAllowanceMs(promptTokens: number): number {
  return Math.floor(promptTokens / PROMPT_TOKENS_PER_MS);
}

/**
 * The limits of one chat attempt on `target` for `req` (ms): the table's row for its profile, then
 * the operator's, provider's and target's `stream` overrides, then the prompt-size allowance (ms,
 * {@link promptAllowanceMs}) on the first-token limit and the p95.
 * `headersMs` never exceeds `firstTokenMs`.
 */
export function chatTimeouts(
  target: CatalogueTarget,
  provider: TimeoutOverrides | undefined,
  req: ChatCompletionRequest,
  allowance: number,
  operator: TimeoutOverrides = config().UPSTREAM_TIMEOUTS_MS,
): ChatTimeouts {
  const row = LATENCY_TABLE[latencyProfile(target, req)];
  const base: Timeouts = { connectMs: CONNECT_MS, headersMs: row.firstTokenMs, firstTokenMs: row.firstTokenMs, idleMs: row.idleMs };
  const t: Timeouts = { ...base, ...operator.stream, ...provider?.stream, ...target.timeouts?.stream };
  const firstTokenMs = t.firstTokenMs + allowance;
  return { ...t, firstTokenMs, headersMs: Math.min(t.headersMs + allowance, firstTokenMs), p95FirstTokenMs: row.p95FirstTokenMs + allowance };
}

/** The limits of one embeddings attempt (buffered): built-in, then operator, provider and target `buffered` overrides. */
export function bufferedTimeouts(
  target: CatalogueTarget,
  provider: TimeoutOverrides | undefined,
  operator: TimeoutOverrides = config().UPSTREAM_TIMEOUTS_MS,
): Timeouts {
  return { ...BUILT_IN_TIMEOUTS.buffered, ...operator.buffered, ...provider?.buffered, ...target.timeouts?.buffered };
}

/**
 * ms from an attempt's start after which a hedged model starts its next target beside it: the model's
 * `hedge.afterMs`, else its profile's usual p95 time to first token ({@link LATENCY_TABLE}); either way
 * plus the prompt-size allowance (ms) already in `timeouts` (a long prompt is slow to start on every
 * target). Undefined when the model does not hedge (catalogue `hedge`).
 */
export function hedgeAfterMs(hedge: { afterMs?: number | undefined } | undefined, timeouts: ChatTimeouts, promptAllowance: number): number | undefined {
  if (hedge === undefined) return undefined;
  return hedge.afterMs === undefined ? timeouts.p95FirstTokenMs : hedge.afterMs + promptAllowance;
}

/** An attempt's limits (ms): its timeouts clipped to the deadline, and `totalMs`, what is left of the request's time. */
export type AttemptLimits = Timeouts & { totalMs: number };

/** Never let an attempt's timers run past the request's deadline: each limit clipped to `remainingMs` (ms, at least 1). */
export function attemptLimits(t: Timeouts, remainingMs: number): AttemptLimits {
  const r = Math.max(1, remainingMs);
  return {
    connectMs: Math.min(t.connectMs, r),
    headersMs: Math.min(t.headersMs, r),
    firstTokenMs: Math.min(t.firstTokenMs, r),
    idleMs: Math.min(t.idleMs, r),
    totalMs: r,
  };
}

/**
 * The timers of a streamed chat attempt until its first token (upstream-call.ts): headers never after
 * the first-token limit, and silence allowed up to the first-token limit (a reasoning model thinks in
 * silence; the idle limit applies once output flows).
 */
export function streamedAttemptTimeouts(limits: AttemptLimits): AttemptTimeouts {
  return {
    connectMs: limits.connectMs,
    headersMs: Math.min(limits.headersMs, limits.firstTokenMs),
    idleMs: Math.max(limits.idleMs, limits.firstTokenMs),
    totalMs: limits.totalMs,
    firstTokenMs: limits.firstTokenMs,
  };
}

/** A buffered attempt begun now must have begun its answer by this time (epoch ms): its headers limit. */
export function answerBy(limits: AttemptLimits, now = Date.now()): number {
  return now + limits.headersMs;
}

/**
 * The request's deadline (epoch ms): no upstream attempt runs past it. The host's remaining time
 * (`remainingMs`, Lambda's `getRemainingTimeInMillis()`) less the settle reserve (SETTLE_RESERVE_MS,
 * config/stack-contract.ts: writing the last bytes and settling the ledger), at least 1 s.
 */
export function requestDeadline(receivedAt: number, remainingMs: number): number {
  return receivedAt + Math.max(1_000, remainingMs - SETTLE_RESERVE_MS);
}

/**
 * When the request's own function can no longer settle its hold (epoch ms): its deadline plus the
 * settle reserve, i.e. the invocation's end. Undefined when the host sets no deadline (the hold then
 * lives the billing default, 15 minutes).
 */
export function holdEndsAt(req: { deadline?: number | undefined }): number | undefined {
  return req.deadline === undefined ? undefined : req.deadline + SETTLE_RESERVE_MS;
}

/**
 * When a chat answer's status is committed if no answer is in yet (epoch ms), counted from the
 * request's arrival (the hold's time is part of what the client waits):
 * - buffered: `BUFFERED_CHAT_BUDGET_MS` (default 55 s, under CloudFront's origin timeout); then the
 *   200 goes out with JSON-whitespace beats while routing runs on to the deadline (app/chat-answer.ts `heldJson`);
 * - streamed: `STREAM_COMMIT_AFTER_MS` (default 10 s) waiting for a first token. Until then every
 *   failure keeps its own status code; after, SSE comments keep the connection alive — CloudFront cuts
 *   an origin silent for 60 s (its origin response timeout) — and fallback goes on invisibly.
 * Settings read at call time (config/env.ts).
 */
export function commitAt(req: { receivedAt: number }, stream: boolean): number {
  const c = config();
  return req.receivedAt + (stream ? c.STREAM_COMMIT_AFTER_MS : c.BUFFERED_CHAT_BUDGET_MS);
}

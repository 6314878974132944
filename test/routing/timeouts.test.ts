import { afterEach, describe, expect, it, vi } from 'vitest';
import { getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { roughChatPromptTokens } from '../../functions/shared/usage/prompt-tokens';
import {
  BUILT_IN_TIMEOUTS,
  LATENCY_TABLE,
  answerBy,
  attemptLimits,
  bufferedTimeouts,
  chatTimeouts,
  commitAt,
  defaultTimeouts,
  hedgeAfterMs,
  holdEndsAt,
  latencyProfile,
  promptAllowanceMs,
  requestDeadline,
  streamedAttemptTimeouts,
} from '../../functions/shared/routing/timeouts';
import { loadConfig, reloadConfig } from '../../functions/shared/config/env';
import { SETTLE_RESERVE_MS } from '../../functions/shared/config/stack-contract';

/** `UPSTREAM_TIMEOUTS_MS` as the config parses it. */
const operatorTimeouts = (raw: string | undefined) => loadConfig({ UPSTREAM_TIMEOUTS_MS: raw }).UPSTREAM_TIMEOUTS_MS;

/**
 * Which time limit wins: the latency table (by how the target starts answering) < UPSTREAM_TIMEOUTS_MS
 * < provider < catalogue target; then the prompt-size allowance on the first token.
 */

const target = (model: string) => getModel(model, 'chat').targets[0]!;
const req = (extra: Record<string, unknown> = {}) => chatCompletionRequest.parse({ model: 'x', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('the latency table', () => {
  it('gives each target its profile: standard, thinking (by default or when asked), hidden thinking', () => {
    expect(latencyProfile(target('gpt-4o'), req())).toBe('standard');
    expect(latencyProfile(target('gpt-4o'), req({ reasoning_effort: 'high' }))).toBe('standard'); // cannot reason
    expect(latencyProfile(target('claude-3-5-sonnet'), req())).toBe('standard');
    expect(latencyProfile(target('claude-3-5-sonnet'), req({ reasoning_effort: 'low' }))).toBe('thinking');
    expect(latencyProfile(target('claude-3-5-sonnet'), req({ reasoning_effort: 'none' }))).toBe('standard');
    expect(latencyProfile(target('gemini-2.5-pro'), req())).toBe('thinking');
    expect(latencyProfile(target('gemini-2.0-flash'), req())).toBe('standard');
    expect(latencyProfile(target('deepseek-r1'), req())).toBe('thinking');
    expect(latencyProfile(target('deepseek-v3'), req())).toBe('standard');
    expect(latencyProfile(target('minimax'), req())).toBe('thinking');
    expect(latencyProfile(target('o3-mini'), req())).toBe('hidden-thinking');
  });

  it('applies the row, with headers never after the first token, and a first token in seconds for normal models', () => {
    const t = chatTimeouts(target('gpt-4o'), undefined, req(), 0, {});
    expect(t).toEqual({ connectMs: 3_000, headersMs: 8_000, firstTokenMs: 8_000, idleMs: 15_000, p95FirstTokenMs: 3_000 });
    expect(chatTimeouts(target('o3-mini'), undefined, req(), 0, {}).firstTokenMs).toBe(LATENCY_TABLE['hidden-thinking'].firstTokenMs);
    expect(chatTimeouts(target('deepseek-r1'), undefined, req(), 0, {}).firstTokenMs).toBe(LATENCY_TABLE.thinking.firstTokenMs);
    // The built-in stream defaults are the standard row.
    expect(BUILT_IN_TIMEOUTS.stream).toEqual({ connectMs: 3_000, headersMs: 8_000, firstTokenMs: 8_000, idleMs: 15_000 });
  });

  it('UPSTREAM_TIMEOUTS_MS replaces the table for every model; a provider beats it, a catalogue target beats the provider', () => {
    const operator = operatorTimeouts('{"stream":{"firstTokenMs":700,"idleMs":500},"buffered":{"headersMs":900}}');
    expect(chatTimeouts(target('o3-mini'), undefined, req(), 0, operator)).toMatchObject({ firstTokenMs: 700, headersMs: 700, idleMs: 500 });
    const provider = { stream: { idleMs: 45_000 } };
    expect(chatTimeouts(target('gpt-4o'), provider, req(), 0, operator)).toMatchObject({ firstTokenMs: 700, idleMs: 45_000 });
    const custom = { ...target('gpt-4o'), timeouts: { stream: { idleMs: 1_234 } } };
    expect(chatTimeouts(custom, provider, req(), 0, operator).idleMs).toBe(1_234);
    expect(bufferedTimeouts(target('gpt-4o'), undefined, operator)).toEqual({ ...BUILT_IN_TIMEOUTS.buffered, headersMs: 900 });
    expect(defaultTimeouts(operatorTimeouts('{"stream":{"idleMs":20000}}')).stream).toEqual({ ...BUILT_IN_TIMEOUTS.stream, idleMs: 20_000 });
    expect(defaultTimeouts(operatorTimeouts(undefined))).toBe(BUILT_IN_TIMEOUTS);
  });

  it('refuses a malformed UPSTREAM_TIMEOUTS_MS, naming it (config/env.ts)', () => {
    expect(() => operatorTimeouts('{"stream":{"idleMs":-1}}')).toThrow();
    expect(() => operatorTimeouts('{"stream":{"idle":5}}')).toThrow();
    expect(() => operatorTimeouts('not json')).toThrow(/^UPSTREAM_TIMEOUTS_MS must be JSON like/);
  });

  it('gives a long prompt more time to its first token: 1 ms per 10 tokens, counted by the one prompt rule', () => {
    const long = req({ messages: [{ role: 'user', content: 'x'.repeat(400_000) }] }); // ~100K tokens before the tokenizer loads
    const allowance = promptAllowanceMs(roughChatPromptTokens(long));
    expect(allowance).toBe(Math.floor(roughChatPromptTokens(long) / 10));
    expect(allowance).toBeGreaterThan(1_000);
    const t = chatTimeouts(target('gpt-4o'), undefined, long, allowance, {});
    expect(t.firstTokenMs).toBe(8_000 + allowance);
    expect(t.headersMs).toBe(8_000 + allowance);
    expect(t.p95FirstTokenMs).toBe(3_000 + allowance);
    // Images add nothing to the time-limit size (their base64 says little about their tokens).
    const image = req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(400_000)}` } }] }] });
    expect(promptAllowanceMs(roughChatPromptTokens(image))).toBe(promptAllowanceMs(roughChatPromptTokens(req({ messages: [{ role: 'user', content: '' }] }))));
  });
});

describe("a request's own limits, set in one place", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    reloadConfig();
  });

  it("takes the settle reserve off the host's remaining time for the deadline, and lets the hold outlive it by that reserve", () => {
    expect(requestDeadline(1_000_000, 30_000)).toBe(1_000_000 + 30_000 - SETTLE_RESERVE_MS);
    expect(requestDeadline(1_000_000, 2_000)).toBe(1_001_000); // never under 1 s
    expect(holdEndsAt({ deadline: 2_000_000 })).toBe(2_000_000 + SETTLE_RESERVE_MS);
    expect(holdEndsAt({})).toBeUndefined();
  });

  it("commits a status at the settings' budgets, counted from the arrival (read at call time)", () => {
    vi.stubEnv('BUFFERED_CHAT_BUDGET_MS', '1234');
    vi.stubEnv('STREAM_COMMIT_AFTER_MS', '567');
    reloadConfig();
    expect(commitAt({ receivedAt: 10_000 }, false)).toBe(11_234);
    expect(commitAt({ receivedAt: 10_000 }, true)).toBe(10_567);
  });

  it("clips an attempt to what is left of the deadline, and shapes a stream's wait for its first token", () => {
    const t = { connectMs: 3_000, headersMs: 8_000, firstTokenMs: 8_000, idleMs: 15_000 };
    expect(attemptLimits(t, 5_000)).toEqual({ connectMs: 3_000, headersMs: 5_000, firstTokenMs: 5_000, idleMs: 5_000, totalMs: 5_000 });
    expect(attemptLimits(t, -10).totalMs).toBe(1);
    const limits = attemptLimits({ ...t, headersMs: 9_000, idleMs: 2_000 }, 60_000);
    expect(streamedAttemptTimeouts(limits)).toEqual({ connectMs: 3_000, headersMs: 8_000, idleMs: 8_000, totalMs: 60_000, firstTokenMs: 8_000 });
    expect(answerBy(limits, 100)).toBe(9_100);
  });

  it("hedges after the model's own delay plus the prompt allowance, else the profile's p95 (which has it), never for a model that does not hedge", () => {
    const t = chatTimeouts(target('gpt-4o'), undefined, req(), 40, {});
    expect(hedgeAfterMs({ afterMs: 150 }, t, 40)).toBe(190);
    expect(hedgeAfterMs({}, t, 40)).toBe(LATENCY_TABLE.standard.p95FirstTokenMs + 40);
    expect(hedgeAfterMs(undefined, t, 40)).toBeUndefined();
  });
});

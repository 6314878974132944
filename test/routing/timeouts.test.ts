import { describe, expect, it } from 'vitest';
import { getModel } from '../../functions/shared/catalogue/catalogue';
import { chatCompletionRequest } from '../../functions/shared/openai/chat-request';
import { roughChatPromptTokens } from '../../functions/shared/usage/prompt-tokens';
import {
  BUILT_IN_TIMEOUTS,
  LATENCY_TABLE,
  bufferedTimeouts,
  chatTimeouts,
  defaultTimeouts,
  latencyProfile,
  promptAllowanceMs,
} from '../../functions/shared/routing/timeouts';
import { loadConfig } from '../../functions/shared/config/env';

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

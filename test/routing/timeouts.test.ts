import { describe, expect, it } from 'vitest';
import { getModel } from '../../functions/shared/catalogue/catalogue';
import { BUILT_IN_TIMEOUTS, DEFAULT_TIMEOUTS, defaultTimeouts, timeoutsFor } from '../../functions/shared/routing/timeouts';

/** Which time limit wins: built-in < UPSTREAM_TIMEOUTS_MS < provider < catalogue target. */

const gpt4o = getModel('gpt-4o', 'chat').targets[0]!;
const o3mini = getModel('o3-mini', 'chat').targets[0]!;

describe('time limits', () => {
  it('UPSTREAM_TIMEOUTS_MS replaces the built-in defaults field by field', () => {
    const t = defaultTimeouts('{"stream":{"idleMs":20000},"buffered":{"headersMs":50000}}');
    expect(t.stream).toEqual({ ...BUILT_IN_TIMEOUTS.stream, idleMs: 20_000 });
    expect(t.buffered).toEqual({ ...BUILT_IN_TIMEOUTS.buffered, headersMs: 50_000 });
    expect(defaultTimeouts(undefined)).toBe(BUILT_IN_TIMEOUTS);
    expect(defaultTimeouts('')).toBe(BUILT_IN_TIMEOUTS);
  });

  it('refuses a malformed UPSTREAM_TIMEOUTS_MS at load', () => {
    expect(() => defaultTimeouts('{"stream":{"idleMs":-1}}')).toThrow();
    expect(() => defaultTimeouts('{"stream":{"idle":5}}')).toThrow();
    expect(() => defaultTimeouts('not json')).toThrow();
  });

  it('a provider override beats the defaults, a catalogue target beats the provider', () => {
    const provider = { stream: { firstTokenMs: 90_000, idleMs: 45_000 } };
    expect(timeoutsFor('stream', provider, gpt4o)).toEqual({ ...DEFAULT_TIMEOUTS.stream, firstTokenMs: 90_000, idleMs: 45_000 });
    // o3-mini's target allows 180 s to the first token (hidden reasoning).
    expect(timeoutsFor('stream', provider, o3mini)).toEqual({ ...DEFAULT_TIMEOUTS.stream, firstTokenMs: 180_000, idleMs: 45_000 });
    // The override of one mode leaves the other alone.
    expect(timeoutsFor('buffered', provider, o3mini)).toEqual(DEFAULT_TIMEOUTS.buffered);
  });
});

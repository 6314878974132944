import { describe, expect, it } from 'vitest';
import { ConfigError, envMs } from '../../functions/shared/config/env-ms';

describe('envMs', () => {
  it('returns the default when the variable is unset or empty', () => {
    expect(envMs('X_MS', 1_000, {})).toBe(1_000);
    expect(envMs('X_MS', 1_000, { X_MS: '  ' })).toBe(1_000);
  });

  it('reads a non-negative integer, 0 included', () => {
    expect(envMs('X_MS', 1_000, { X_MS: '250' })).toBe(250);
    expect(envMs('X_MS', 1_000, { X_MS: ' 0 ' })).toBe(0);
  });

  it('names the variable when its value is not a duration, instead of falling back silently', () => {
    for (const bad of ['abc', '-5', '1.5', '10s']) {
      expect(() => envMs('STREAM_COMMIT_AFTER_MS', 10_000, { STREAM_COMMIT_AFTER_MS: bad })).toThrow(ConfigError);
      expect(() => envMs('STREAM_COMMIT_AFTER_MS', 10_000, { STREAM_COMMIT_AFTER_MS: bad })).toThrow(/STREAM_COMMIT_AFTER_MS/);
    }
  });
});

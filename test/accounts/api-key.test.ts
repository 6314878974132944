import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, parseBearer, redactApiKey } from '../../functions/shared/accounts/api-key';
import { AuthenticationError } from '../../functions/shared/errors/gateway-errors';

function authError(fn: () => unknown): AuthenticationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AuthenticationError);
    return err as AuthenticationError;
  }
  throw new Error('expected an AuthenticationError');
}

describe('generateApiKey', () => {
  it('makes sk-mux- keys with a 43-character base62 secret, its SHA-256 and a short hint', () => {
    const { key, keyHash, hint } = generateApiKey();
    expect(key).toMatch(/^sk-mux-[0-9A-Za-z]{43}$/);
    expect(keyHash).toBe(hashApiKey(key));
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(hint).toBe(`${key.slice(0, 11)}…`);
  });

  it('never repeats and spreads secrets over the whole alphabet', () => {
    const keys = Array.from({ length: 2_000 }, () => generateApiKey().key);
    expect(new Set(keys).size).toBe(keys.length);
    const used = new Set(keys.flatMap((k) => [...k.slice(8)])); // skip the first digit (it is < 62^43 / 2^256 biased)
    expect(used.size).toBe(62);
  });
});

describe('parseBearer', () => {
  it('returns the key from a Bearer header, any scheme case', () => {
    const { key } = generateApiKey();
    expect(parseBearer(`Bearer ${key}`)).toBe(key);
    expect(parseBearer(`bearer   ${key} `)).toBe(key);
  });

  it("answers a missing key with OpenAI's message and code null", () => {
    for (const header of [undefined, '', 'Bearer ', 'Basic dXNlcjpwYXNz']) {
      const err = authError(() => parseBearer(header));
      expect(err.status).toBe(401);
      expect(err.code).toBeNull();
      expect(err.message).toMatch(/^You didn't provide an API key\. /);
    }
  });

  it('answers a malformed key with invalid_api_key and echoes only a few characters of it', () => {
    const bad = 'sk-mux-abcdefghijklmnopqrstuvwxyz0123456789SECRETxyz';
    const err = authError(() => parseBearer(`Bearer ${bad}`));
    expect(err.status).toBe(401);
    expect(err.code).toBe('invalid_api_key');
    expect(err.message).toMatch(/^Incorrect API key provided: sk-mux-ab…xyz\./);
    expect(err.message).not.toContain('SECRET');
    expect(authError(() => parseBearer('Bearer sk-proj-123')).message).toContain('sk-…');
  });

  it('redacts short strings to almost nothing', () => {
    expect(redactApiKey('abc')).toBe('a…');
    expect(redactApiKey('')).toBe('…');
  });
});

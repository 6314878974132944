import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byokContext, clearDataKeyCache, open, seal } from '../../functions/shared/accounts/byok/envelope';
import { LocalKeyEncryption, setKeyEncryption, type KeyEncryptionService } from '../../functions/shared/accounts/byok/key-encryption';

/** Envelope encryption with the local key-encryption key (the same code path as with KMS). */
const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

function localService(): { service: KeyEncryptionService; file: string; decrypts: () => number } {
  const file = join(mkdtempSync(join(tmpdir(), 'kek-')), 'byok-kek');
  const inner = new LocalKeyEncryption(file);
  let decrypts = 0;
  const service: KeyEncryptionService = {
    generateDataKey: (c) => inner.generateDataKey(c),
    decrypt: (e, c) => {
      decrypts++;
      return inner.decrypt(e, c);
    },
  };
  return { service, file, decrypts: () => decrypts };
}

afterEach(() => {
  setKeyEncryption(undefined);
  clearDataKeyCache();
});

describe('BYOK envelope encryption', () => {
  it('round-trips a key, stores no plaintext, and keeps the KEK file private', async () => {
    const { service, file } = localService();
    setKeyEncryption(service);
    const sealed = await seal(SECRET, byokContext('acct-1', 'openai'));
    expect(JSON.stringify(sealed)).not.toContain(SECRET.slice(3));
    expect(Buffer.from(sealed.ciphertext, 'base64').toString('latin1')).not.toContain('abcdefghij');
    expect(await open(sealed, byokContext('acct-1', 'openai'))).toBe(SECRET);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a ciphertext moved to another account or provider, or altered', async () => {
    const { service } = localService();
    setKeyEncryption(service);
    const sealed = await seal(SECRET, byokContext('acct-1', 'openai'));
    await expect(open(sealed, byokContext('acct-2', 'openai'))).rejects.toThrow();
    clearDataKeyCache();
    await expect(open(sealed, byokContext('acct-1', 'deepseek'))).rejects.toThrow();
    const bytes = Buffer.from(sealed.ciphertext, 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    await expect(open({ ...sealed, ciphertext: bytes.toString('base64') }, byokContext('acct-1', 'openai'))).rejects.toThrow();
  });

  it('decrypts each data key once while it is cached', async () => {
    const { service, decrypts } = localService();
    setKeyEncryption(service);
    const sealed = await seal(SECRET, byokContext('acct-1', 'openai'));
    for (let i = 0; i < 5; i++) expect(await open(sealed, byokContext('acct-1', 'openai'))).toBe(SECRET);
    expect(decrypts()).toBe(1);
  });
});

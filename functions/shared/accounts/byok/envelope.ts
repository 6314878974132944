/**
 * Envelope encryption of one provider key (BYOK): a fresh 256-bit data key per stored key, from the
 * key-encryption service (KMS in AWS), encrypts the provider key with AES-256-GCM in the function; only
 * the ciphertext and the encrypted data key are stored. The encryption context `{purpose, accountId,
 * provider}` is bound twice — by KMS to the data key and as GCM additional data — so a ciphertext copied
 * onto another account or provider does not decrypt.
 *
 * Decrypted data keys are cached in memory for {@link DATA_KEY_CACHE_TTL_MS} (bounded), so a warm
 * container calls KMS Decrypt once per stored key per 5 minutes, not once per request. Plaintext
 * provider keys are never cached, logged or returned.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { TtlCache } from '../../store/ttl-cache';
import { contextBytes, keyEncryption, type EncryptionContext } from './key-encryption';

/** What is stored for one provider key (base64 strings). */
export interface SealedSecret {
  /** IV (12 bytes) ‖ GCM tag (16 bytes) ‖ ciphertext, base64. */
  ciphertext: string;
  /** The data key as encrypted by the key-encryption service, base64. */
  encryptedDataKey: string;
}

/** How long a decrypted data key stays in memory, ms. */
export const DATA_KEY_CACHE_TTL_MS = 5 * 60_000;

const dataKeys = new TtlCache<string, Buffer>({ ttlMs: DATA_KEY_CACHE_TTL_MS, maxEntries: 1_000 });

/** The context of one account's key for one provider. */
export function byokContext(accountId: string, provider: string): EncryptionContext {
  return { purpose: 'modelmux-byok', accountId, provider };
}

/**
 * Encrypts `secret` under a new data key.
 * @throws ConfigUnavailableError (503) when BYOK is not configured; the KMS client's error when KMS fails.
 */
export async function seal(secret: string, context: EncryptionContext): Promise<SealedSecret> {
  const { plaintext, encrypted } = await keyEncryption().generateDataKey(context);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', plaintext, iv).setAAD(contextBytes(context));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength).fill(0);
  return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64'), encryptedDataKey: Buffer.from(encrypted).toString('base64') };
}

/**
 * Decrypts a sealed secret (the data key from the cache, else from the key-encryption service).
 * @throws Error when the context does not match or the data was altered; the service's error when it fails.
 */
export async function open(sealed: SealedSecret, context: EncryptionContext): Promise<string> {
  const cacheKey = createHash('sha256').update(sealed.encryptedDataKey).update(contextBytes(context)).digest('hex');
  let dataKey = dataKeys.get(cacheKey);
  if (dataKey === undefined) {
    dataKey = Buffer.from(await keyEncryption().decrypt(Buffer.from(sealed.encryptedDataKey, 'base64'), context));
    dataKeys.set(cacheKey, dataKey);
  }
  const buf = Buffer.from(sealed.ciphertext, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', dataKey, buf.subarray(0, 12)).setAAD(contextBytes(context));
  decipher.setAuthTag(buf.subarray(12, 28));
  return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString('utf8');
}

/** Empties the data-key cache (tests). */
export function clearDataKeyCache(): void {
  dataKeys.clear();
}

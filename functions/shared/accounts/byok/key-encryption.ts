/**
 * The key-encryption service behind BYOK's envelope encryption: a small KMS-shaped interface with two
 * implementations, chosen by the environment at first use:
 *
 * - `BYOK_KMS_KEY_ID` (the stack sets it to its KMS key's ARN): AWS KMS `GenerateDataKey` (AES_256) and
 *   `Decrypt`, with an encryption context that binds every data key to its account and provider
 *   (AWS KMS Developer Guide, "Encryption context");
 * - `BYOK_LOCAL_KEK_FILE` (`npm start`: `.local/byok-kek`): a local 256-bit key-encryption key in that
 *   file (created 0600 when missing), wrapping data keys with AES-256-GCM and the same context as
 *   additional authenticated data. No KMS emulator is published on npm, so this stands in for KMS
 *   locally; everything above this interface is the same code in AWS and locally.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { ConfigUnavailableError } from '../../errors/gateway-errors';
import { config } from '../../config/env';

/** Binds a data key to what it protects (all values are strings, as KMS requires). */
export type EncryptionContext = Readonly<Record<string, string>>;

/** The two operations envelope encryption needs. */
export interface KeyEncryptionService {
  /** A fresh 256-bit data key: its plaintext (use, then drop) and its encrypted form (store). */
  generateDataKey(context: EncryptionContext): Promise<{ plaintext: Uint8Array; encrypted: Uint8Array }>;
  /** The plaintext of an encrypted data key; fails if the context differs from the one it was made with. */
  decrypt(encrypted: Uint8Array, context: EncryptionContext): Promise<Uint8Array>;
}

/**
 * The KMS client package. Only BYOK requests need it, so the Lambda bundles leave it out of `index.mjs`
 * (~30 KB of the chat bundle, parsed at every cold start) and load it from its own file beside the
 * handler on first use (lib/constructs/gateway-function.ts defines the variable).
 */
const KMS_MODULE = process.env.MODELMUX_KMS_MODULE ?? '@aws-sdk/client-kms';
type KmsModule = typeof import('@aws-sdk/client-kms');
let kmsModule: Promise<KmsModule> | undefined;

/** The KMS package, imported once (a failed import is tried again on the next call). */
function loadKms(): Promise<KmsModule> {
  kmsModule ??= (import(KMS_MODULE) as Promise<KmsModule>).catch((err: unknown) => {
    kmsModule = undefined;
    throw err;
  });
  return kmsModule;
}

/** AWS KMS with one symmetric key. The client is created once per container, on first use. */
export class AwsKmsKeyEncryption implements KeyEncryptionService {
  private client: KMSClient | undefined;

  constructor(
    private readonly keyId: string,
    client?: KMSClient,
  ) {
    this.client = client;
  }

  private async kms(): Promise<{ client: KMSClient; m: KmsModule }> {
    const m = await loadKms();
    this.client ??= new m.KMSClient({ requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 } });
    return { client: this.client, m };
  }

  async generateDataKey(context: EncryptionContext): Promise<{ plaintext: Uint8Array; encrypted: Uint8Array }> {
    const { client, m } = await this.kms();
    const out = await client.send(new m.GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: { ...context } }));
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
    return { plaintext: out.Plaintext, encrypted: out.CiphertextBlob };
  }

  async decrypt(encrypted: Uint8Array, context: EncryptionContext): Promise<Uint8Array> {
    const { client, m } = await this.kms();
    const out = await client.send(new m.DecryptCommand({ KeyId: this.keyId, CiphertextBlob: encrypted, EncryptionContext: { ...context } }));
    if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
    return out.Plaintext;
  }
}

/** Version byte of a locally wrapped data key: 1 = AES-256-GCM, 12-byte IV, 16-byte tag. */
const LOCAL_WRAP_V1 = 1;

/** Canonical bytes of a context (sorted keys), used as AES-GCM additional data. */
export function contextBytes(context: EncryptionContext): Buffer {
  return Buffer.from(
    JSON.stringify(
      Object.keys(context)
        .sort()
        .map((k) => [k, context[k]]),
    ),
    'utf8',
  );
}

/** A local key-encryption key (32 bytes, hex in a file). Never used in AWS. */
export class LocalKeyEncryption implements KeyEncryptionService {
  private readonly kek: Buffer;

  /** Reads the KEK from `file`, creating it (0600) when missing. */
  constructor(file: string) {
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    }
    this.kek = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
    if (this.kek.length !== 32) throw new Error(`${file} must hold a 256-bit key as 64 hex characters`);
  }

  async generateDataKey(context: EncryptionContext): Promise<{ plaintext: Uint8Array; encrypted: Uint8Array }> {
    const plaintext = randomBytes(32);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.kek, iv).setAAD(contextBytes(context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { plaintext, encrypted: Buffer.concat([Buffer.of(LOCAL_WRAP_V1), iv, cipher.getAuthTag(), body]) };
  }

  async decrypt(encrypted: Uint8Array, context: EncryptionContext): Promise<Uint8Array> {
    const buf = Buffer.from(encrypted);
    if (buf[0] !== LOCAL_WRAP_V1 || buf.length !== 1 + 12 + 16 + 32) throw new Error('not a locally wrapped data key');
    const decipher = createDecipheriv('aes-256-gcm', this.kek, buf.subarray(1, 13)).setAAD(contextBytes(context));
    decipher.setAuthTag(buf.subarray(13, 29));
    return Buffer.concat([decipher.update(buf.subarray(29)), decipher.final()]);
  }
}

let service: KeyEncryptionService | undefined;

/**
 * This container's key-encryption service (see the file comment).
 * @throws ConfigUnavailableError (503, code `byok_not_configured`) when neither variable is set.
 */
export function keyEncryption(): KeyEncryptionService {
  if (service) return service;
  const { BYOK_KMS_KEY_ID: kmsKeyId, BYOK_LOCAL_KEK_FILE: localFile } = config();
  if (kmsKeyId) service = new AwsKmsKeyEncryption(kmsKeyId);
  else if (localFile) service = new LocalKeyEncryption(localFile);
  else throw new ConfigUnavailableError('Bring-your-own-key is not configured on this deployment.', { code: 'byok_not_configured' });
  return service;
}

/** Replaces (or with undefined, forgets) the container's service (tests). */
export function setKeyEncryption(s: KeyEncryptionService | undefined): void {
  service = s;
}

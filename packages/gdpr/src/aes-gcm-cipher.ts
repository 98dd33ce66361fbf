import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Cipher } from './cipher.js';
import { DecryptError, InvalidKeySizeError, MalformedCiphertextError } from './errors.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Standard alphabet, padded: what every SDK writes and reads. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The reference cipher shared by the SDKs: AES-GCM with a random 12-byte IV per
 * call; output is standard padded base64 of `IV ‖ ciphertext ‖ 16-byte tag`, so
 * a value encrypted by the Go or Python reference decrypts here and the reverse.
 * The key (16, 24 or 32 bytes: AES-128/192/256) is yours; no key management.
 *
 * @example
 * ```ts
 * const cipher = new AesGcmCipher(Buffer.from(process.env.PII_KEY!, 'base64'));
 * const sealed = cipher.encrypt(Buffer.from('"alice@example.com"'));
 * Buffer.from(cipher.decrypt(sealed)).toString(); // '"alice@example.com"'
 * ```
 */
export class AesGcmCipher implements Cipher {
  readonly #key: Buffer;
  readonly #algorithm: 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm';

  /** @throws {InvalidKeySizeError} unless the key is 16, 24 or 32 bytes. */
  constructor(key: Uint8Array) {
    if (!(key instanceof Uint8Array) || ![16, 24, 32].includes(key.length)) {
      throw new InvalidKeySizeError(key instanceof Uint8Array ? key.length : -1);
    }
    this.#key = Buffer.from(key);
    this.#algorithm = `aes-${key.length * 8}-gcm` as 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm';
  }

  encrypt(plaintext: Uint8Array): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(this.#algorithm, this.#key, iv, { authTagLength: TAG_BYTES });
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64');
  }

  /**
   * @throws {MalformedCiphertextError} not padded standard base64, or shorter than IV + tag.
   * @throws {DecryptError} the tag does not verify (wrong key, tampered bytes).
   */
  decrypt(ciphertext: string): Uint8Array {
    if (typeof ciphertext !== 'string' || !BASE64.test(ciphertext)) {
      throw new MalformedCiphertextError('the ciphertext is not standard padded base64');
    }
    const raw = Buffer.from(ciphertext, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) {
      throw new MalformedCiphertextError(`the ciphertext is ${raw.length} bytes, shorter than IV and tag (${IV_BYTES + TAG_BYTES})`);
    }
    const decipher = createDecipheriv(this.#algorithm, this.#key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
    } catch (error) {
      throw new DecryptError('the ciphertext does not authenticate (wrong key or tampered)', { cause: error });
    }
  }
}

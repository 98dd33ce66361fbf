/**
 * The field-protection primitive `protect`/`unprotect` use: synchronous, bytes
 * in, a JSON-safe string out. Bind it to a KMS, Vault transit, an HSM, or use
 * the reference {@link AesGcmCipher}.
 *
 * `decrypt` must return exactly the bytes `encrypt` was given, and must throw
 * for a string it did not produce (wrong key, tampering) rather than return garbage.
 */
export interface Cipher {
  encrypt(plaintext: Uint8Array): string;
  decrypt(ciphertext: string): Uint8Array;
}

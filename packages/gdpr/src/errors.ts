/** A protected field could not be restored: wrong key, tampered ciphertext, or plaintext that is not JSON. Fail the message. */
export class DecryptError extends Error {
  override readonly name: string = 'DecryptError';
}

/** The ciphertext is not the reference layout (standard padded base64 of IV ‖ ciphertext ‖ tag, long enough for both). */
export class MalformedCiphertextError extends DecryptError {
  override readonly name: string = 'MalformedCiphertextError';
}

/** An AES key that is not 16, 24 or 32 bytes long. */
export class InvalidKeySizeError extends Error {
  override readonly name: string = 'InvalidKeySizeError';
  constructor(readonly size: number) {
    super(`an AES-GCM key must be 16, 24 or 32 bytes, got ${size}`);
  }
}

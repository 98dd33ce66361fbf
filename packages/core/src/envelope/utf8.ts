import { Buffer, isUtf8 } from 'node:buffer';

/**
 * True when `bytes` is well-formed UTF-8. A body that is not is poison and is
 * dead-lettered as base64 (`Buffer#toString` would silently substitute U+FFFD).
 */
export function isValidUtf8(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}

/** Decodes well-formed UTF-8 to a string; returns null when `bytes` is not valid UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  if (!isUtf8(bytes)) return null;
  return asBuffer(bytes).toString('utf8');
}

/** A Buffer view of the same memory (no copy). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

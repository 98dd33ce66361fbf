export { protect, unprotect } from './protect.js';
export { sensitivePaths } from './sensitive-paths.js';
export type { SensitivePath } from './sensitive-paths.js';
export type { Cipher } from './cipher.js';
export { AesGcmCipher } from './aes-gcm-cipher.js';
export { DecryptError, InvalidKeySizeError, MalformedCiphertextError } from './errors.js';

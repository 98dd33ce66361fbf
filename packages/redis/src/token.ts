import { randomBytes } from 'node:crypto';

/** Random bytes drawn from the CSPRNG in blocks, so a token costs no system call of its own. */
const BLOCK = 16 * 256;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `n` reservation tokens end to end in one string: 32 lowercase hex characters
 * each (16 bytes from the CSPRNG); token `i` is characters `32 i` to `32 i + 32`.
 * One string, not one per token: a reserve asks for up to 64 and uses few.
 */
export function reservationTokens(n: number): string {
  if (offset + 16 * n > pool.length) {
    pool = randomBytes(Math.max(BLOCK, 16 * n));
    offset = 0;
  }
  const tokens = pool.toString('hex', offset, offset + 16 * n);
  offset += 16 * n;
  return tokens;
}

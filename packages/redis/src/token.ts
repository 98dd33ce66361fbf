import { randomBytes } from 'node:crypto';

/** Random bytes drawn from the CSPRNG in blocks, so a token costs no system call of its own. */
const BLOCK = 16 * 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** `n` reservation tokens: 32 lowercase hex characters each (16 bytes from the CSPRNG). */
export function reservationTokens(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (offset + 16 > pool.length) {
      pool = randomBytes(BLOCK);
      offset = 0;
    }
    out.push(pool.toString('hex', offset, offset + 16));
    offset += 16;
  }
  return out;
}

import { randomBytes } from 'node:crypto';

/** `n` reservation tokens: 32 lowercase hex characters each, from the CSPRNG. */
export function reservationTokens(n: number): string[] {
  const hex = randomBytes(16 * n).toString('hex');
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(hex.slice(i * 32, i * 32 + 32));
  return out;
}

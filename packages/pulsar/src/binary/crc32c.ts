// CRC-32C (Castagnoli), the checksum Pulsar puts over each message's metadata
// and payload. It runs on every received message, so it reads 8 bytes a step
// (slicing-by-8) against tables built once at load.

const POLY = 0x82f63b78; // reflected Castagnoli polynomial

// Tk[b]: the CRC of byte b followed by k zero bytes; T0 is the classic
// byte-at-a-time table. Eight separate arrays rather than one of 2048 entries:
// V8 runs the loop below 5-20% faster that way (measured on Node 20 and 24).
function sliceTables(): Uint32Array[] {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const [t0] = tables as [Uint32Array];
  for (let b = 0; b < 256; b++) {
    let c = b;
    for (let i = 0; i < 8; i++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[b] = c;
  }
  for (let b = 0; b < 256; b++) {
    let c = t0[b]!;
    for (let k = 1; k < 8; k++) {
      c = t0[c & 0xff]! ^ (c >>> 8);
      tables[k]![b] = c;
    }
  }
  return tables;
}

const [T0, T1, T2, T3, T4, T5, T6, T7] = sliceTables() as [
  Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array,
];

/**
 * CRC-32C of `data[start, end)`: init 0xFFFFFFFF, final xor 0xFFFFFFFF, as an
 * unsigned 32-bit number (`crc32c(Buffer.from('123456789')) === 0xe3069283`).
 * Throws a RangeError when the range is not inside `data`.
 */
export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  // Reading past the end yields undefined, which bitwise ops treat as 0: a wrong
  // checksum rather than an error, so the range is checked up front.
  if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= data.length)) {
    throw new RangeError(`crc32c: range [${start}, ${end}) is outside the ${data.length}-byte input`);
  }
  // 0xFFFFFFFF written as the int32 -1: a literal above 2^31 starts crc as a
  // double, and that made the loop ~1.7x slower (measured on Node 20 and 24).
  let crc = -1;
  let i = start;
  const last8 = end - 8;
  for (; i <= last8; i += 8) {
    // Fold the first 4 bytes into the running CRC; the last 4 only look up tables.
    crc ^= data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    crc = T7[crc & 0xff]! ^ T6[(crc >>> 8) & 0xff]! ^ T5[(crc >>> 16) & 0xff]! ^ T4[crc >>> 24]!
      ^ T3[data[i + 4]!]! ^ T2[data[i + 5]!]! ^ T1[data[i + 6]!]! ^ T0[data[i + 7]!]!;
  }
  for (; i < end; i++) crc = T0[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

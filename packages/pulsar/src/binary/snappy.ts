// The raw Snappy block format (no framing or checksums): what Pulsar's producers
// write with Snappy.compress (Java) and snappy::Compress (C++). Every read and
// write is bounds-checked, and each element consumes at least one input byte, so
// hostile input ends in an Error, never a bad read or an endless loop.

function corrupt(detail: string): Error {
  return new Error(`Snappy block is corrupt: ${detail}`);
}

/**
 * Decodes one raw Snappy block: a varint preamble with the uncompressed length,
 * then literal and copy elements. Throws an Error when the block is truncated or
 * malformed, or its elements do not produce exactly the preamble's length.
 */
export function snappyDecompress(input: Uint8Array): Buffer {
  const end = input.length;
  let ip = 0;

  // Preamble: the uncompressed length, little-endian base-128, at most 32 bits.
  // Multiplication, not shifts: a 5th byte would overflow a 32-bit shift.
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (ip >= end) throw corrupt('input ends inside the length preamble');
    if (shift > 28) throw corrupt('the length preamble is longer than 5 bytes');
    const b = input[ip++]!;
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  if (length > 0xffffffff) throw corrupt(`the preamble length ${length} does not fit 32 bits`);
  // No element yields more than 64 bytes for 3 input bytes (a copy with a 2-byte
  // offset): a larger claim is corrupt, refused before allocating it.
  if (length * 3 > (end - ip) * 64) {
    throw corrupt(`${end - ip} bytes cannot decode to the ${length} the preamble claims`);
  }

  // Safe uninitialised: the size check at the end rejects any output not fully written.
  const out = Buffer.allocUnsafe(length);
  let op = 0;
  while (ip < end) {
    const tag = input[ip++]!;
    const kind = tag & 3;

    if (kind === 0) {
      // Literal: length - 1 in the tag's upper 6 bits, or in the 1-4 bytes after it (60-63).
      let literals = tag >>> 2;
      if (literals >= 60) {
        const bytes = literals - 59;
        if (end - ip < bytes) throw corrupt('input ends inside a literal length');
        literals = 0;
        for (let k = 0; k < bytes; k++) literals += input[ip + k]! * 2 ** (8 * k);
        ip += bytes;
      }
      literals += 1;
      if (literals > end - ip) throw corrupt(`${literals} literal bytes at input offset ${ip} run past the ${end}-byte block`);
      if (literals > length - op) throw corrupt(`output runs past the ${length} bytes the preamble claims`);
      out.set(input.subarray(ip, ip + literals), op);
      ip += literals;
      op += literals;
      continue;
    }

    let copyLength: number;
    let offset: number;
    if (kind === 1) {
      // Copy, 1-byte offset: length 4-11 in bits 2-4, offset's high 3 bits in bits 5-7.
      if (ip >= end) throw corrupt('input ends inside a copy offset');
      copyLength = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | input[ip++]!;
    } else if (kind === 2) {
      // Copy, 2-byte little-endian offset: length - 1 in the upper 6 bits.
      if (end - ip < 2) throw corrupt('input ends inside a copy offset');
      copyLength = (tag >>> 2) + 1;
      offset = input[ip]! | (input[ip + 1]! << 8);
      ip += 2;
    } else {
      // Copy, 4-byte little-endian offset: length - 1 in the upper 6 bits.
      if (end - ip < 4) throw corrupt('input ends inside a copy offset');
      copyLength = (tag >>> 2) + 1;
      offset = (input[ip]! | (input[ip + 1]! << 8) | (input[ip + 2]! << 16) | (input[ip + 3]! << 24)) >>> 0;
      ip += 4;
    }
    if (offset === 0) throw corrupt(`copy offset 0 before input offset ${ip}`);
    if (offset > op) throw corrupt(`copy offset ${offset} at output position ${op} reaches before the start of the output`);
    if (copyLength > length - op) throw corrupt(`output runs past the ${length} bytes the preamble claims`);

    let from = op - offset;
    if (offset >= copyLength) {
      out.copyWithin(op, from, from + copyLength);
      op += copyLength;
    } else {
      // Overlapping copy: it repeats bytes it is itself writing, so copy forward one at a time.
      const stop = op + copyLength;
      while (op < stop) out[op++] = out[from++]!;
    }
  }
  if (op !== length) throw corrupt(`it decodes to ${op} bytes, the preamble claims ${length}`);
  return out;
}

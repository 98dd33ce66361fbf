// The raw LZ4 block format (no frame header or checksum): what Pulsar's Java and
// C++ producers write, the output size coming from MessageMetadata.uncompressed_size.
// Every read and write is bounds-checked, and each sequence consumes at least one
// input byte, so hostile input ends in an Error, never a bad read or an endless loop.

function corrupt(detail: string): Error {
  return new Error(`LZ4 block is corrupt: ${detail}`);
}

/**
 * Decodes one raw LZ4 block into exactly `uncompressedSize` bytes. Throws an
 * Error when the block is truncated or malformed, or decodes to any other size.
 */
export function lz4BlockDecompress(input: Uint8Array, uncompressedSize: number): Buffer {
  if (!Number.isSafeInteger(uncompressedSize) || uncompressedSize < 0) {
    throw new Error(`LZ4 block: uncompressed size ${uncompressedSize} is not a byte count`);
  }
  // No input byte decodes to more than 255 output bytes (a match-length byte of
  // 255): a larger claim is corrupt metadata, refused before allocating it.
  if (uncompressedSize > input.length * 255) {
    throw corrupt(`${input.length} bytes cannot decode to the ${uncompressedSize} the metadata claims`);
  }
  // Even an empty input compresses to one token byte.
  if (input.length === 0) throw corrupt('the block is empty');

  // Safe uninitialised: the size check at the end rejects any output not fully written.
  const out = Buffer.allocUnsafe(uncompressedSize);
  const inEnd = input.length;
  let ip = 0;
  let op = 0;
  for (;;) {
    const token = input[ip++]!;

    let literals = token >>> 4;
    if (literals === 15) {
      let more: number;
      do {
        if (ip >= inEnd) throw corrupt('input ends inside a literal length');
        more = input[ip++]!;
        literals += more;
      } while (more === 255);
    }
    if (literals > inEnd - ip) throw corrupt(`${literals} literal bytes at input offset ${ip} run past the ${inEnd}-byte block`);
    if (literals > uncompressedSize - op) throw corrupt(`output runs past the ${uncompressedSize} bytes the metadata claims`);
    out.set(input.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;

    // The last sequence is literals only; the block ends right after them.
    if (ip === inEnd) break;

    if (inEnd - ip < 2) throw corrupt('input ends inside a match offset');
    const offset = input[ip]! | (input[ip + 1]! << 8);
    ip += 2;
    if (offset === 0) throw corrupt(`match offset 0 at input offset ${ip - 2}`);
    if (offset > op) throw corrupt(`match offset ${offset} at output position ${op} reaches before the start of the output`);

    let matchLength = (token & 15) + 4;
    if ((token & 15) === 15) {
      let more: number;
      do {
        if (ip >= inEnd) throw corrupt('input ends inside a match length');
        more = input[ip++]!;
        matchLength += more;
      } while (more === 255);
    }
    if (matchLength > uncompressedSize - op) throw corrupt(`output runs past the ${uncompressedSize} bytes the metadata claims`);

    let from = op - offset;
    if (offset >= matchLength) {
      out.copyWithin(op, from, from + matchLength);
      op += matchLength;
    } else {
      // Overlapping match: it repeats bytes it is itself writing, so copy forward one at a time.
      const stop = op + matchLength;
      while (op < stop) out[op++] = out[from++]!;
    }
  }
  if (op !== uncompressedSize) throw corrupt(`it decodes to ${op} bytes, the metadata claims ${uncompressedSize}`);
  return out;
}

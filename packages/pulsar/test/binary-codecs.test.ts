// The binary protocol's checksum and payload codecs. The compressed vectors are
// real output of the reference compressors (python-lz4's lz4.block.compress with
// store_size=False, python-snappy's snappy.compress, zstandard's
// ZstdCompressor().compress) over ENVELOPE below; the hand-written ones are the
// malformed inputs no compressor writes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import { crc32c } from '../src/binary/crc32c.js';
import { CompressionType, decompress, UnsupportedCompressionError } from '../src/binary/decompress.js';
import { lz4BlockDecompress } from '../src/binary/lz4.js';
import { snappyDecompress } from '../src/binary/snappy.js';

// 349 bytes: repeated keys and SKUs give matches; the 50 '=' an overlapping one (offset 1).
const ENVELOPE = Buffer.from(
  '{"bq":"1","id":"0191d3c2-7a4e-7c1a-9f00-5b2a3c4d5e6f","queue":"orders","type":"order.created",'
  + '"headers":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},'
  + '"payload":{"order":"A-1001","lines":[{"sku":"SKU-1","qty":1},{"sku":"SKU-2","qty":2},{"sku":"SKU-3","qty":3}],'
  + `"note":"${'='.repeat(50)}"}}`,
);

const LZ4 = Buffer.from(
  '9Tx7ImJxIjoiMSIsImlkIjoiMDE5MWQzYzItN2E0ZS03YzFhLTlmMDAtNWIyYTNjNGQ1ZTZmIiwicXVldWUiOiJvcmRlcnMiLCJ0eXAQAOEuY3JlYXRl'
  + 'ZCIsImhlYSEA8kc6eyJ0cmFjZXBhcmVudCI6IjAwLTRiZjkyZjM1NzdiMzRkYTZhM2NlOTI5ZDBlMGU0NzM2LTAwZjA2N2FhMGJhOTAyYjctMDEifSwi'
  + 'cGF5bG9hZCI6e38A+B0iOiJBLTEwMDEiLCJsaW5lcyI6W3sic2t1IjoiU0tVLTEiLCJxdHkiOjF9LBgAFDIYABoyGAAUMxgA3zN9XSwibm90ZSI6Ij0B'
  + 'ABxQPT0ifX0=',
  'base64',
);
const LZ4_EMPTY = Buffer.from([0x00]); // lz4.block.compress(b'', store_size=False)

const SNAPPY = Buffer.from(
  '3QLwTHsiYnEiOiIxIiwiaWQiOiIwMTkxZDNjMi03YTRlLTdjMWEtOWYwMC01YjJhM2M0ZDVlNmYiLCJxdWV1ZSI6Im9yZGVycyIsInR5cGUiDRA0LmNy'
  + 'ZWF0ZWQiLCJoZWEFITQ6eyJ0cmFjZXBhcmVudAFo8EAwLTRiZjkyZjM1NzdiMzRkYTZhM2NlOTI5ZDBlMGU0NzM2LTAwZjA2N2FhMGJhOTAyYjctMDEi'
  + 'fSwicGF5bG9hZAFUMG9yZGVyIjoiQS0xMDABxExsaW5lcyI6W3sic2t1IjoiU0tVLQEYHHF0eSI6MX0sLhgACDIiLAkYADI2GAAAMxEYHDN9XSwibm90'
  + 'AekAPcIBAAgifX0=',
  'base64',
);
const SNAPPY_EMPTY = Buffer.from([0x00]); // snappy.compress(b'')

const ZSTD = Buffer.from(
  'KLUv/WBdAF0GAPJNKh9QSasDocnz6TGaw2mq2p5dNI44Cpb7b7t8l09mZkINTfOAv3c9jJ+DZi2lTpPemZqgggGCvy8Jyg8G70obBcNuQgJ/l3wYGEZ+'
  + 'mqdFDap1DJe5FTt3UbEa6+2VTrmOiwuWbMHWiDWVm5ChrUZTRjoyrT88boSfy67cNAIgTP25QlvS4++99JL8fBZNSBYXK0ig3ekQp9hQM25IxSWTS/t3'
  + 'Wfh5+nsCfwgMAOLiA4IBKeC9gLkdY8c3FlhHcMWaa1gKUUKXKaYZ',
  'base64',
);
const ZSTD_EMPTY = Buffer.from('KLUv/SAAAQAA', 'base64');

const hasZstd = typeof (zlib as unknown as { zstdDecompressSync?: unknown }).zstdDecompressSync === 'function';

// Deterministic bytes for the checksum and mutation loops (xorshift32).
function prng(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

// Bit-at-a-time CRC-32C, straight from the definition, to check the sliced tables against.
function crc32cBitwise(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

// A corrupted block must end in an Error or decode to exactly the expected size; never hang or return garbage length.
function assertMutantsAreHandled(name: string, block: Buffer, decode: (b: Buffer) => Buffer, expectedSize: number, from = 0): void {
  const next = prng(0x9e3779b9);
  for (let round = 0; round < 3000; round++) {
    const mutant = Buffer.from(block);
    const flips = 1 + (next() % 4);
    for (let f = 0; f < flips; f++) mutant[from + (next() % (mutant.length - from))] = next() & 0xff;
    let out: Buffer;
    try {
      out = decode(mutant);
    } catch (error) {
      assert.ok(error instanceof Error, `${name} mutant ${round} threw a non-Error`);
      continue;
    }
    assert.equal(out.length, expectedSize, `${name} mutant ${round} decoded to the wrong size`);
  }
}

describe('crc32c', () => {
  it('gives the Castagnoli check value for "123456789"', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(new Uint8Array(0)), 0);
  });

  it('checks a range inside a larger buffer, and chains nothing between calls', () => {
    const framed = Buffer.concat([Buffer.from('xyz'), Buffer.from('123456789'), Buffer.from('trailing bytes')]);
    assert.equal(crc32c(framed, 3, 12), 0xe3069283);
    assert.equal(crc32c(framed, 3, 3), 0);
    assert.equal(crc32c(framed.subarray(3, 12)), 0xe3069283);
  });

  it('matches the bit-at-a-time definition at every length and alignment (the 8-byte steps and the tail)', () => {
    const next = prng(12345);
    const data = Uint8Array.from({ length: 300 }, () => next() & 0xff);
    for (let start = 0; start < 9; start++) {
      for (let end = start; end <= data.length; end += 7) {
        assert.equal(crc32c(data, start, end), crc32cBitwise(data.subarray(start, end)), `range [${start}, ${end})`);
      }
    }
    // RFC 3720's iSCSI vectors: 32 zero bytes, 32 0xFF bytes.
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
    assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  });

  it('refuses a range outside the buffer rather than checksumming missing bytes', () => {
    const data = Buffer.from('123456789');
    assert.throws(() => crc32c(data, 0, 10), RangeError);
    assert.throws(() => crc32c(data, -1), RangeError);
    assert.throws(() => crc32c(data, 5, 4), RangeError);
  });
});

describe('lz4BlockDecompress', () => {
  it('decodes the reference compressor\'s block, overlapping match included', () => {
    assert.deepEqual(lz4BlockDecompress(LZ4, ENVELOPE.length), ENVELOPE);
  });

  it('decodes the block of an empty input, and refuses a zero-byte block', () => {
    assert.equal(lz4BlockDecompress(LZ4_EMPTY, 0).length, 0);
    assert.throws(() => lz4BlockDecompress(new Uint8Array(0), 0), /LZ4 block is corrupt: the block is empty/);
  });

  it('copies an overlapping match byte by byte (offset 2, length 7: a repeating pair)', () => {
    // token: 2 literals, match 7 (3 + 4); "ab"; offset 2; then a final 1-literal sequence "c".
    const block = Uint8Array.from([0x23, 0x61, 0x62, 0x02, 0x00, 0x10, 0x63]);
    assert.equal(lz4BlockDecompress(block, 10).toString(), 'ababababac');
  });

  it('refuses every truncation of the block', () => {
    for (let cut = 0; cut < LZ4.length; cut++) {
      assert.throws(() => lz4BlockDecompress(LZ4.subarray(0, cut), ENVELOPE.length), /LZ4 block is corrupt/, `cut at ${cut}`);
    }
  });

  it('refuses an uncompressedSize that differs from what the block holds', () => {
    assert.throws(() => lz4BlockDecompress(LZ4, ENVELOPE.length - 1), /runs past the 348 bytes/);
    assert.throws(() => lz4BlockDecompress(LZ4, ENVELOPE.length + 1), /decodes to 349 bytes, the metadata claims 350/);
    assert.throws(() => lz4BlockDecompress(LZ4, LZ4.length * 255 + 1), /cannot decode to/);
    assert.throws(() => lz4BlockDecompress(LZ4, -1), /not a byte count/);
  });

  it('refuses a match offset of 0 or one that reaches before the output start', () => {
    // "a", then a 4-byte match at offset 2 (only 1 byte written) / at offset 0.
    assert.throws(() => lz4BlockDecompress(Uint8Array.from([0x10, 0x61, 0x02, 0x00, 0x00]), 5), /offset 2 at output position 1 reaches before the start/);
    assert.throws(() => lz4BlockDecompress(Uint8Array.from([0x10, 0x61, 0x00, 0x00, 0x00]), 5), /match offset 0/);
  });

  it('refuses lengths that run past the input: literals, and a length byte cut off', () => {
    assert.throws(() => lz4BlockDecompress(Uint8Array.from([0x50, 0x61, 0x62]), 5), /5 literal bytes at input offset 1 run past/);
    assert.throws(() => lz4BlockDecompress(Uint8Array.from([0xf0, 0xff, 0xff]), 600), /ends inside a literal length/);
  });

  it('ends every corrupted variant of the block in an Error or an exact-size output', () => {
    assertMutantsAreHandled('LZ4', LZ4, (b) => lz4BlockDecompress(b, ENVELOPE.length), ENVELOPE.length);
  });
});

describe('snappyDecompress', () => {
  it('decodes the reference compressor\'s block: long literal, 1- and 2-byte-offset copies, an overlapping copy', () => {
    assert.deepEqual(snappyDecompress(SNAPPY), ENVELOPE);
  });

  it('decodes the block of an empty input, and refuses a zero-byte block', () => {
    assert.equal(snappyDecompress(SNAPPY_EMPTY).length, 0);
    assert.throws(() => snappyDecompress(new Uint8Array(0)), /ends inside the length preamble/);
  });

  it('decodes a copy with a 4-byte offset', () => {
    // preamble 8; literal "abcd"; copy length 4 at offset 4 (4-byte form).
    const block = Uint8Array.from([0x08, 0x0c, 0x61, 0x62, 0x63, 0x64, 0x0f, 0x04, 0x00, 0x00, 0x00]);
    assert.equal(snappyDecompress(block).toString(), 'abcdabcd');
  });

  it('refuses every truncation of the block', () => {
    for (let cut = 0; cut < SNAPPY.length; cut++) {
      assert.throws(() => snappyDecompress(SNAPPY.subarray(0, cut)), /Snappy block is corrupt/, `cut at ${cut}`);
    }
  });

  it('refuses a preamble length that differs from what the elements produce', () => {
    const longer = Buffer.from(SNAPPY);
    longer[0] = 0xde; // 350
    assert.throws(() => snappyDecompress(longer), /decodes to 349 bytes, the preamble claims 350/);
    const shorter = Buffer.from(SNAPPY);
    shorter[0] = 0xdc; // 348
    assert.throws(() => snappyDecompress(shorter), /runs past the 348 bytes/);
    assert.throws(() => snappyDecompress(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x7f, 0x00])), /cannot decode to|does not fit 32 bits/);
    assert.throws(() => snappyDecompress(Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), /longer than 5 bytes/);
  });

  it('refuses a copy offset of 0 or one that reaches before the output start', () => {
    // preamble 5; literal "a"; 1-byte-offset copy of 4 at offset 2 / at offset 0.
    assert.throws(() => snappyDecompress(Uint8Array.from([0x05, 0x00, 0x61, 0x01, 0x02])), /offset 2 at output position 1 reaches before the start/);
    assert.throws(() => snappyDecompress(Uint8Array.from([0x05, 0x00, 0x61, 0x01, 0x00])), /copy offset 0/);
  });

  it('ends every corrupted variant of the block in an Error or an exact-size output', () => {
    // The body only (after the 2-byte preamble): a mutated preamble changes the size the block claims.
    assertMutantsAreHandled('Snappy', SNAPPY, snappyDecompress, ENVELOPE.length, 2);
  });
});

describe('decompress', () => {
  it('returns a NONE payload as it is, whatever the size says', () => {
    const data = Buffer.from('plain');
    assert.equal(decompress(CompressionType.NONE, data, 999), data);
  });

  it('decodes LZ4 and SNAPPY payloads, checking the size', () => {
    assert.deepEqual(decompress(CompressionType.LZ4, LZ4, ENVELOPE.length), ENVELOPE);
    assert.deepEqual(decompress(CompressionType.SNAPPY, SNAPPY, ENVELOPE.length), ENVELOPE);
    assert.throws(() => decompress(CompressionType.SNAPPY, SNAPPY, ENVELOPE.length + 1), /Snappy payload decodes to 349 bytes, the metadata claims 350/);
    assert.throws(() => decompress(CompressionType.LZ4, LZ4, ENVELOPE.length + 1), /LZ4 block is corrupt/);
  });

  it('round-trips ZLIB (zlib-wrapped deflate) and refuses a wrong size or a cut stream', () => {
    const compressed = zlib.deflateSync(ENVELOPE);
    assert.deepEqual(decompress(CompressionType.ZLIB, compressed, ENVELOPE.length), ENVELOPE);
    assert.equal(decompress(CompressionType.ZLIB, zlib.deflateSync(Buffer.alloc(0)), 0).length, 0);
    assert.throws(() => decompress(CompressionType.ZLIB, compressed, ENVELOPE.length - 1), /ZLIB payload is corrupt/);
    assert.throws(() => decompress(CompressionType.ZLIB, compressed, ENVELOPE.length + 1), /ZLIB payload decodes to 349 bytes, the metadata claims 350/);
    assert.throws(() => decompress(CompressionType.ZLIB, compressed.subarray(0, compressed.length - 1), ENVELOPE.length), /ZLIB payload is corrupt/);
    // Raw deflate (no zlib header) is not what Pulsar's producers write.
    assert.throws(() => decompress(CompressionType.ZLIB, zlib.deflateRawSync(ENVELOPE), ENVELOPE.length), /ZLIB payload is corrupt/);
  });

  it(hasZstd ? 'decodes ZSTD with zlib.zstdDecompressSync (this Node has it)' : 'refuses ZSTD as unsupported (this Node has no zlib.zstdDecompressSync)', () => {
    if (hasZstd) {
      assert.deepEqual(decompress(CompressionType.ZSTD, ZSTD, ENVELOPE.length), ENVELOPE);
      assert.equal(decompress(CompressionType.ZSTD, ZSTD_EMPTY, 0).length, 0);
      assert.throws(() => decompress(CompressionType.ZSTD, ZSTD, ENVELOPE.length - 1), /ZSTD payload is corrupt/);
      assert.throws(() => decompress(CompressionType.ZSTD, ZSTD, ENVELOPE.length + 1), /ZSTD payload decodes to 349 bytes/);
      // A cut frame: zlib throws on some Node lines, returns what it decoded (nothing) on others; refused either way.
      assert.throws(() => decompress(CompressionType.ZSTD, ZSTD.subarray(0, ZSTD.length - 1), ENVELOPE.length), /ZSTD payload (is corrupt|decodes to \d+ bytes, the metadata claims 349)/);
    } else {
      assert.throws(() => decompress(CompressionType.ZSTD, ZSTD, ENVELOPE.length), (error: unknown) => {
        assert.ok(error instanceof UnsupportedCompressionError, 'an UnsupportedCompressionError');
        assert.equal(error.compression, CompressionType.ZSTD);
        assert.match(error.message, /ZSTD.*no zlib\.zstdDecompressSync.*22\.15/);
        return true;
      });
    }
  });

  it('refuses an unknown compression code as unsupported', () => {
    assert.throws(() => decompress(9, Buffer.from('x'), 1), (error: unknown) => {
      assert.ok(error instanceof UnsupportedCompressionError, 'an UnsupportedCompressionError');
      assert.equal(error.compression, 9);
      assert.match(error.message, /unknown Pulsar compression type 9/);
      return true;
    });
  });
});

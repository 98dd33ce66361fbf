import * as zlib from 'node:zlib';
import { lz4BlockDecompress } from './lz4.js';
import { snappyDecompress } from './snappy.js';

/** Pulsar's `CompressionType` codes, as MessageMetadata.compression carries them. */
export const CompressionType = { NONE: 0, LZ4: 1, ZLIB: 2, ZSTD: 3, SNAPPY: 4 } as const;

/**
 * A payload compressed with a codec this process cannot decode: an unknown
 * code, or ZSTD on a Node without `zlib.zstdDecompressSync`. The payload is
 * not known to be corrupt, so the message is for a consumer that can decode it,
 * not for the dead-letter path.
 */
export class UnsupportedCompressionError extends Error {
  override readonly name = 'UnsupportedCompressionError';
  constructor(readonly compression: number, message: string) {
    super(message);
  }
}

type ZlibDecoder = (data: Uint8Array, options: { maxOutputLength: number }) => Buffer;

// zstdDecompressSync arrived in Node 22.15 / 23.8; Node 20's @types do not declare it.
const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: ZlibDecoder }).zstdDecompressSync;

// Runs a node:zlib decoder capped at the size the metadata claims, so a
// decompression bomb stops there, and names the codec in its errors (zlib's own,
// such as "Cannot create a Buffer larger than ...", do not).
function viaZlib(codec: string, decode: ZlibDecoder, data: Buffer, uncompressedSize: number): Buffer {
  try {
    // maxOutputLength must be at least 1; the exact-size check follows anyway.
    return decode(data, { maxOutputLength: Math.max(1, uncompressedSize) });
  } catch (error) {
    throw new Error(`${codec} payload is corrupt: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * Decodes a message payload compressed with Pulsar's codec `compression` (a
 * {@link CompressionType} code) into exactly `uncompressedSize` bytes
 * (MessageMetadata.uncompressed_size; not checked for NONE, whose `data` is
 * returned as is). Throws {@link UnsupportedCompressionError} for a codec this
 * Node cannot decode, and an Error for a payload that is corrupt or decodes to
 * any other size.
 */
export function decompress(compression: number, data: Buffer, uncompressedSize: number): Buffer {
  if (compression === CompressionType.NONE) return data;
  if (!Number.isSafeInteger(uncompressedSize) || uncompressedSize < 0) {
    throw new Error(`uncompressed size ${uncompressedSize} is not a byte count`);
  }
  let codec: string;
  let out: Buffer;
  switch (compression) {
    case CompressionType.LZ4:
      codec = 'LZ4';
      out = lz4BlockDecompress(data, uncompressedSize);
      break;
    case CompressionType.SNAPPY:
      codec = 'Snappy';
      out = snappyDecompress(data);
      break;
    case CompressionType.ZLIB:
      // Zlib-wrapped deflate: what Java's Deflater and C++'s zlib compress() write.
      codec = 'ZLIB';
      out = viaZlib(codec, zlib.inflateSync, data, uncompressedSize);
      break;
    case CompressionType.ZSTD:
      codec = 'ZSTD';
      if (!zstdDecompressSync) {
        throw new UnsupportedCompressionError(compression,
          `ZSTD-compressed message, but this Node (${process.version}) has no zlib.zstdDecompressSync `
          + '(it arrived in Node 22.15 / 23.8): the message stays on the subscription for a consumer on a newer Node');
      }
      out = viaZlib(codec, zstdDecompressSync, data, uncompressedSize);
      break;
    default:
      throw new UnsupportedCompressionError(compression, `unknown Pulsar compression type ${compression}`);
  }
  if (out.length !== uncompressedSize) {
    throw new Error(`${codec} payload decodes to ${out.length} bytes, the metadata claims ${uncompressedSize}`);
  }
  return out;
}

/**
 * The framing of Pulsar's binary protocol. Every frame is
 * `[total size][command size][BaseCommand]`, sizes 32-bit big-endian; a
 * message adds, after the command, an optional broker-entry block
 * (`0x0e02`, size, metadata), then `0x0e01`, a CRC-32C of the rest, the
 * metadata size, the MessageMetadata and the payload.
 */
import { crc32c } from './crc32c.js';

const MAGIC_CHECKSUM = 0x0e01;
const MAGIC_BROKER_ENTRY = 0x0e02;

/** No frame is larger: Pulsar's default message limit is 5 MB; a larger size means the stream is not Pulsar's. */
const MAX_FRAME = 64 * 1024 * 1024;

/** A frame as read: its command's bytes and, for a message, the metadata and payload (views, no copies). */
export interface Frame {
  readonly buf: Buffer;
  readonly commandStart: number;
  readonly commandEnd: number;
  readonly payload?: MessagePayload;
}

export interface MessagePayload {
  readonly metadata: Buffer;
  readonly data: Buffer;
  /** False when the frame's CRC-32C does not match what arrived. */
  readonly checksumOk: boolean;
}

/** The bytes of a command frame. */
export function commandFrame(command: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(8 + command.length);
  frame.writeUInt32BE(4 + command.length, 0);
  frame.writeUInt32BE(command.length, 4);
  command.copy(frame, 8);
  return frame;
}

/** Thrown for a stream that cannot be read as Pulsar frames; the connection is closed. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/** Cuts a TCP stream into frames. */
export class FrameReader {
  /** The chunks of a frame not complete yet, and how many bytes it needs in all (0: not known yet). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private needed = 0;

  /** Adds a chunk; calls `onFrame` for each frame completed. Throws a {@link FrameError} for a stream that is not Pulsar's. */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    let buf = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // A large frame comes in many chunks: they are joined once, when it is complete.
      if (this.needed > 0 && this.pendingBytes < this.needed) return;
      buf = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let pos = 0;
    while (buf.length - pos >= 4) {
      const total = buf.readUInt32BE(pos);
      if (total < 4 || total > MAX_FRAME) throw new FrameError(`a frame of ${total} bytes: not a Pulsar broker's stream`);
      if (buf.length - pos < 4 + total) break;
      onFrame(readFrame(buf, pos + 4, pos + 4 + total));
      pos += 4 + total;
    }
    if (pos < buf.length) {
      const rest = pos === 0 ? buf : buf.subarray(pos);
      this.pending = [rest];
      this.pendingBytes = rest.length;
      this.needed = rest.length >= 4 ? 4 + rest.readUInt32BE(0) : 0;
    }
  }
}

function readFrame(buf: Buffer, start: number, end: number): Frame {
  const commandSize = buf.readUInt32BE(start);
  const commandStart = start + 4;
  const commandEnd = commandStart + commandSize;
  if (commandEnd > end) throw new FrameError('a command runs past the end of its frame');
  if (commandEnd === end) return { buf, commandStart, commandEnd };
  let pos = commandEnd;
  if (end - pos >= 6 && buf.readUInt16BE(pos) === MAGIC_BROKER_ENTRY) {
    pos += 6 + buf.readUInt32BE(pos + 2);
  }
  let checksumOk = true;
  if (end - pos >= 6 && buf.readUInt16BE(pos) === MAGIC_CHECKSUM) {
    checksumOk = buf.readUInt32BE(pos + 2) === crc32c(buf, pos + 6, end);
    pos += 6;
  }
  if (end - pos < 4) throw new FrameError('a message frame without its metadata');
  const metadataSize = buf.readUInt32BE(pos);
  const metadataEnd = pos + 4 + metadataSize;
  if (metadataEnd > end) throw new FrameError('message metadata runs past the end of its frame');
  return {
    buf,
    commandStart,
    commandEnd,
    payload: { metadata: buf.subarray(pos + 4, metadataEnd), data: buf.subarray(metadataEnd, end), checksumOk },
  };
}

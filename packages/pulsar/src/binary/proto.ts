/**
 * The protocol-buffers wire format (proto2), as much of it as Pulsar's
 * commands use: varints, length-delimited fields (strings, bytes, nested
 * messages). Numbers are JavaScript numbers: Pulsar's 64-bit fields here
 * (ledger and entry ids, request and consumer ids, times) stay far below 2^53.
 */

/** Wire types. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/** Builds one message; nested messages are written into their own writer and added as bytes. */
export class ProtoWriter {
  private readonly bytes: number[] = [];
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  /** An unsigned (or non-negative) integer field. */
  uint(field: number, value: number): this {
    this.key(field, VARINT);
    this.varint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.uint(field, value ? 1 : 0);
  }

  string(field: number, value: string): this {
    return this.bytesField(field, Buffer.from(value, 'utf8'));
  }

  bytesField(field: number, value: Uint8Array): this {
    this.key(field, LENGTH_DELIMITED);
    this.varint(value.length);
    this.flush();
    this.chunks.push(value);
    this.length += value.length;
    return this;
  }

  /** A nested message written by `build`. */
  message(field: number, build: (writer: ProtoWriter) => void): this {
    const nested = new ProtoWriter();
    build(nested);
    return this.bytesField(field, nested.finish());
  }

  /** The encoded message. */
  finish(): Buffer {
    this.flush();
    return this.chunks.length === 1 ? Buffer.from(this.chunks[0] as Uint8Array) : Buffer.concat(this.chunks, this.length);
  }

  private key(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  private varint(value: number): void {
    // Nothing written here is negative (a default -1 is left out instead).
    if (!(value >= 0)) throw new RangeError(`cannot write ${value} as an unsigned varint`);
    while (value >= 0x80) {
      this.bytes.push((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    this.bytes.push(value);
  }

  private flush(): void {
    if (this.bytes.length === 0) return;
    const chunk = Uint8Array.from(this.bytes);
    this.chunks.push(chunk);
    this.length += chunk.length;
    this.bytes.length = 0;
  }
}

/** Thrown for bytes that are not a well-formed message. */
export class ProtoError extends Error {
  override readonly name = 'ProtoError';
}

/**
 * Reads a message field by field: `next()` moves to the next field (false at
 * the end), then one of `uint`, `bytes`, `string` reads its value or `skip`
 * passes over it. Unknown fields are skipped by the caller.
 */
export class ProtoReader {
  /** The current field's number and wire type. */
  field = 0;
  private wire = 0;
  private pos: number;

  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    private readonly end = buf.length,
  ) {
    this.pos = start;
  }

  next(): boolean {
    if (this.pos >= this.end) return false;
    const key = this.varint();
    this.field = Math.floor(key / 8);
    this.wire = key % 8;
    return true;
  }

  uint(): number {
    if (this.wire !== VARINT) throw new ProtoError(`field ${this.field} is not a varint`);
    return this.varint();
  }

  /** A signed int32: its low 32 bits (a negative one arrives sign-extended, as ten bytes). */
  int32(): number {
    if (this.wire !== VARINT) throw new ProtoError(`field ${this.field} is not a varint`);
    let result = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= this.end) throw new ProtoError('a varint runs past the end of its message');
      const byte = this.buf[this.pos++] as number;
      if (shift < 32) result |= (byte & 0x7f) << shift;
      if (byte < 0x80) return result | 0;
    }
    throw new ProtoError('a varint longer than ten bytes');
  }

  bool(): boolean {
    return this.uint() !== 0;
  }

  /** The field's bytes, a view into the message (no copy). */
  bytes(): Uint8Array {
    if (this.wire !== LENGTH_DELIMITED) throw new ProtoError(`field ${this.field} is not length-delimited`);
    const length = this.varint();
    const start = this.pos;
    this.pos += length;
    if (this.pos > this.end) throw new ProtoError('a length-delimited field runs past the end of its message');
    return this.buf.subarray(start, this.pos);
  }

  string(): string {
    const view = this.bytes();
    return Buffer.from(view.buffer, view.byteOffset, view.length).toString('utf8');
  }

  /** A reader over the current (length-delimited) field. */
  nested(): ProtoReader {
    const view = this.bytes();
    return new ProtoReader(view);
  }

  skip(): void {
    switch (this.wire) {
      case VARINT:
        this.varint();
        return;
      case FIXED64:
        this.pos += 8;
        break;
      case LENGTH_DELIMITED:
        this.bytes();
        return;
      case FIXED32:
        this.pos += 4;
        break;
      default:
        throw new ProtoError(`unsupported wire type ${this.wire} in field ${this.field}`);
    }
    if (this.pos > this.end) throw new ProtoError('a fixed-width field runs past the end of its message');
  }

  private varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtoError('a varint runs past the end of its message');
      const byte = this.buf[this.pos++] as number;
      // Past 2^53 a number loses precision; such values never occur in the fields read here.
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 0x80;
    }
    throw new ProtoError('a varint longer than ten bytes');
  }
}

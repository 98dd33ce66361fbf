/** One message of a stored batch entry: its own properties and payload. */
export interface BatchedMessage {
  readonly properties: Record<string, string>;
  readonly payload: Buffer;
}

/**
 * Splits the payload of a batch entry (a batching producer stores several
 * messages as one entry) into its `count` messages. Each is a 4-byte
 * big-endian size, a `SingleMessageMetadata` protobuf of that size (field 1:
 * the properties as key/value pairs; field 3: the payload size) and the
 * payload. The admin API's peek returns the entry uncompressed. A malformed
 * batch throws: a scan must not guess at message boundaries.
 */
export function splitBatch(entry: Buffer, count: number): BatchedMessage[] {
  const out: BatchedMessage[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > entry.length) throw new RangeError(`batch entry ends after ${i} of ${count} messages`);
    const size = entry.readUInt32BE(at);
    at += 4;
    const { properties, payloadSize } = singleMetadata(entry.subarray(at, at + size));
    at += size;
    if (at + payloadSize > entry.length) throw new RangeError(`batch entry message ${i} runs past the entry`);
    out.push({ properties, payload: entry.subarray(at, at + payloadSize) });
    at += payloadSize;
  }
  return out;
}

function singleMetadata(bytes: Buffer): { properties: Record<string, string>; payloadSize: number } {
  const properties: Record<string, string> = {};
  let payloadSize: number | undefined;
  for (const field of fields(bytes)) {
    if (field.number === 1 && field.bytes !== undefined) {
      let key = '';
      let value = '';
      for (const part of fields(field.bytes)) {
        if (part.number === 1 && part.bytes !== undefined) key = part.bytes.toString('utf8');
        if (part.number === 2 && part.bytes !== undefined) value = part.bytes.toString('utf8');
      }
      properties[key] = value;
    } else if (field.number === 3 && field.varint !== undefined) {
      payloadSize = field.varint;
    }
  }
  if (payloadSize === undefined) throw new RangeError('a batched message without payload_size');
  return { properties, payloadSize };
}

interface Field {
  readonly number: number;
  readonly varint?: number;
  readonly bytes?: Buffer;
}

/** The fields of a protobuf message (varints up to 2^53, length-delimited, fixed 32/64 skipped). */
function* fields(bytes: Buffer): Generator<Field> {
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 1; ; shift *= 128) {
      if (at >= bytes.length) throw new RangeError('truncated varint');
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    switch (key % 8) {
      case 0:
        yield { number, varint: varint() };
        break;
      case 1:
        at += 8;
        break;
      case 2: {
        const length = varint();
        yield { number, bytes: bytes.subarray(at, at + length) };
        at += length;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        throw new RangeError(`protobuf wire type ${key % 8} is not used by SingleMessageMetadata`);
    }
  }
}

/**
 * One stored entry as a consumer receives it: MessageMetadata and payload,
 * uncompressed, and cut into its messages when a producer batched them
 * (each behind a SingleMessageMetadata).
 */
import { decompress } from './decompress.js';
import { ProtoReader } from './proto.js';

/** One message of an entry. */
export interface EntryMessage {
  readonly body: Buffer;
  readonly properties: Record<string, string>;
  /** When the broker stored the entry (ms since the epoch). */
  readonly publishTime: number;
}

/** No message is larger uncompressed: a claim beyond it is refused before anything is allocated. */
const MAX_UNCOMPRESSED = 64 * 1024 * 1024;

/** An entry the binding cannot read: it stays on the subscription (see the consumer). */
export class UnreadableEntryError extends Error {
  override readonly name = 'UnreadableEntryError';
  constructor(
    message: string,
    /** How many messages the broker counted for it (a batch's size, when its metadata says; else 1). */
    readonly permits = 1,
  ) {
    super(message);
  }
}

interface Metadata {
  publishTime: number;
  properties: Record<string, string>;
  compression: number;
  uncompressedSize: number;
  /** Undefined when the producer did not batch (no num_messages_in_batch field). */
  batchSize?: number;
  encrypted: boolean;
  chunked: boolean;
}

/** An entry's messages; `batched` when a producer's batch carried them (each then has its own batch index). */
export interface Entry {
  readonly batched: boolean;
  readonly messages: EntryMessage[];
}

/**
 * Reads an entry's messages; throws an {@link UnreadableEntryError} for one it
 * cannot read, or whose frame's checksum did not match (`checksumOk` false).
 */
export function readEntry(metadata: Buffer, data: Buffer, checksumOk = true): Entry {
  let meta: Metadata;
  let payload: Buffer;
  try {
    meta = readMetadata(metadata);
  } catch (error) {
    throw new UnreadableEntryError(`message metadata that does not decode${checksumOk ? '' : ' (nor does its checksum match)'}: ${(error as Error).message}`);
  }
  const permits = Math.max(1, meta.batchSize ?? 1);
  if (!checksumOk) throw new UnreadableEntryError('its checksum does not match its bytes', permits);
  if (meta.encrypted) throw new UnreadableEntryError('an encrypted message (the binding holds no decryption keys)', permits);
  if (meta.chunked) throw new UnreadableEntryError('a chunked message (the binding does not reassemble chunks)', permits);
  if (meta.uncompressedSize > MAX_UNCOMPRESSED) {
    throw new UnreadableEntryError(`a message that claims ${meta.uncompressedSize} bytes uncompressed (at most ${MAX_UNCOMPRESSED} are read)`, permits);
  }
  try {
    payload = decompress(meta.compression, data, meta.uncompressedSize);
  } catch (error) {
    throw new UnreadableEntryError((error as Error).message, permits);
  }
  const { publishTime } = meta;
  if (meta.batchSize === undefined) {
    return { batched: false, messages: [{ body: payload, properties: meta.properties, publishTime }] };
  }
  try {
    return { batched: true, messages: readBatch(payload, meta.batchSize, publishTime) };
  } catch (error) {
    throw new UnreadableEntryError(`a batch that does not decode: ${(error as Error).message}`, permits);
  }
}

function readMetadata(buf: Buffer): Metadata {
  const r = new ProtoReader(buf);
  const meta: Metadata = { publishTime: 0, properties: {}, compression: 0, uncompressedSize: 0, encrypted: false, chunked: false };
  while (r.next()) {
    switch (r.field) {
      case 3: meta.publishTime = r.uint(); break;
      case 4: readKeyValue(r.nested(), meta.properties); break;
      case 8: meta.compression = r.uint(); break;
      case 9: meta.uncompressedSize = r.uint(); break;
      case 11: meta.batchSize = r.int32(); break;
      case 13: meta.encrypted = true; r.skip(); break;
      case 27: meta.chunked = r.int32() > 1; break;
      default: r.skip();
    }
  }
  return meta;
}

function readKeyValue(r: ProtoReader, into: Record<string, string>): void {
  let key: string | undefined;
  let value = '';
  while (r.next()) {
    if (r.field === 1) key = r.string();
    else if (r.field === 2) value = r.string();
    else r.skip();
  }
  if (key !== undefined) into[key] = value;
}

function readBatch(payload: Buffer, count: number, publishTime: number): EntryMessage[] {
  const messages: EntryMessage[] = [];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    if (payload.length - pos < 4) throw new Error(`message ${i} of ${count} is missing`);
    const size = payload.readUInt32BE(pos);
    const metaEnd = pos + 4 + size;
    if (metaEnd > payload.length) throw new Error(`message ${i} of ${count}: its metadata runs past the batch`);
    const r = new ProtoReader(payload, pos + 4, metaEnd);
    const properties: Record<string, string> = {};
    let payloadSize = -1;
    while (r.next()) {
      switch (r.field) {
        case 1: readKeyValue(r.nested(), properties); break;
        case 3: payloadSize = r.int32(); break;
        default: r.skip();
      }
    }
    if (payloadSize < 0 || metaEnd + payloadSize > payload.length) throw new Error(`message ${i} of ${count}: its payload runs past the batch`);
    const body = payload.subarray(metaEnd, metaEnd + payloadSize);
    messages.push({ body, properties, publishTime });
    pos = metaEnd + payloadSize;
  }
  return messages;
}

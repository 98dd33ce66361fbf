// AMQP 1.0 message bytes as the stand-in stores and re-sends them. A message
// is kept as its encoded sections so that every value a client sent (the data
// section, an application property typed double or long, …) reaches the
// receiver with the exact AMQP type it was sent with; only the header and the
// message annotations, which the broker owns, are decoded and rewritten.
import { randomBytes } from 'node:crypto';
import rhea from 'rhea';

const types: any = (rhea as any).types;
const messageCodec: any = (rhea as any).message;

/** Section descriptor codes (AMQP 1.0 §3.2). */
export const SECTION = {
  header: 0x70,
  deliveryAnnotations: 0x71,
  messageAnnotations: 0x72,
  properties: 0x73,
  applicationProperties: 0x74,
  data: 0x75,
  sequence: 0x76,
  value: 0x77,
  footer: 0x78,
} as const;

/** The message format of a Service Bus batch: every data section is one encoded message. */
export const BATCH_FORMAT = 0x80013700;

/** One encoded section: its descriptor code and its bytes, descriptor included. */
export interface Section {
  readonly code: number;
  readonly bytes: Buffer;
}

/** A map section's entries as rhea typed values, in their order. */
export type Entries = Array<[any, any]>;

/** Splits encoded message bytes into their sections without decoding the values. */
export function splitSections(bytes: Buffer): Section[] {
  const reader = new types.Reader(bytes);
  const out: Section[] = [];
  while (reader.remaining()) {
    const start = reader.position;
    const value = reader.read();
    const code = descriptorCode(value?.descriptor);
    if (code === undefined) throw new Error('a message section without a descriptor');
    out.push({ code, bytes: bytes.subarray(start, reader.position) });
  }
  return out;
}

function descriptorCode(descriptor: any): number | undefined {
  if (descriptor === undefined || descriptor === null) return undefined;
  const value = typeof descriptor === 'object' && 'value' in descriptor ? descriptor.value : descriptor;
  return typeof value === 'number' ? value : Number(value);
}

/** The encoded messages inside a batch (the binary of each data section). */
export function unbatch(bytes: Buffer): Buffer[] {
  return splitSections(bytes)
    .filter((section) => section.code === SECTION.data)
    .map((section) => sectionValue(section) as Buffer);
}

/** What a section carries: a data section's bytes, a map's flat key/value list (typed), … */
export function sectionValue(section: Section): any {
  return new types.Reader(section.bytes).read().value;
}

/** The entries of a map section (message or application properties), typed. */
export function mapEntries(section: Section | undefined): Entries {
  if (section === undefined) return [];
  const flat: any[] = sectionValue(section) ?? [];
  const out: Entries = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** Encodes a map section from typed entries. */
export function mapSection(code: number, entries: Entries): Section {
  const flat: any[] = [];
  for (const [key, value] of entries) flat.push(key, value);
  const writer = new types.Writer();
  writer.write(types.described_nc(types.wrap_ulong(code), types.Map32(flat)));
  return { code, bytes: Buffer.from(writer.toBuffer()) };
}

/** Sets `key` in typed entries (replacing an entry of the same name, else appending). */
export function setEntry(entries: Entries, key: any, value: any): void {
  const name = String(key.value);
  const at = entries.findIndex(([k]) => String(k?.value) === name);
  if (at >= 0) entries[at] = [entries[at]![0], value];
  else entries.push([key, value]);
}

/** The value of an entry by name (unwrapped), or undefined. */
export function entryValue(entries: Entries, name: string): unknown {
  const found = entries.find(([k]) => String(k?.value) === name);
  return found === undefined ? undefined : types.unwrap(found[1]);
}

/** The header fields a sender may set (durable, priority, ttl), kept from its header section. */
export interface HeaderFields {
  durable?: boolean;
  priority?: number;
  ttl?: number;
}

export function headerFields(section: Section | undefined): HeaderFields {
  if (section === undefined) return {};
  const decoded = messageCodec.decode(section.bytes);
  const out: HeaderFields = {};
  if (decoded.durable !== undefined) out.durable = decoded.durable;
  if (decoded.priority !== undefined) out.priority = decoded.priority;
  if (decoded.ttl !== undefined) out.ttl = decoded.ttl;
  return out;
}

/** The header section as the broker sends it, with its delivery-count. */
export function headerSection(fields: HeaderFields, deliveryCount: number): Section {
  const header = messageCodec.header({ ...fields, first_acquirer: deliveryCount === 0, delivery_count: deliveryCount });
  const writer = new types.Writer();
  writer.write(header.described());
  return { code: SECTION.header, bytes: Buffer.from(writer.toBuffer()) };
}

/** Concatenates sections in the order AMQP requires. */
export function encodeSections(sections: readonly Section[]): Buffer {
  return Buffer.concat([...sections].sort((a, b) => order(a.code) - order(b.code)).map((s) => s.bytes));
}

function order(code: number): number {
  // Body sections (data, sequence, value) keep their relative order: the sort is stable.
  return code >= SECTION.data && code <= SECTION.value ? SECTION.data : code;
}

/** A fresh lock token (RFC 4122 byte order, as `$management` requests carry it). */
export function newLockToken(): Buffer {
  const bytes = randomBytes(16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return bytes;
}

/**
 * The delivery tag of a lock token: the GUID in .NET's byte layout (the first
 * three groups little-endian), which both SDKs reorder back into the token.
 */
export function lockTokenTag(token: Buffer): Buffer {
  const tag = Buffer.from(token);
  tag.writeUInt32LE(token.readUInt32BE(0), 0);
  tag.writeUInt16LE(token.readUInt16BE(4), 4);
  tag.writeUInt16LE(token.readUInt16BE(6), 6);
  return tag;
}

/** A lock token as text, for maps and log lines. */
export function tokenText(token: Buffer): string {
  const hex = token.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export { types, messageCodec };

/**
 * Service Bus gives a message without a message-id one of its own (32 hex
 * digits); the SDKs rely on it (lock renewal keys on it).
 */
export function withMessageId(sections: Section[]): Section[] {
  const at = sections.findIndex((s) => s.code === SECTION.properties);
  const fields: any[] = at >= 0 ? [...(sectionValue(sections[at]!) ?? [])] : [];
  const id = fields[0];
  if (id !== undefined && id !== null && id.value !== null && id.value !== undefined) return sections;
  fields[0] = types.wrap_string(randomBytes(16).toString('hex'));
  for (let i = 0; i < fields.length; i++) fields[i] ??= types.Null();
  const writer = new types.Writer();
  writer.write(types.described_nc(types.wrap_ulong(SECTION.properties), types.List32(fields)));
  const section = { code: SECTION.properties, bytes: Buffer.from(writer.toBuffer()) };
  return at >= 0 ? sections.map((s, i) => (i === at ? section : s)) : [...sections, section];
}

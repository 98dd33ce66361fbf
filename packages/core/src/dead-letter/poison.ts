import { Buffer } from 'node:buffer';
import { encodeDeadLetter } from '../envelope/encode.js';
import { asBuffer, decodeUtf8Strict } from '../envelope/utf8.js';
import { reemit } from '../reemit/edit.js';
import { deadLetterBlock } from './block.js';

/** Options of {@link poisonRecord}. */
export interface PoisonRecordOptions {
  /** The queue the body was consumed from. */
  originalQueue: string;
  /** The counted attempt of this delivery (broker count + 1, or 1 when the broker has none). */
  attempts: number;
  /** Why it is poison, e.g. "body is not valid UTF-8" (never the body itself). */
  error?: string | null;
  exception?: string | null;
  /** Dead-letter time in epoch ms; default now. */
  failedAt?: number;
}

/**
 * The poison record for a body that does not decode into an accepted
 * envelope (`reason: "poison"`), keeping the original:
 * - a JSON object body: every original member, byte for byte and in order,
 *   plus a `dead_letter` member (replaced in place when present);
 * - any other valid UTF-8 (not JSON, an array, a scalar, empty):
 *   `{"raw":"<the body>","dead_letter":{…}}`;
 * - bytes that are not valid UTF-8:
 *   `{"raw":"<base64>","raw_encoding":"base64","dead_letter":{…}}`.
 *
 * A string gives a string; bytes give a Buffer.
 */
export function poisonRecord(raw: string, options: PoisonRecordOptions): string;
export function poisonRecord(raw: Uint8Array, options: PoisonRecordOptions): Buffer;
export function poisonRecord(raw: string | Uint8Array, options: PoisonRecordOptions): string | Buffer;
export function poisonRecord(raw: string | Uint8Array, options: PoisonRecordOptions): string | Buffer {
  const block = deadLetterBlock({ reason: 'poison', ...options });
  const text = typeof raw === 'string' ? raw : decodeUtf8Strict(raw);
  if (text === null) {
    const base64 = asBuffer(raw as Uint8Array).toString('base64');
    return Buffer.from(`{"raw":"${base64}","raw_encoding":"base64","dead_letter":${encodeDeadLetter(block)}}`, 'utf8');
  }
  if (isJsonObject(text)) return reemit(raw, { deadLetter: block });
  const record = `{"raw":${JSON.stringify(text)},"dead_letter":${encodeDeadLetter(block)}}`;
  return typeof raw === 'string' ? record : Buffer.from(record, 'utf8');
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

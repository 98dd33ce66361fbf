import { asBuffer } from '../envelope/utf8.js';

/**
 * The native schema-version value of a delivery, normalised for the version
 * gate: trimmed text, or undefined when the metadata is absent, null or blank
 * (then the body is decoded normally). Bytes are read as UTF-8 (Kafka), numbers
 * and BigInts print as themselves (ASB's AMQP-typed integer 1 gives "1"; JS
 * cannot tell a float 1.0 from 1, which the spec allows). The runtime gates
 * every value other than "1".
 */
export function nativeSchemaVersion(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value instanceof Uint8Array) text = asBuffer(value).toString('utf8');
  else if (typeof value === 'number' || typeof value === 'bigint') text = String(value);
  else if (value === null || value === undefined) return undefined;
  else text = String(value);
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed;
}

import { asBuffer } from '../envelope/utf8.js';

/**
 * Blank means empty or only ASCII whitespace (space, \t, \n, \v, \f, \r), the
 * set every SDK uses; not `String.prototype.trim`, which also strips U+00A0,
 * U+2028, U+3000 and the rest of Unicode's white space.
 */
const BLANK = /^[ \t\n\v\f\r]*$/;

/**
 * The native schema-version value of a delivery as the version gate reads it:
 * the value's text, never trimmed, or undefined when the metadata is absent,
 * null or blank (then the body is decoded normally). Bytes are read as UTF-8
 * (Kafka); numbers and BigInts print as themselves, so Service Bus's AMQP-typed
 * integer 1 gives "1" (JavaScript cannot tell a float 1.0 from 1, which the
 * spec allows) and 1.5 gives "1.5". Every binding hands its raw value here;
 * {@link isVersionGated} then decides.
 */
export function nativeSchemaVersion(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value instanceof Uint8Array) text = asBuffer(value).toString('utf8');
  else if (value === null || value === undefined) return undefined;
  else text = String(value);
  return BLANK.test(text) ? undefined : text;
}

/**
 * The version gate (seed 000): a delivery whose native schema version is
 * present and not blank is gated unless it is exactly "1" — " 1 ", "01", "1.0"
 * and "2" are gated. Takes {@link nativeSchemaVersion}'s result (a raw string
 * is read the same way).
 */
export function isVersionGated(version: string | undefined): version is string {
  return version !== undefined && version !== '1' && !BLANK.test(version);
}

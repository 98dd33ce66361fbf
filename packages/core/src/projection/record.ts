import { decodeEnvelope } from '../envelope/decode.js';
import { acceptsEnvelope } from '../envelope/identity.js';
import type { EnvelopeProjection } from '../transport/transport.js';
import { envelopeProjection } from './source.js';

/**
 * No field at all: what a body that is not an accepted envelope projects.
 * Every projection function leaves each slot out, keeping only its constants
 * (RabbitMQ's `app_id`, content type, …).
 */
export const NO_PROJECTION: EnvelopeProjection = Object.freeze({
  urn: '',
  traceId: '',
  messageId: '',
  schemaVersion: Number.NaN,
  lang: '',
  createdAt: Number.NaN,
  attempts: Number.NaN,
});

/**
 * The projection a record a binding re-emits must carry (a retry copy, a
 * failed / unknown-URN / poison dead-letter record): what the record's own
 * bytes say, never the metadata the delivery arrived with. Native metadata is
 * a projection of the body (seed 000), so a copy whose body changed (the
 * counted `attempts`, a `dead_letter` block) is projected anew. An accepted
 * envelope gives its fields; anything else (a poison record, a body that is
 * not an envelope, a null value) gives {@link NO_PROJECTION}. Not for a
 * version-gated record: its body must not be decoded.
 */
export function recordProjection(record: Uint8Array | null): EnvelopeProjection {
  if (record === null) return NO_PROJECTION;
  // Decode warnings were reported when the delivery was classified; a copy does not repeat them.
  const decoded = decodeEnvelope(record, ignoreWarnings);
  return acceptsEnvelope(decoded) ? envelopeProjection(decoded) : NO_PROJECTION;
}

function ignoreWarnings(): void {}

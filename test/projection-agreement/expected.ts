import { acceptsEnvelope, decodeEnvelope } from '@babelqueue/core';
import { envelopeProjection, type EnvelopeProjection } from '@babelqueue/core/binding';

/** No field: what a body that is not an accepted envelope projects. */
const NOTHING: EnvelopeProjection = {
  urn: '',
  traceId: '',
  messageId: '',
  schemaVersion: Number.NaN,
  lang: '',
  createdAt: Number.NaN,
  attempts: Number.NaN,
};

/**
 * What a record's body says, as the fields a projection is built from: its
 * own fields when it decodes to an accepted envelope, none otherwise (a
 * poison record, a raw body). Decoded here with the codec, independently of
 * how a binding rebuilds its metadata.
 */
export function bodySays(body: Buffer | null): EnvelopeProjection {
  if (body === null) return NOTHING;
  const decoded = decodeEnvelope(body, () => undefined);
  return acceptsEnvelope(decoded) ? envelopeProjection(decoded) : NOTHING;
}

/** `record` without `keys`. */
export function without(record: Record<string, unknown>, ...keys: (string | undefined)[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
}

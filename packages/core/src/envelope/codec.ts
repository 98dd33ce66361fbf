import { decodeEnvelope, FORBIDDEN_META_KEYS, FORBIDDEN_TOP_LEVEL_KEYS } from './decode.js';
import { encodeEnvelope } from './encode.js';
import { acceptsEnvelope, resolveUrn } from './identity.js';
import { makeEnvelope } from './make.js';
import { setWarningHandler } from './warnings.js';

/**
 * The canonical envelope codec, named like the other BabelQueue SDKs'
 * `EnvelopeCodec`.
 *
 * @example
 * ```ts
 * const env = EnvelopeCodec.make('urn:babel:orders:created', { order_id: 1042 }, { queue: 'orders' });
 * const body = EnvelopeCodec.encode(env);          // compact canonical JSON
 * const back = EnvelopeCodec.decode(body);         // tolerant
 * if (EnvelopeCodec.accepts(back)) console.log(EnvelopeCodec.urn(back));
 * ```
 */
export const EnvelopeCodec = {
  /** See {@link makeEnvelope}. */
  make: makeEnvelope,
  /** See {@link encodeEnvelope}. */
  encode: encodeEnvelope,
  /** See {@link decodeEnvelope}. */
  decode: decodeEnvelope,
  /** See {@link setWarningHandler}. */
  setWarningHandler,
  /** See {@link resolveUrn}. */
  urn: resolveUrn,
  /** See {@link acceptsEnvelope}. */
  accepts: acceptsEnvelope,
  /** Top-level keys decode drops with a warning. */
  FORBIDDEN_TOP_LEVEL_KEYS,
  /** `meta` keys decode drops with a warning. */
  FORBIDDEN_META_KEYS,
} as const;

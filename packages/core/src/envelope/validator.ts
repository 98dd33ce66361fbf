import { InvalidEnvelopeError } from './errors.js';
import { isObject, resolveUrn } from './identity.js';
import type { Envelope } from './types.js';

const REASON_MISSING_URN = 'missing_urn';
const REASON_MISSING_META = 'missing_meta';
const REASON_UNSUPPORTED_SCHEMA_VERSION = 'unsupported_schema_version';
const REASON_INVALID_DATA = 'invalid_data';
const REASON_MISSING_TRACE_ID = 'missing_trace_id';
const REASON_INVALID_ATTEMPTS = 'invalid_attempts';

/** One of the `EnvelopeValidator.REASON_*` strings. */
export type EnvelopeRejectionReason =
  | typeof REASON_MISSING_URN
  | typeof REASON_MISSING_META
  | typeof REASON_UNSUPPORTED_SCHEMA_VERSION
  | typeof REASON_INVALID_DATA
  | typeof REASON_MISSING_TRACE_ID
  | typeof REASON_INVALID_ATTEMPTS;

function isUnsupportedSchemaVersion(env: unknown): boolean {
  return !isObject(env) || !isObject(env.meta) || env.meta.schema_version !== 1;
}

/**
 * The consumer-side rules with a reason, first failure wins, in this order:
 * URN, meta, schema version, data, trace id, attempts. Null when valid.
 */
function check(env: unknown): EnvelopeRejectionReason | null {
  if (resolveUrn(env) === null) return REASON_MISSING_URN;
  const obj = env as Record<string, unknown>;
  if (!isObject(obj.meta)) return REASON_MISSING_META;
  if (obj.meta.schema_version !== 1) return REASON_UNSUPPORTED_SCHEMA_VERSION;
  if (!isObject(obj.data)) return REASON_INVALID_DATA;
  if (typeof obj.trace_id !== 'string' || obj.trace_id.trim() === '') return REASON_MISSING_TRACE_ID;
  if (!Number.isInteger(obj.attempts)) return REASON_INVALID_ATTEMPTS;
  return null;
}

/** The shape of {@link EnvelopeValidator} (declared so `validate` can be an assertion). */
export interface EnvelopeValidatorApi {
  readonly REASON_MISSING_URN: typeof REASON_MISSING_URN;
  readonly REASON_MISSING_META: typeof REASON_MISSING_META;
  readonly REASON_UNSUPPORTED_SCHEMA_VERSION: typeof REASON_UNSUPPORTED_SCHEMA_VERSION;
  readonly REASON_INVALID_DATA: typeof REASON_INVALID_DATA;
  readonly REASON_MISSING_TRACE_ID: typeof REASON_MISSING_TRACE_ID;
  readonly REASON_INVALID_ATTEMPTS: typeof REASON_INVALID_ATTEMPTS;
  /** The first failed rule's reason, or null when the envelope is valid. */
  check(env: unknown): EnvelopeRejectionReason | null;
  /** True when `check` finds nothing. */
  isValid(env: unknown): env is Envelope;
  /** Throws {@link InvalidEnvelopeError} (reason + envelope) when `check` finds something. */
  validate(env: unknown): asserts env is Envelope;
  /** True when `meta` is missing or `meta.schema_version` is not 1. */
  isUnsupportedSchemaVersion(env: unknown): boolean;
}

/**
 * Consumer-side validation with a reason, so a message this service does not
 * understand can be quarantined instead of dropped.
 *
 * @example
 * ```ts
 * const reason = EnvelopeValidator.check(env);
 * if (reason === EnvelopeValidator.REASON_UNSUPPORTED_SCHEMA_VERSION) quarantine(env);
 * ```
 */
export const EnvelopeValidator: EnvelopeValidatorApi = {
  REASON_MISSING_URN,
  REASON_MISSING_META,
  REASON_UNSUPPORTED_SCHEMA_VERSION,
  REASON_INVALID_DATA,
  REASON_MISSING_TRACE_ID,
  REASON_INVALID_ATTEMPTS,
  check,
  isValid(env: unknown): env is Envelope {
    return check(env) === null;
  },
  validate(env: unknown): asserts env is Envelope {
    const reason = check(env);
    if (reason !== null) throw new InvalidEnvelopeError(reason, env);
  },
  isUnsupportedSchemaVersion,
};

import { createHash } from 'node:crypto';

const HEX32 = /^[0-9a-f]{32}$/i;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * The OTel trace id (32 lowercase hex) an envelope `trace_id` maps to, the same
 * in every SDK: a UUID (any 32 hex digits once the hyphens are gone) is its own
 * digits; anything else, or the all-zero UUID, is the first 32 hex digits of
 * SHA-256(trace_id), never all zero.
 */
export function otelTraceIdOf(traceId: string): string {
  const digits = traceId.replaceAll('-', '');
  if (HEX32.test(digits) && digits !== ZERO_TRACE) return digits.toLowerCase();
  const hashed = sha256Hex(traceId).slice(0, 32);
  return hashed === ZERO_TRACE ? `${'0'.repeat(31)}1` : hashed;
}

/** The UUID form (8-4-4-4-12) of an OTel trace id: what a traced producer stamps as `trace_id`. */
export function uuidOfTraceId(otelTraceId: string): string {
  const h = otelTraceId.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The span id of the synthetic remote parent a consumer span hangs under when
 * no `traceparent` arrived: the first 16 hex digits of
 * SHA-256("babelqueue-span:" + trace_id), `0000000000000001` if that is zero.
 */
export function syntheticParentSpanId(traceId: string): string {
  const hashed = sha256Hex(`babelqueue-span:${traceId}`).slice(0, 16);
  return hashed === ZERO_SPAN ? `${'0'.repeat(15)}1` : hashed;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

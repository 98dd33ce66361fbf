import type { Envelope } from './types.js';

/**
 * The message URN: `job` when it is a string with non-whitespace content,
 * else the inbound alias `urn` under the same rule; trimmed. Null when the
 * value has no valid identity (poison, never the unknown-URN path).
 */
export function resolveUrn(env: unknown): string | null {
  if (env === null || typeof env !== 'object') return null;
  const { job, urn } = env as { job?: unknown; urn?: unknown };
  if (typeof job === 'string') {
    const trimmed = job.trim();
    if (trimmed !== '') return trimmed;
  }
  if (typeof urn === 'string') {
    const trimmed = urn.trim();
    if (trimmed !== '') return trimmed;
  }
  return null;
}

/** True when `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The consumer-side rules (FACTS §2): a URN resolves, `meta` is an object with
 * `schema_version` 1, `data` is an object, `attempts` is an integer and
 * `trace_id` is a non-blank string. Nothing else is checked.
 */
export function acceptsEnvelope(env: unknown): env is Envelope {
  if (!isObject(env) || resolveUrn(env) === null) return false;
  const { meta, data, attempts, trace_id: traceId } = env;
  return (
    isObject(meta) &&
    meta.schema_version === 1 &&
    isObject(data) &&
    Number.isInteger(attempts) &&
    typeof traceId === 'string' &&
    traceId.trim() !== ''
  );
}

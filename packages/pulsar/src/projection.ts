import { projectPulsar, type EnvelopeProjection } from '@babelqueue/core';

/** The `bq-` message property names of the Pulsar binding (FACTS §4; all values strings). */
export const PulsarProperty = {
  JOB: 'bq-job',
  TRACE_ID: 'bq-trace-id',
  MESSAGE_ID: 'bq-message-id',
  SCHEMA_VERSION: 'bq-schema-version',
  SOURCE_LANG: 'bq-source-lang',
  /** Mirrors the body's `attempts`; counted on every retry copy. */
  ATTEMPTS: 'bq-attempts',
  /** The delay in ms, only on a delayed publish or retry (mirrors `deliverAfterMs`). */
  DELAY: 'bq-delay',
} as const;

/**
 * The properties of a published envelope: the contract projection, the riders
 * (a contract key always wins, blank ones are dropped) and, on a delayed
 * publish, `bq-delay` in ms.
 */
export function publishProperties(
  projection: EnvelopeProjection,
  riders: Readonly<Record<string, string>> | undefined,
  delayMs: number,
): Record<string, string> {
  const properties = projectPulsar(projection, riders);
  if (delayMs > 0) properties[PulsarProperty.DELAY] = String(Math.ceil(delayMs));
  return properties;
}

/** A copy of received properties with `set` applied and `drop` removed; every other property kept as received. */
export function editProperties(
  received: Readonly<Record<string, string>>,
  set: Readonly<Record<string, string>>,
  drop: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(received)) {
    if (!drop.includes(key) && !(key in set)) out[key] = value;
  }
  return Object.assign(out, set);
}

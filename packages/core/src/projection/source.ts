import { resolveUrn } from '../envelope/identity.js';
import type { Envelope } from '../envelope/types.js';
import type { EnvelopeProjection } from '../transport/transport.js';

/** What a projection is built from: the projection fields, or an accepted envelope. */
export type ProjectionSource = EnvelopeProjection | Envelope;

/** Out-of-band riders (traceparent, tracestate, bq-replay-bypass) to merge into the native channel. */
export type Riders = Readonly<Record<string, string>> | undefined;

/**
 * The fields every binding projects, read from an accepted envelope. Fields a
 * foreign producer left out or mistyped come back empty (`""`, `NaN`) and the
 * projections leave their slot out.
 */
export function envelopeProjection(env: Envelope): EnvelopeProjection {
  const meta = (env.meta ?? {}) as Record<string, unknown>;
  return {
    urn: resolveUrn(env) ?? '',
    traceId: stringOr(env.trace_id),
    messageId: stringOr(meta.id),
    schemaVersion: numberOr(meta.schema_version),
    lang: stringOr(meta.lang),
    createdAt: numberOr(meta.created_at),
    attempts: numberOr(env.attempts),
  };
}

/** Normalises a projection source. */
export function toProjection(source: ProjectionSource): EnvelopeProjection {
  // Only a projection has the camel-case fields; an envelope never does.
  return 'messageId' in source && 'schemaVersion' in source ? (source as EnvelopeProjection) : envelopeProjection(source as Envelope);
}

/** True when `value` is a non-blank string. */
export function hasText(value: string): boolean {
  return value.trim() !== '';
}

/** True when `value` is an integer. */
export function hasInt(value: number): boolean {
  return Number.isSafeInteger(value);
}

/**
 * Riders that may join a contract channel: blank keys and values are dropped
 * and a contract key always wins a collision. Sorted by key.
 */
export function usableRiders(riders: Riders, contract: Readonly<Record<string, unknown>>): [string, string][] {
  if (riders === undefined) return [];
  return Object.keys(riders)
    .filter((key) => key.trim() !== '' && !Object.hasOwn(contract, key))
    .map((key): [string, string] => [key, riders[key] ?? ''])
    .filter(([, value]) => typeof value === 'string' && value.trim() !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function stringOr(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function numberOr(value: unknown): number {
  return typeof value === 'number' ? value : Number.NaN;
}

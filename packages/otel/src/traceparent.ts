import { createTraceState, TraceFlags, type SpanContext } from '@opentelemetry/api';

/** The W3C Trace Context rider names, carried in each binding's native metadata. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

const TRACEPARENT_FORMAT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** `00-<trace id>-<span id>-<flags>` for a span context. */
export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The remote span context a `traceparent` (and optional `tracestate`) names,
 * or undefined when it is absent or not valid W3C: wrong shape, version `ff`,
 * extra fields on version 00, or an all-zero trace or span id.
 */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT_FORMAT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string?];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(typeof tracestate === 'string' && tracestate.trim() !== '' ? { traceState: createTraceState(tracestate.trim()) } : {}),
  };
}

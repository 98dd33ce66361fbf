import { acceptsEnvelope, decodeEnvelope, isVersionGatedRecord, reemit, REPLAY_BYPASS_HEADER, type Envelope, type HeaderValue } from '@babelqueue/core';

/** Native riders a record keeps on its way back (trace continuity), as the core's redrive keeps them. */
const RIDERS = ['traceparent', 'tracestate'] as const;

/** What redriving one record means (ADR-0026), or why it stays. */
export type RedrivePlan =
  | { readonly kind: 'send'; readonly target: string; readonly body: Buffer; readonly envelope: Envelope }
  | { readonly kind: 'keep'; readonly why: string };

/**
 * The ADR-0026 reset of one record, as the core's `redrive` does it: a
 * version-gated record (no `dead_letter` block) never moves; only an accepted
 * envelope does; its target is `toQueue`, else
 * `dead_letter.original_queue`, else `meta.queue`; the body is the stored bytes
 * with `dead_letter` removed and `attempts` set to 0, nothing else touched.
 */
export function planRedrive(body: Buffer, toQueue: string | undefined): RedrivePlan {
  const decoded = decodeEnvelope(body, () => undefined);
  if (isVersionGatedRecord(decoded)) return { kind: 'keep', why: 'version-gated (no dead_letter block): a consumer of this schema version would take it past its gate' };
  if (!acceptsEnvelope(decoded)) return { kind: 'keep', why: 'not an envelope (poison): it would fail again' };
  const target = toQueue ?? (nonBlank(stringAt(decoded.dead_letter, 'original_queue')) || nonBlank(stringAt(decoded.meta, 'queue')));
  if (target === '') return { kind: 'keep', why: 'no original_queue or meta.queue to send it to' };
  try {
    return { kind: 'send', target, body: reemit(body, { deadLetter: null, attempts: 0 }), envelope: decoded };
  } catch {
    return { kind: 'keep', why: 'the stored bytes cannot be edited losslessly' };
  }
}

/** The riders of a record's native metadata, plus the replay-bypass header when asked. */
export function ridersOf(headers: Readonly<Record<string, HeaderValue>>, bypass = false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RIDERS) {
    const value = headers[name];
    if (typeof value === 'string' && value !== '') out[name] = value;
  }
  if (bypass) out[REPLAY_BYPASS_HEADER] = '1';
  return out;
}

function stringAt(value: unknown, key: string): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return '';
  const found = (value as Record<string, unknown>)[key];
  return typeof found === 'string' ? found : '';
}

function nonBlank(value: string): string {
  return value.trim() === '' ? '' : value;
}

import { randomUUID } from 'node:crypto';
import { poisonRecord } from '@babelqueue/core';

/** A DLQ record as another language's SDK writes it (FACTS §1 and §3 key order), built by hand. */
export interface ForeignRecord {
  readonly urn: string;
  readonly queue: string;
  readonly lang: string;
  readonly dlLang: string;
  readonly reason?: 'failed' | 'unknown_urn';
  readonly error?: string | null;
  readonly exception?: string | null;
  readonly failedAt?: number;
  readonly attempts?: number;
  readonly data?: Record<string, unknown>;
  readonly id?: string;
  readonly traceId?: string;
}

export function foreignRecord(r: ForeignRecord): Buffer {
  const attempts = r.attempts ?? 3;
  const failedAt = r.failedAt ?? Date.now();
  const envelope = {
    job: r.urn,
    trace_id: r.traceId ?? randomUUID(),
    data: r.data ?? { order_id: 1 },
    meta: { id: r.id ?? randomUUID(), queue: r.queue, lang: r.lang, schema_version: 1, created_at: failedAt - 5000 },
    attempts: attempts - 1,
    dead_letter: {
      reason: r.reason ?? 'failed',
      error: r.error === undefined ? 'boom' : r.error,
      exception: r.exception === undefined ? 'RuntimeException' : r.exception,
      failed_at: failedAt,
      original_queue: r.queue,
      attempts,
      lang: r.dlLang,
    },
  };
  return Buffer.from(JSON.stringify(envelope));
}

/** A poison record for bytes that are not valid UTF-8 (base64 raw) or for text that is not JSON. */
export function poison(raw: string | Buffer, queue: string, error = 'body is not valid UTF-8'): Buffer {
  const record = poisonRecord(raw, { originalQueue: queue, attempts: 1, error, failedAt: Date.now() });
  return Buffer.isBuffer(record) ? record : Buffer.from(record);
}

/** Markup that must stay text: it would set window.__xss if it ever ran. */
export const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><b>bold?</b>';

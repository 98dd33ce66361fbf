/**
 * The neutral outcome of one differential row: what a consumer did with the
 * published bytes, in a form both SDKs can be put into and compared. Anything
 * that legitimately differs between two runs (queue names, which language
 * wrote a record, error texts, timestamps) is replaced by a placeholder.
 */
import type { HeaderValue } from '@babelqueue/core';

/** Where the message ended once the consumer stopped. */
export type FinalPlace =
  /** Gone from the broker after a handler run returned. */
  | 'acknowledged'
  /** On the row's dead-letter queue (and nowhere else). */
  | 'dead-lettered'
  /** Gone from the broker, no handler run returned and no record kept. */
  | 'dropped'
  /** Still on the queue, or reserved and unacknowledged, for a redelivery. */
  | 'left-for-redelivery';

/** One record on the dead-letter queue, normalised. */
export interface DeadLetterRecord {
  /**
   * `original`: the published bytes, unchanged; `envelope`: a JSON object (an
   * envelope with its `dead_letter` block, or a poison record); `other`: neither.
   */
  readonly body: 'original' | 'envelope' | 'other';
  /** The top-level keys of a JSON record, in order. */
  readonly keys?: readonly string[];
  /** The record's top-level `attempts`. */
  readonly attempts?: unknown;
  /** The `dead_letter` block, normalised (see {@link normaliseValue}). */
  readonly deadLetter?: Readonly<Record<string, unknown>>;
  /** The native metadata the record carries, normalised, keys sorted. */
  readonly native: Readonly<Record<string, unknown>>;
}

/** What one consumer did with one row. */
export interface Outcome {
  /** The counted attempt (1 = first delivery) each handler run saw, in order. */
  readonly runs: readonly number[];
  readonly final: FinalPlace;
  /** How many copies remain on the queue (reserved ones included). */
  readonly left: number;
  readonly deadLetters: readonly DeadLetterRecord[];
  /** Whether the consumer logged anything at error level. */
  readonly errorLogged: boolean;
  /**
   * The delay in ms each retry or release asked the broker to hold its copy, in
   * order (0: redelivered at once, also where the binding cannot delay). Absent
   * where the broker's target does not record it (Kafka: the retry tier decides).
   */
  readonly delays?: readonly number[];
  /** The consumer refused the settings or crashed: the error's type. */
  readonly crashed?: string;
}

/** What a side observed, before normalisation. */
export interface Observed {
  readonly runs: readonly number[];
  readonly lastRunSucceeded: boolean;
  readonly left: number;
  readonly dlq: readonly { body: Buffer; headers: Readonly<Record<string, HeaderValue>> }[];
  readonly errorLines: number;
  readonly delays?: readonly number[];
  readonly crashed?: string;
}

/** What a normalised value must not depend on: the queue the side consumed and the bytes published. */
export interface Context {
  readonly queue: string;
  readonly published: Buffer;
}

/** The published envelope's ids (fresh per row), which native metadata may echo: `<trace_id>`, `<message_id>`. */
function idsOf(published: Buffer): Map<string, string> {
  const ids = new Map<string, string>();
  try {
    const env = JSON.parse(published.toString('utf8')) as { trace_id?: unknown; meta?: { id?: unknown } };
    if (typeof env.trace_id === 'string') ids.set(env.trace_id, '<trace_id>');
    if (typeof env.meta?.id === 'string') ids.set(env.meta.id, '<message_id>');
  } catch {
    // Not JSON (a poison row): nothing to echo.
  }
  return ids;
}

const LANGS = new Set(['python', 'node']);
const FAILURE = /handler failure on purpose/;

/** A value with the run-specific parts replaced: queue names, language, failure texts, timestamps. */
export function normaliseValue(value: unknown, ctx: Context): unknown {
  if (typeof value === 'string') {
    const id = idsOf(ctx.published).get(value);
    if (id !== undefined) return id;
    if (LANGS.has(value)) return '<lang>';
    if (FAILURE.test(value)) return '<handler error>';
    if (/^\d{13}$/.test(value)) return '<ms>';
    return value.split(ctx.queue).join('<queue>');
  }
  if (typeof value === 'number' && Number.isInteger(value) && value > 1e12) return '<ms>';
  if (Array.isArray(value)) return value.map((v) => normaliseValue(v, ctx));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normaliseValue(v, ctx)]));
  }
  return value;
}

/** The `dead_letter` fields whose values are language- or run-specific text. */
const TEXT_FIELDS = new Set(['error', 'exception']);

function deadLetterRecord(body: Buffer, headers: Readonly<Record<string, HeaderValue>>, ctx: Context): DeadLetterRecord {
  const native = normaliseValue(
    Object.fromEntries(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : 1))),
    ctx,
  ) as Record<string, unknown>;
  if (body.equals(ctx.published)) return { body: 'original', native };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { body: 'other', native };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { body: 'other', native };
  const record = parsed as Record<string, unknown>;
  const block = record.dead_letter;
  let deadLetter: Record<string, unknown> | undefined;
  if (block !== null && typeof block === 'object' && !Array.isArray(block)) {
    deadLetter = Object.fromEntries(
      Object.entries(block as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, TEXT_FIELDS.has(k) && typeof v === 'string' ? '<text>' : normaliseValue(v, ctx)]),
    );
  }
  return {
    body: 'envelope',
    keys: Object.keys(record),
    ...(record.attempts === undefined ? {} : { attempts: record.attempts }),
    ...(deadLetter === undefined ? {} : { deadLetter }),
    native,
  };
}

/** The type of an error as either side reports it (`UnicodeDecodeError('utf-8', …)`, `CapabilityError: …`): its message carries run-specific text. */
function errorType(text: string): string {
  return /^[\w.]+/.exec(text)?.[0] ?? '<error>';
}

/** The neutral outcome of what one side observed. */
export function outcomeOf(observed: Observed, ctx: Context): Outcome {
  const deadLetters = observed.dlq.map((r) => deadLetterRecord(r.body, r.headers, ctx));
  let final: FinalPlace;
  if (observed.left > 0) final = 'left-for-redelivery';
  else if (deadLetters.length > 0) final = 'dead-lettered';
  else if (observed.runs.length > 0 && observed.lastRunSucceeded) final = 'acknowledged';
  else final = 'dropped';
  return {
    runs: observed.runs,
    final,
    left: observed.left,
    deadLetters,
    errorLogged: observed.errorLines > 0,
    ...(observed.delays === undefined ? {} : { delays: observed.delays }),
    ...(observed.crashed === undefined ? {} : { crashed: errorType(observed.crashed) }),
  };
}

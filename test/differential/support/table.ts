/**
 * The differential scenario table (test/differential/scenarios.json) and the
 * bytes each row publishes. The bytes are built once per row, so the Python
 * consumer and ours read exactly the same body.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { UnknownUrnStrategyValue } from '@babelqueue/core';

export type BodyKind = 'valid' | 'unknown-urn' | 'invalid-utf8' | 'truncated-json' | 'no-identity' | 'wrong-types';
/**
 * What the row's handler does: `fail-thrice` fails its first three runs;
 * `unrecoverable` throws the "do not retry" signal (ours: UnrecoverableError;
 * the Python SDK has none, so its handler raises an ordinary exception of that
 * name); `slow-once` takes {@link SLOW_RUN_MS} on its first run, then returns at
 * once; `hang` never returns, and the consumer is shut down while it runs.
 */
export type HandlerMode = 'succeed' | 'fail-once' | 'fail-thrice' | 'fail-always' | 'unrecoverable' | 'slow-once' | 'hang';

export interface ConsumerSettings {
  readonly maxAttempts: number;
  readonly deadLetter: boolean;
  /** An explicit DLQ name; `<queue>` stands for the row's queue (each side has its own). */
  readonly deadLetterQueue?: string;
  /** A DLQ suffix replacing the binding's default. */
  readonly deadLetterSuffix?: string;
  readonly onUnknownUrn: UnknownUrnStrategyValue;
  readonly retryBackoffMs: number;
  readonly retryBackoffMultiplier?: number;
  readonly retryBackoffMaxMs?: number;
  readonly unknownUrnReleaseDelayMs: number;
  /** Ours only: the Python SDK has no handler timeout. */
  readonly handlerTimeoutMs?: number;
  /** How long a shutdown waits for a running handler (the `hang` rows). */
  readonly shutdownTimeoutMs?: number;
}

export interface Row {
  readonly id: string;
  /** The rule of the specification the row exercises. */
  readonly rule: string;
  /** `attempts`: the body's top-level attempts (default 0). */
  readonly publish: { readonly body: BodyKind; readonly version?: string; readonly attempts?: number };
  readonly consumer: ConsumerSettings;
  readonly handler: HandlerMode;
}

interface TableFile {
  readonly defaults: ConsumerSettings;
  readonly settlementCoverage: Readonly<Record<string, readonly string[]>>;
  readonly rows: readonly (Omit<Row, 'consumer'> & { consumer?: Partial<ConsumerSettings> })[];
}

/** The URN every row's handler is registered for. */
export const KNOWN_URN = 'urn:babel:differential:known';
/** The URN of the unknown-URN rows (no handler anywhere). */
export const UNKNOWN_URN = 'urn:babel:differential:unknown';
/** The text each side's failing handler throws (normalised away in outcomes). */
export const FAILURE_TEXT = 'differential: handler failure on purpose';
/** How long a `slow-once` handler's first run takes (above the rows' handler timeout). */
export const SLOW_RUN_MS = 3_000;

/** Whether a handler of `mode` that ran `runs` times returned on its last run. */
export function lastRunSucceeded(mode: HandlerMode, runs: number): boolean {
  switch (mode) {
    case 'succeed':
    case 'slow-once':
      return runs > 0;
    case 'fail-once':
      return runs > 1;
    case 'fail-thrice':
      return runs > 3;
    default:
      return false;
  }
}

/** Whether the run numbered `run` (1-based, in this consumer) of a handler of `mode` throws. */
export function runFails(mode: HandlerMode, run: number): boolean {
  return mode === 'fail-always' || mode === 'unrecoverable' || (mode === 'fail-once' && run === 1) || (mode === 'fail-thrice' && run <= 3);
}

/** The row's DLQ for `queue`: the explicit name, else `queue` + the row's suffix, else the broker's default name. */
export function dlqFor(row: Row, queue: string, defaultName: (queue: string, suffix?: string) => string): string {
  if (row.consumer.deadLetterQueue !== undefined) return row.consumer.deadLetterQueue.split('<queue>').join(queue);
  return defaultName(queue, row.consumer.deadLetterSuffix);
}

const file = JSON.parse(readFileSync(new URL('../scenarios.json', import.meta.url), 'utf8')) as TableFile;

/** Each rule of conformance/settlement.json and the rows that exercise it (checked by table.test.ts). */
export const SETTLEMENT_COVERAGE = file.settlementCoverage;

/** Every row, its settings completed from the defaults. */
export const ROWS: readonly Row[] = file.rows.map((r) => ({ ...r, consumer: { ...file.defaults, ...r.consumer } }));

/** A canonical envelope, as an SDK would write it. */
function envelope(urn: string, attempts: unknown = 0): string {
  return JSON.stringify({
    job: urn,
    trace_id: randomUUID(),
    data: { order_id: 1042, customer: 'Zoe', note: null },
    meta: { id: randomUUID(), queue: 'differential', lang: 'python', schema_version: 1, created_at: Date.now() },
    attempts,
  });
}

/** The bytes a row publishes (fresh ids and timestamp each call). */
export function bodyOf(kind: BodyKind, attempts = 0): Buffer {
  switch (kind) {
    case 'valid':
      return Buffer.from(envelope(KNOWN_URN, attempts));
    case 'unknown-urn':
      return Buffer.from(envelope(UNKNOWN_URN));
    case 'invalid-utf8': {
      // A lone continuation byte inside a JSON string: the JSON is well-formed, the UTF-8 is not.
      const [head, tail] = envelope(KNOWN_URN).split('Zoe');
      return Buffer.concat([Buffer.from(`${head}Zo`), Buffer.from([0xff]), Buffer.from(`e${tail}`)]);
    }
    case 'truncated-json': {
      const text = envelope(KNOWN_URN);
      return Buffer.from(text.slice(0, Math.floor(text.length / 2)));
    }
    case 'no-identity': {
      const { job: _job, ...rest } = JSON.parse(envelope(KNOWN_URN)) as Record<string, unknown>;
      return Buffer.from(JSON.stringify(rest));
    }
    case 'wrong-types':
      return Buffer.from(envelope(KNOWN_URN, '0'));
  }
}

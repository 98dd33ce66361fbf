/**
 * The differential scenario table (test/differential/scenarios.json) and the
 * bytes each row publishes. The bytes are built once per row, so the Python
 * consumer and ours read exactly the same body.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { UnknownUrnStrategyValue } from '@babelqueue/core';

export type BodyKind = 'valid' | 'unknown-urn' | 'invalid-utf8' | 'truncated-json' | 'no-identity' | 'wrong-types';
export type HandlerMode = 'succeed' | 'fail-once' | 'fail-always';

export interface ConsumerSettings {
  readonly maxAttempts: number;
  readonly deadLetter: boolean;
  readonly onUnknownUrn: UnknownUrnStrategyValue;
  readonly retryBackoffMs: number;
  readonly unknownUrnReleaseDelayMs: number;
}

export interface Row {
  readonly id: string;
  /** The rule of the specification the row exercises. */
  readonly rule: string;
  readonly publish: { readonly body: BodyKind; readonly version?: string };
  readonly consumer: ConsumerSettings;
  readonly handler: HandlerMode;
}

interface TableFile {
  readonly defaults: ConsumerSettings;
  readonly rows: readonly (Omit<Row, 'consumer'> & { consumer?: Partial<ConsumerSettings> })[];
}

/** The URN every row's handler is registered for. */
export const KNOWN_URN = 'urn:babel:differential:known';
/** The URN of the unknown-URN rows (no handler anywhere). */
export const UNKNOWN_URN = 'urn:babel:differential:unknown';
/** The text each side's failing handler throws (normalised away in outcomes). */
export const FAILURE_TEXT = 'differential: handler failure on purpose';

const file = JSON.parse(readFileSync(new URL('../scenarios.json', import.meta.url), 'utf8')) as TableFile;

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
export function bodyOf(kind: BodyKind): Buffer {
  switch (kind) {
    case 'valid':
      return Buffer.from(envelope(KNOWN_URN));
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

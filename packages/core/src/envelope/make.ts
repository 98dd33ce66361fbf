import { randomUUID } from 'node:crypto';
import { InvalidMessageError } from './errors.js';
import { assertJsonObject } from './json-check.js';
import type { Envelope, JsonObject } from './types.js';

/** Options of {@link makeEnvelope}. */
export interface MakeOptions {
  /** Logical queue name (`meta.queue`); default `"default"`. */
  queue?: string | null;
  /** An inherited trace id: trimmed and, when not blank, reused verbatim (no format check). */
  traceId?: string | null;
}

/** The queue name every `make` uses when none is given. */
export const DEFAULT_QUEUE = 'default';

/**
 * A new envelope: trimmed URN, fresh v4 UUIDs for `trace_id` (unless
 * inherited) and `meta.id`, `meta.lang` `"node"`, `schema_version` 1,
 * `created_at` now in ms, `attempts` 0. `data` must be a plain JSON object;
 * anything JSON cannot carry is refused with {@link InvalidMessageError}.
 * `data` is referenced, not copied.
 */
export function makeEnvelope(urn: string, data: JsonObject, options: MakeOptions = {}): Envelope {
  if (typeof urn !== 'string' || urn.trim() === '') {
    throw new InvalidMessageError('/job', 'the URN must be a non-blank string');
  }
  assertJsonObject(data, '/data');
  const queue = options.queue ?? DEFAULT_QUEUE;
  if (typeof queue !== 'string' || queue.trim() === '') {
    throw new InvalidMessageError('/meta/queue', 'the queue name must be a non-blank string');
  }
  const inherited = typeof options.traceId === 'string' ? options.traceId.trim() : '';
  return {
    job: urn.trim(),
    trace_id: inherited !== '' ? inherited : randomUUID(),
    data,
    meta: {
      id: randomUUID(),
      queue,
      lang: 'node',
      schema_version: 1,
      created_at: Date.now(),
    },
    attempts: 0,
  };
}

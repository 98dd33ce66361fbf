import type { DeadLetterBlock, Envelope } from './types.js';

/** Canonical member order of the envelope, `meta` and `dead_letter` (FACTS §1). */
export const ENVELOPE_KEY_ORDER = ['job', 'trace_id', 'data', 'meta', 'attempts'] as const;
export const META_KEY_ORDER = ['id', 'queue', 'lang', 'schema_version', 'created_at'] as const;
export const DEAD_LETTER_KEY_ORDER = [
  'reason',
  'error',
  'exception',
  'failed_at',
  'original_queue',
  'attempts',
  'lang',
] as const;

/**
 * Canonical compact JSON of an envelope: the known members first in the
 * canonical order, then unknown members in their own order, `dead_letter`
 * last. `meta` and `dead_letter` are ordered the same way. Everything else is
 * `JSON.stringify` output (raw UTF-8, `/` unescaped, no whitespace).
 */
export function encodeEnvelope(env: Envelope): string {
  // Envelopes from make() (and most decoded ones) are already in canonical order.
  if (isCanonical(env)) return JSON.stringify(env);
  let out = '';
  for (const key of ENVELOPE_KEY_ORDER) {
    if (key === 'meta') out = member(out, key, metaJson(env.meta));
    else out = member(out, key, JSON.stringify(env[key]));
  }
  for (const key in env) {
    if (Object.hasOwn(env, key) && !isTopLevelKnown(key)) out = member(out, key, JSON.stringify(env[key]));
  }
  if (env.dead_letter !== undefined) out = member(out, 'dead_letter', encodeDeadLetter(env.dead_letter));
  return `{${out}}`;
}

/** Canonical compact JSON of a `dead_letter` block. */
export function encodeDeadLetter(block: DeadLetterBlock): string {
  return startsInOrder(block, DEAD_LETTER_KEY_ORDER)
    ? JSON.stringify(block)
    : ordered(block as Record<string, unknown>, DEAD_LETTER_KEY_ORDER);
}

function metaJson(meta: unknown): string | undefined {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return JSON.stringify(meta);
  return ordered(meta as Record<string, unknown>, META_KEY_ORDER);
}

function ordered(obj: Record<string, unknown>, order: readonly string[]): string {
  let out = '';
  for (const key of order) out = member(out, key, JSON.stringify(obj[key]));
  for (const key in obj) {
    if (Object.hasOwn(obj, key) && !order.includes(key)) out = member(out, key, JSON.stringify(obj[key]));
  }
  return `{${out}}`;
}

/** Appends `"key":json` unless the value has no JSON form (undefined, as `JSON.stringify` drops it). */
function member(out: string, key: string, json: string | undefined): string {
  if (json === undefined) return out;
  return `${out}${out === '' ? '' : ','}${JSON.stringify(key)}:${json}`;
}

/**
 * True when the object's own key order already is the canonical one, so
 * `JSON.stringify` writes the canonical bytes: the five known members first,
 * unknown ones after them, `dead_letter` (if any) last; `meta` and
 * `dead_letter` start with their known members in order.
 */
function isCanonical(env: Envelope): boolean {
  let i = 0;
  let deadLetterSeen = false;
  for (const key in env) {
    if (deadLetterSeen) return false;
    if (i < ENVELOPE_KEY_ORDER.length) {
      if (key !== ENVELOPE_KEY_ORDER[i]) return false;
    } else if (key === 'dead_letter') {
      // The other known keys were the first five: only dead_letter can follow.
      deadLetterSeen = true;
    }
    i++;
  }
  return (
    i >= ENVELOPE_KEY_ORDER.length &&
    startsInOrder(env.meta, META_KEY_ORDER) &&
    (env.dead_letter === undefined || startsInOrder(env.dead_letter, DEAD_LETTER_KEY_ORDER))
  );
}

function startsInOrder(obj: unknown, order: readonly string[]): boolean {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return true;
  let i = 0;
  for (const key in obj) {
    if (i === order.length) return true;
    if (key !== order[i]) return false;
    i++;
  }
  return i === order.length;
}

function isTopLevelKnown(key: string): boolean {
  return (
    key === 'job' ||
    key === 'trace_id' ||
    key === 'data' ||
    key === 'meta' ||
    key === 'attempts' ||
    key === 'dead_letter'
  );
}

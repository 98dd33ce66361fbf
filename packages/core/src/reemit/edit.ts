import { Buffer } from 'node:buffer';
import { encodeDeadLetter } from '../envelope/encode.js';
import { asBuffer } from '../envelope/utf8.js';
import type { DeadLetterBlock, JsonObject } from '../envelope/types.js';
import { scanObject, type ObjectLayout } from './scanner.js';

/** The top-level edits a lossless re-emit can make. */
export interface ReemitEdits {
  /** New top-level `attempts`: replaced in place, appended when absent. */
  attempts?: number;
  /** New `dead_letter` block: replaced in place, appended when absent; `null` removes the member. */
  deadLetter?: DeadLetterBlock | null;
  /** New top-level `data` (compact JSON, as `JSON.stringify` writes it): replaced in place, appended when absent. */
  data?: JsonObject;
}

/**
 * Lossless re-emit: edits top-level members of the raw body and leaves every
 * other byte as it was (integers beyond 2^53, `1.0`, key order, escapes,
 * unknown fields, whitespace). A string gives a string; bytes give a Buffer.
 * Throws `NotAJsonObjectError` when the body is not a JSON object, and
 * `RangeError` for an `attempts` that is not a non-negative integer.
 */
export function reemit(raw: string, edits: ReemitEdits): string;
export function reemit(raw: Uint8Array, edits: ReemitEdits): Buffer;
export function reemit(raw: string | Uint8Array, edits: ReemitEdits): string | Buffer;
export function reemit(raw: string | Uint8Array, edits: ReemitEdits): string | Buffer {
  const isText = typeof raw === 'string';
  const text = isText ? raw : asBuffer(raw).toString('latin1');
  const changes: Change[] = [];
  if (edits.attempts !== undefined) {
    const n = edits.attempts;
    // Any integer a decoder accepted can come back (beyond 2^53 it prints as JSON still reads it).
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`attempts must be a non-negative integer, got ${n}`);
    changes.push({ key: 'attempts', json: String(n), done: false });
  }
  if (edits.data !== undefined) {
    if (edits.data === null || typeof edits.data !== 'object' || Array.isArray(edits.data)) throw new TypeError('data must be a JSON object');
    const json = JSON.stringify(edits.data);
    changes.push({ key: 'data', json: isText ? json : latin1OfUtf8(json), done: false });
  }
  if (edits.deadLetter !== undefined) {
    const json = edits.deadLetter === null ? null : encodeDeadLetter(edits.deadLetter);
    // The latin1 view of bytes holds one char per byte, so the block joins it as its UTF-8 bytes.
    changes.push({ key: 'dead_letter', json: json === null || isText ? json : latin1OfUtf8(json), done: false });
  }
  const out = splice(text, scanObject(text), changes);
  return isText ? out : Buffer.from(out, 'latin1');
}

/**
 * The retry copy: the raw body with its top-level `attempts` set to `n`
 * (appended when absent), every other byte unchanged.
 */
export function withAttempts(raw: string, n: number): string;
export function withAttempts(raw: Uint8Array, n: number): Buffer;
export function withAttempts(raw: string | Uint8Array, n: number): string | Buffer;
export function withAttempts(raw: string | Uint8Array, n: number): string | Buffer {
  return reemit(raw, { attempts: n });
}

/**
 * The dead-letter record: the raw body verbatim plus a top-level `dead_letter`
 * member (appended, or replaced in place when present).
 */
export function withDeadLetter(raw: string, block: DeadLetterBlock): string;
export function withDeadLetter(raw: Uint8Array, block: DeadLetterBlock): Buffer;
export function withDeadLetter(raw: string | Uint8Array, block: DeadLetterBlock): string | Buffer;
export function withDeadLetter(raw: string | Uint8Array, block: DeadLetterBlock): string | Buffer {
  return reemit(raw, { deadLetter: block });
}

/**
 * The raw body without its top-level `dead_letter` member (redrive reset; use
 * `reemit(raw, { deadLetter: null, attempts: 0 })` to reset `attempts` in the same pass).
 */
export function withoutDeadLetter(raw: string): string;
export function withoutDeadLetter(raw: Uint8Array): Buffer;
export function withoutDeadLetter(raw: string | Uint8Array): string | Buffer;
export function withoutDeadLetter(raw: string | Uint8Array): string | Buffer {
  return reemit(raw, { deadLetter: null });
}

interface Change {
  readonly key: string;
  /** Replacement value JSON; null removes the member. */
  readonly json: string | null;
  done: boolean;
}

function latin1OfUtf8(json: string): string {
  return Buffer.from(json, 'utf8').toString('latin1');
}

function splice(text: string, layout: ObjectLayout, changes: Change[]): string {
  const { members } = layout;
  const bodyStart = layout.open + 1;
  let out = text.slice(0, bodyStart);
  let kept = 0;
  for (let k = 0; k < members.length; k++) {
    const m = members[k]!;
    const change = findChange(changes, m.key);
    if (change !== undefined) change.done = true;
    // A removed member takes its leading separator with it: its segment runs
    // from the end of the previous value to the end of its own.
    if (change?.json === null) continue;
    let from = k === 0 ? bodyStart : members[k - 1]!.valueEnd;
    if (kept === 0 && k > 0) {
      out += text.slice(bodyStart, members[0]!.keyStart);
      from = m.keyStart;
    }
    out += change === undefined ? text.slice(from, m.valueEnd) : text.slice(from, m.valueStart) + change.json;
    kept++;
  }
  for (const change of changes) {
    if (change.done || change.json === null) continue;
    out += `${kept > 0 ? ',' : ''}"${change.key}":${change.json}`;
    kept++;
  }
  const last = members[members.length - 1];
  return out + text.slice(last === undefined ? bodyStart : last.valueEnd);
}

function findChange(changes: Change[], key: string): Change | undefined {
  for (const change of changes) if (change.key === key) return change;
  return undefined;
}

/**
 * conformance/divergences.json: the differences between the Python SDK and
 * ours that the differential suite accepts. Each entry names the rows, the
 * brokers, the field of the neutral outcome that differs, the value each SDK
 * gives it, and why the difference stays. A difference no entry covers fails;
 * so does an entry that no longer matches what a row it names does.
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { Outcome } from './outcome.js';

export interface Divergence {
  /** A short name, for people and the docs. */
  readonly id: string;
  /** Row ids of test/differential/scenarios.json, each named (no wildcard). */
  readonly rows: readonly string[];
  /** Broker names as the suite spells them (`redis-legacy`, …), or `["*"]`: on every broker that runs the row. */
  readonly brokers: readonly string[];
  /** The fields of the outcome that differ, each with both values; every one must occur on every row and broker named. */
  readonly differences: readonly Difference[];
  /** Why it stays: a seed sentence the Python SDK does not follow, a documented Python bug, a broker limit. */
  readonly reason: string;
}

/** One field on which the two outcomes differ. */
export interface Difference {
  /** The field of the outcome, dotted (`deadLetters.0.deadLetter.original_queue`, `errorLogged`). */
  readonly path: string;
  /** The field's value under the Python SDK (`"<absent>"`: not there). */
  readonly python: unknown;
  /** The field's value under BabelQueue for TypeScript. */
  readonly ours: unknown;
}

export const DIVERGENCES_FILE = new URL('../../../conformance/divergences.json', import.meta.url);

export const DIVERGENCES: readonly Divergence[] = (
  JSON.parse(readFileSync(DIVERGENCES_FILE, 'utf8')) as { divergences: Divergence[] }
).divergences;

const ABSENT = '<absent>';

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Every leaf on which `a` and `b` differ; arrays of unequal length differ as a whole. */
export function differences(a: unknown, b: unknown, path = ''): Difference[] {
  const at = (key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => differences(k in a ? a[k] : ABSENT, k in b ? b[k] : ABSENT, at(k)));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((v, i) => differences(v, b[i], at(i)));
  }
  return isDeepStrictEqual(a, b) ? [] : [{ path, python: a, ours: b }];
}

/** The entries that name `row` on `broker`. */
export function entriesFor(row: string, broker: string): Divergence[] {
  return DIVERGENCES.filter((d) => d.rows.includes(row) && (d.brokers.includes('*') || d.brokers.includes(broker)));
}

export interface Verdict {
  /** Differences no entry covers. */
  readonly unlisted: Difference[];
  /** Listed differences of entries naming this row and broker that did not occur. */
  readonly stale: { entry: Divergence; difference: Difference }[];
}

/** Compares the two outcomes of `row` on `broker` against the list. */
export function judge(row: string, broker: string, python: Outcome, ours: Outcome): Verdict {
  // Through JSON, as the entries are written: undefined members vanish on both sides.
  const plain = (o: Outcome) => JSON.parse(JSON.stringify(o)) as unknown;
  const found = differences(plain(python), plain(ours));
  const entries = entriesFor(row, broker);
  const listed = entries.flatMap((entry) => entry.differences.map((difference) => ({ entry, difference })));
  const same = (a: Difference, b: Difference) => a.path === b.path && isDeepStrictEqual(a.python, b.python) && isDeepStrictEqual(a.ours, b.ours);
  return {
    unlisted: found.filter((d) => !listed.some((l) => same(l.difference, d))),
    stale: listed.filter((l) => !found.some((d) => same(l.difference, d))),
  };
}

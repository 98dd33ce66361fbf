import type { LedgerEvent } from './ledger.js';
import { expectedEnd, type Script } from './scripts.js';

/** One record read off the DLQ at the end of a run. */
export interface DeadLetterRecord {
  /** The message key (`data.k`), when the record carries it. */
  readonly key: string | undefined;
  /** `dead_letter.reason`, when the record has a block. */
  readonly reason: string | undefined;
}

/** What became of the messages of a run. */
export interface Tally {
  readonly messages: number;
  /** Keys handled at least once (a ledger `H` line). */
  readonly handled: number;
  /** Keys with at least one record on the DLQ. */
  readonly deadLettered: number;
  /**
   * Keys neither handled nor on the DLQ, with nothing left on the queue (the
   * run ends only once every place a message can wait on the broker is empty).
   */
  readonly lost: readonly string[];
  /**
   * How many of `lost` no worker ever began to handle (no ledger line at all):
   * the message never came off the broker, which points at the broker (an
   * acknowledged publish it did not keep) rather than at a settlement.
   */
  readonly lostUndelivered: number;
  /** Effects beyond the first per key (a handler ran to its effect again after a kill or a lost ack). */
  readonly duplicateEffects: number;
  /** DLQ records beyond the first per key (a kill between the record write and the ack). */
  readonly duplicateRecords: number;
  /** Keys that ended otherwise than their script says (handled instead of dead-lettered, or the reverse, or a wrong reason). */
  readonly wrongEnd: readonly string[];
  /** DLQ records of no message of this run. */
  readonly strangers: number;
}

/**
 * Counts what came out of a run against what went in: `scripts[i]` is the
 * script of key `i`, `events` every worker's ledger, `records` the DLQ.
 */
export function tally(scripts: readonly Script[], events: readonly LedgerEvent[], records: readonly DeadLetterRecord[]): Tally {
  const effects = new Map<string, number>();
  const touched = new Set<string>();
  for (const event of events) {
    touched.add(event.key);
    if (event.kind === 'H') effects.set(event.key, (effects.get(event.key) ?? 0) + 1);
  }
  const dead = new Map<string, string[]>();
  let strangers = 0;
  for (const record of records) {
    if (record.key === undefined || !(Number(record.key) < scripts.length) || String(Number(record.key)) !== record.key) {
      strangers += 1;
      continue;
    }
    dead.set(record.key, [...(dead.get(record.key) ?? []), record.reason ?? 'none']);
  }
  const lost: string[] = [];
  const wrongEnd: string[] = [];
  let duplicateEffects = 0;
  let duplicateRecords = 0;
  let handled = 0;
  let deadLettered = 0;
  scripts.forEach((script, i) => {
    const key = String(i);
    const ran = effects.get(key) ?? 0;
    const reasons = dead.get(key) ?? [];
    if (ran > 0) handled += 1;
    if (reasons.length > 0) deadLettered += 1;
    duplicateEffects += Math.max(0, ran - 1);
    duplicateRecords += Math.max(0, reasons.length - 1);
    if (ran === 0 && reasons.length === 0) {
      lost.push(key);
      return;
    }
    const ok = expectedEnd(script) === 'handled'
      ? ran > 0 && reasons.length === 0
      : ran === 0 && reasons.every((reason) => reason === 'failed');
    if (!ok) wrongEnd.push(key);
  });
  const lostUndelivered = lost.filter((key) => !touched.has(key)).length;
  return { messages: scripts.length, handled, deadLettered, lost, lostUndelivered, duplicateEffects, duplicateRecords, wrongEnd, strangers };
}

/** A fault the controller caused, for the recovery times. */
export interface FaultEvent {
  readonly kind: 'kill' | 'cut' | 'restart';
  /** When it hit (a kill: when the controller saw the process exit). */
  readonly at: number;
  /** The worker it hit (kills only); a cut or restart hits every worker. */
  readonly worker?: string;
}

/**
 * Recovery times: for every message a fault stranded — a handler had begun
 * on it and its settlement had not resolved when the fault hit — the time
 * from the fault until a handler began on it again. A message whose
 * settlement went through just before the fault (its ledger line lost with
 * the process) never comes back and gives no sample.
 */
export function recoveryTimes(events: readonly LedgerEvent[], faults: readonly FaultEvent[]): number[] {
  const byTime = [...events].sort((a, b) => a.at - b.at);
  // Every time a handler began on each key, ascending.
  const begins = new Map<string, number[]>();
  for (const event of byTime) if (event.kind === 'B') (begins.get(event.key) ?? begins.set(event.key, []).get(event.key)!).push(event.at);
  // One sweep: deliveries open (began, not settled) per worker, as of each fault.
  const open = new Map<string, Map<string, number>>();
  const samples: number[] = [];
  let i = 0;
  for (const fault of [...faults].sort((a, b) => a.at - b.at)) {
    for (; i < byTime.length && byTime[i]!.at <= fault.at; i++) {
      const event = byTime[i]!;
      if (event.kind !== 'B' && event.kind !== 'S') continue;
      const keys = open.get(event.worker) ?? open.set(event.worker, new Map()).get(event.worker)!;
      const n = (keys.get(event.key) ?? 0) + (event.kind === 'B' ? 1 : -1);
      if (n > 0) keys.set(event.key, n);
      else keys.delete(event.key);
    }
    const hit = fault.worker !== undefined ? [open.get(fault.worker) ?? new Map<string, number>()] : [...open.values()];
    const stranded = new Set(hit.flatMap((keys) => [...keys.keys()]));
    for (const key of stranded) {
      const next = firstAfter(begins.get(key) ?? [], fault.at);
      if (next !== undefined) samples.push(next - fault.at);
    }
  }
  return samples;
}

/** The first value above `t` in an ascending list (binary search). */
function firstAfter(sorted: readonly number[], t: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo];
}

/** The p-th percentile (0–100) of `values`, nearest rank; undefined when empty. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

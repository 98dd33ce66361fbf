import type { ChaosResult } from './scenarios/chaos.js';
import type { FuzzResult } from './scenarios/fuzz.js';
import type { SoakResult } from './scenarios/soak.js';

/** One broker's results (`reliability-report.json` holds one per broker). */
export interface DriverReport {
  readonly broker: string;
  readonly description: string;
  /** Set when the broker was not there (outside CI only). */
  readonly skipped?: string;
  selfTest?: ChaosResult;
  chaos?: ChaosResult;
  fuzz?: FuzzResult;
  soak?: SoakResult;
  ms?: number;
  /** Every rule the run broke; empty when the broker passed. */
  failures: string[];
}

export interface Report {
  readonly seed: number;
  readonly sizes: { readonly messages: number; readonly fuzzBodies: number; readonly soakMinutes: number };
  readonly startedAt: string;
  readonly ms: number;
  readonly drivers: readonly DriverReport[];
}

const nonZero = (counts: Record<string, number>) => Object.entries(counts).filter(([, n]) => n !== 0).map(([k, n]) => `${k} ${n}`).join(', ');

/** The rules a broker's run must keep; each broken one is a line. */
export function judge(report: DriverReport): string[] {
  const failures: string[] = [];
  const { selfTest, chaos, fuzz, soak } = report;
  if (selfTest !== undefined) {
    const lost = selfTest.tally.lost;
    if (!(lost.length === 1 && lost[0] === selfTest.stolen)) {
      failures.push(`self-test: message ${selfTest.stolen} was deleted on purpose, but the count found lost: [${lost.join(', ')}] (the counter would not catch a loss)`);
    } else if (selfTest.tally.lostUndelivered !== 1) {
      failures.push(`self-test: message ${selfTest.stolen} was deleted before any worker started, but it was not counted as never delivered`);
    }
  }
  if (chaos !== undefined) {
    const t = chaos.tally;
    if (chaos.aborted !== undefined) failures.push(`chaos: ${chaos.aborted}`);
    if (t.lost.length > 0) {
      failures.push(`chaos: ${t.lost.length} lost (${t.lost.slice(0, 10).join(', ')}${t.lost.length > 10 ? ', …' : ''}); `
        + `${t.lostUndelivered} of them never reached a worker (an acknowledged publish the broker did not keep, or one never made)`);
    }
    if (t.wrongEnd.length > 0) failures.push(`chaos: ${t.wrongEnd.length} ended otherwise than scripted (${t.wrongEnd.slice(0, 10).join(', ')})`);
    if (t.strangers > 0) failures.push(`chaos: ${t.strangers} DLQ records of no message of the run`);
    if (chaos.crashes.length > 0) failures.push(`chaos: ${chaos.crashes.length} worker(s) died by themselves: ${chaos.crashes.slice(0, 3).join('; ')}`);
    if (chaos.dropLines > 0) failures.push(`chaos: ${chaos.dropLines} "dropped" log line(s)`);
    if (nonZero(chaos.leftover) !== '') failures.push(`chaos: left on the broker at the end: ${nonZero(chaos.leftover)}`);
    if (nonZero(chaos.dlqLeftover) !== '') failures.push(`chaos: DLQ not read to the end: ${nonZero(chaos.dlqLeftover)}`);
  }
  if (fuzz !== undefined) {
    if (fuzz.aborted !== undefined) failures.push(`fuzz: ${fuzz.aborted}`);
    const rows = Object.values(fuzz.rows);
    const wrong = rows.reduce((n, r) => n + r.wrong, 0);
    const missing = rows.reduce((n, r) => n + r.missing, 0);
    if (wrong > 0) failures.push(`fuzz: ${wrong} bodies ended otherwise than the rules say (${fuzz.examples.slice(0, 3).join('; ')})`);
    if (missing > 0) failures.push(`fuzz: ${missing} bodies neither handled nor on the DLQ`);
    if (fuzz.unrecoverable > 0) failures.push(`fuzz: ${fuzz.unrecoverable} DLQ records whose original bytes could not be recovered`);
    if (fuzz.crashes.length > 0) failures.push(`fuzz: the worker died ${fuzz.crashes.length} time(s): ${fuzz.crashes.slice(0, 3).join('; ')}`);
    if (nonZero(fuzz.leftover) !== '') failures.push(`fuzz: left on the broker at the end: ${nonZero(fuzz.leftover)}`);
    if (nonZero(fuzz.dlqLeftover) !== '') failures.push(`fuzz: DLQ not read to the end: ${nonZero(fuzz.dlqLeftover)}`);
  }
  if (soak !== undefined) {
    if (soak.crashes.length > 0) failures.push(`soak: the worker died: ${soak.crashes.join('; ')}`);
    if (soak.lost > 0) failures.push(`soak: ${soak.lost} lost`);
    if (soak.heapGrowthMiB > soak.bounds.heapMiB) failures.push(`soak: heap grew ${soak.heapGrowthMiB} MiB (bound ${soak.bounds.heapMiB} MiB)`);
    if (soak.rssGrowthMiB > soak.bounds.rssMiB) failures.push(`soak: RSS grew ${soak.rssGrowthMiB} MiB (bound ${soak.bounds.rssMiB} MiB)`);
  }
  return failures;
}

/** The per-broker summary row of the README table. */
export function summaryRow(r: DriverReport): string[] {
  if (r.skipped !== undefined) return [r.broker, 'skipped', '', '', '', '', '', '', '', '', ''];
  const c = r.chaos;
  const kills = c ? Object.values(c.kills).reduce((a, b) => a + b, 0) : 0;
  const restarts = c ? c.faults.filter((f) => f.kind === 'restart').length : 0;
  const cuts = c ? c.faults.filter((f) => f.kind === 'cut').length : 0;
  const fuzzRows = r.fuzz ? Object.values(r.fuzz.rows) : [];
  const poison = fuzzRows.reduce((n, row) => n + row.poison, 0);
  const fuzzBad = fuzzRows.reduce((n, row) => n + row.wrong + row.missing, 0) + (r.fuzz?.unrecoverable ?? 0);
  return [
    r.broker,
    c ? String(c.tally.messages) : '–',
    c ? String(kills) : '–',
    c ? (restarts > 0 ? String(restarts) : c.skipped.some((s) => s.startsWith('restart')) ? 'n/a' : '0') : '–',
    c ? String(cuts) : '–',
    c ? String(c.tally.lost.length) : '–',
    c ? `${c.tally.duplicateEffects} + ${c.tally.duplicateRecords}` : '–',
    r.fuzz ? `${poison} (${fuzzBad} wrong)` : '–',
    c?.recovery.p99 !== undefined ? `${(c.recovery.p99 / 1000).toFixed(2)} s` : '–',
    r.ms !== undefined ? `${Math.round(r.ms / 1000)} s` : '–',
    r.failures.length === 0 ? 'pass' : 'FAIL',
  ];
}

export const SUMMARY_HEADER = ['broker', 'messages', 'kills', 'restarts', 'cuts', 'lost', 'duplicates (effects + DLQ records)', 'poison handled (fuzz)', 'p99 recovery', 'time', 'verdict'];

/** Prints the summary table and each broker's fuzz table. */
export function printTable(report: Report): void {
  console.log(markdown(SUMMARY_HEADER, report.drivers.map(summaryRow)));
  for (const r of report.drivers) {
    if (r.fuzz === undefined) continue;
    console.log(`\nfuzz, ${r.broker} (${r.fuzz.bodies} bodies; settlements: ${Object.entries(r.fuzz.decisions).map(([k, n]) => `${k} ${n}`).join(', ')})`);
    console.log(markdown(['category', 'published', 'refused at publish', 'handled', 'poison (DLQ)', 'unknown_urn (DLQ)', 'wrong', 'missing'],
      Object.entries(r.fuzz.rows).map(([category, row]) => [category, row.published, row.refused, row.handled, row.poison, row.unknownUrn, row.wrong, row.missing].map(String))));
    for (const line of r.fuzz.examples.slice(0, 5)) console.log(`  ! ${line}`);
  }
}

export function markdown(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

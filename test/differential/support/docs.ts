/**
 * The divergences list as docs/brokers.md shows it, rendered from
 * conformance/divergences.json; test/differential/table.test.ts checks that
 * the doc holds exactly this text between its markers, so it cannot drift.
 */
import type { Divergence } from './divergences.js';

export const BEGIN = '<!-- divergences:begin (generated from conformance/divergences.json; test/differential/table.test.ts checks it) -->';
export const END = '<!-- divergences:end -->';

const value = (v: unknown) => `\`${JSON.stringify(v)}\``;

/** One bullet per divergence id, then one sub-bullet per entry (brokers, rows, fields). */
export function renderDivergences(divergences: readonly Divergence[]): string {
  const byId = new Map<string, Divergence[]>();
  for (const d of divergences) byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
  const lines: string[] = [];
  for (const [id, entries] of byId) {
    lines.push(`- **${id}** — ${entries[0]!.reason}`);
    for (const e of entries) {
      const fields = e.differences.map((d) => `${d.path}: Python ${value(d.python)}, ours ${value(d.ours)}`).join('; ');
      lines.push(`  - ${e.brokers.join(', ')} · ${e.rows.join(', ')} · ${fields}`);
    }
  }
  return lines.join('\n');
}

// The differential suite's data: the scenario table and the divergences list
// are well-formed, every divergence names real rows and has a reason, and
// docs/brokers.md shows the list as it is (no broker needed).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROWS, SETTLEMENT_COVERAGE } from './support/table.js';
import { DIVERGENCES, differences, judge } from './support/divergences.js';
import { BEGIN, END, renderDivergences } from './support/docs.js';
import type { Outcome } from './support/outcome.js';

const BROKERS = ['redis-legacy', 'redis-zset', 'rabbitmq', 'kafka', 'kafka-no-tiers', 'sqs', 'pulsar', 'artemis', 'asb', '*'];

describe('differential conformance: the scenario table and conformance/divergences.json', () => {
  it('row ids are unique and every row says which rule it exercises', () => {
    assert.equal(new Set(ROWS.map((r) => r.id)).size, ROWS.length);
    for (const r of ROWS) assert.ok(r.rule.length > 10, `${r.id} names its rule`);
  });

  it('the table covers every poison kind, each unknown-URN strategy and every version-gate value', () => {
    const bodies = new Set(ROWS.map((r) => r.publish.body));
    for (const kind of ['valid', 'unknown-urn', 'invalid-utf8', 'truncated-json', 'no-identity', 'wrong-types']) assert.ok(bodies.has(kind as never), kind);
    const strategies = new Set(ROWS.filter((r) => r.publish.body === 'unknown-urn').map((r) => r.consumer.onUnknownUrn));
    assert.deepEqual([...strategies].sort(), ['dead_letter', 'delete', 'fail', 'release']);
    const versions = new Set(ROWS.map((r) => r.publish.version));
    for (const v of ['1', '2', ' 1 ', '', undefined]) assert.ok(versions.has(v), `version ${JSON.stringify(v)}`);
  });

  it('every rule of the settlement policy (conformance/settlement.json) names the rows that exercise it', () => {
    const settlement = JSON.parse(readFileSync(new URL('../../conformance/settlement.json', import.meta.url), 'utf8')) as { rows: { rule: string }[] };
    const rules = new Set(settlement.rows.map((r) => r.rule));
    const ids = new Set(ROWS.map((r) => r.id));
    for (const rule of rules) {
      const rows = SETTLEMENT_COVERAGE[rule];
      assert.ok(rows !== undefined && rows.length > 0, `scenarios.json settlementCoverage names no row for the settlement rule "${rule}"`);
      for (const id of rows) assert.ok(ids.has(id), `settlementCoverage: unknown row ${id} for "${rule}"`);
    }
    for (const rule of Object.keys(SETTLEMENT_COVERAGE)) assert.ok(rules.has(rule), `settlementCoverage names a rule conformance/settlement.json no longer has: "${rule}"`);
  });

  it('every divergence names existing rows and known brokers, lists what differs and says why', () => {
    const ids = new Set(ROWS.map((r) => r.id));
    for (const d of DIVERGENCES) {
      for (const row of d.rows) assert.ok(ids.has(row), `${d.id}: unknown row ${row}`);
      for (const broker of d.brokers) assert.ok(BROKERS.includes(broker), `${d.id}: unknown broker ${broker}`);
      assert.ok(d.differences.length > 0, `${d.id}: lists what differs`);
      assert.ok(d.reason.length > 40, `${d.id}: a reason a reviewer can check`);
    }
  });

  it('docs/brokers.md shows the divergences list as conformance/divergences.json has it', () => {
    const doc = readFileSync(new URL('../../docs/brokers.md', import.meta.url), 'utf8');
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    assert.ok(start >= 0 && end > start, 'docs/brokers.md has the divergences markers');
    assert.equal(doc.slice(start + BEGIN.length, end).trim(), renderDivergences(DIVERGENCES));
  });

  it('the comparison: a difference no entry lists fails, a listed one passes, a listed one that no longer occurs is stale', () => {
    const base: Outcome = { runs: [1], final: 'acknowledged', left: 0, deadLetters: [], errorLogged: false };
    assert.deepEqual(differences(base, { ...base, errorLogged: true }), [{ path: 'errorLogged', python: false, ours: true }]);
    assert.deepEqual(judge('valid-succeed', 'rabbitmq', base, base), { unlisted: [], stale: [] });
    const verdict = judge('valid-succeed', 'rabbitmq', base, { ...base, final: 'dropped' });
    assert.deepEqual(verdict.unlisted, [{ path: 'final', python: 'acknowledged', ours: 'dropped' }]);
    const listed = DIVERGENCES.find((d) => d.brokers.includes('rabbitmq') || d.brokers.includes('*'));
    if (listed) {
      const row = listed.rows[0]!;
      assert.ok(judge(row, 'rabbitmq', base, base).stale.length >= listed.differences.length, 'agreeing outcomes make the entry stale');
    }
  });
});

/**
 * The differential driver (issue #27): every row of the scenario table runs on
 * one broker twice, from the same published bytes on two fresh queues: once
 * under the Python SDK's consumer (all rows at once in one `peer.py
 * differential` process, a thread per row), then under ours (all rows at once
 * in this process). After each consumer stopped, the broker is inspected from
 * here; both observations are put into the neutral {@link Outcome} and compared,
 * one test per row. A difference fails unless conformance/divergences.json
 * lists it, with both outcomes and the reason.
 */
import { after, before, describe, it } from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { createApp, type HeaderValue, type Transport } from '@babelqueue/core';
import { uniqueQueue, type BrokerSuite } from '../../support/brokers.js';
import { captureLogger } from '../../support/capture-logger.js';
import { pythonPeer } from '../../interop/support/python-peer.js';
import { bodyOf, FAILURE_TEXT, KNOWN_URN, ROWS, type HandlerMode, type Row } from './table.js';
import { outcomeOf, type Observed, type Outcome } from './outcome.js';
import { judge } from './divergences.js';

/** What the broker holds for one row's queue once its consumer stopped. */
export interface Inspection {
  /** Copies still on the queue, reserved ones included. */
  readonly left: number;
  /** Every record on the row's dead-letter queue, with its native metadata. */
  readonly dlq: readonly { body: Buffer; headers: Readonly<Record<string, HeaderValue>> }[];
}

export interface DifferentialTarget {
  /** The broker's name in conformance/divergences.json (`redis-legacy`, `kafka-no-tiers`, …). */
  readonly name: string;
  readonly broker: BrokerSuite;
  /** Our transport for one row's consumer of `queue` (also used to publish and read `queue`). */
  transport(url: string, queue: string): Transport;
  /** The native schema-version key the row's `publish.version` is sent under; absent: the binding has none (version rows skip). */
  readonly versionKey?: string;
  /** Rows this broker cannot carry, with why (a broker limit). */
  readonly unsupported?: Readonly<Record<string, string>>;
  /** The dead-letter queue of `queue` (default `<queue>.dlq`). */
  dlqName?(queue: string): string;
  /** Creates the queues before anything is published, where neither SDK creates them. */
  prepare?(url: string, queues: string[]): Promise<void>;
  /** Publishes the raw bytes with the native metadata (default: our transport's `publishRaw`). */
  publish?(url: string, queue: string, body: Buffer, headers: Record<string, string>): Promise<void>;
  /** Reads the queue and its DLQ after the consumer stopped. */
  inspect(url: string, queue: string, dlq: string): Promise<Inspection>;
  /** Removes the queues. */
  cleanup?(url: string, queues: string[]): Promise<void>;
  /** Extra fields for the peer's row (Kafka: `group`, `retry_tiers_ms`). */
  peerRow?(queue: string): Record<string, unknown>;
  /** How long a consumer waits for the next delivery before it stops (default 4,000 ms). */
  readonly idleMs?: number;
}

/** Deliveries a consumer takes at most (bounds a row whose message keeps coming back). */
const MAX_DELIVERIES = 12;

interface Prepared {
  readonly row: Row;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  readonly pyQueue: string;
  readonly tsQueue: string;
}

function lastRunSucceeded(mode: HandlerMode, runs: number): boolean {
  if (mode === 'succeed') return runs > 0;
  if (mode === 'fail-once') return runs > 1;
  return false;
}

export function describeDifferential(target: DifferentialTarget): void {
  const peer = pythonPeer(`${target.name} (differential)`);
  const skip = target.broker.skip || peer.skip;
  const rows = ROWS.filter((r) => target.unsupported?.[r.id] === undefined && (r.publish.version === undefined || target.versionKey !== undefined));

  describe(`differential over ${target.name}: the Python SDK and BabelQueue settle each row alike`, { skip }, () => {
    const url = target.broker.url!;
    const idleMs = target.idleMs ?? 4_000;
    const dlqOf = (q: string) => target.dlqName?.(q) ?? `${q}.dlq`;
    const queues: string[] = [];
    const outcomes = new Map<string, { python: Outcome; ours: Outcome }>();

    async function publish(p: Prepared, queue: string): Promise<void> {
      if (target.publish) return target.publish(url, queue, p.body, p.headers);
      const transport = target.transport(url, queue);
      try {
        await transport.publishRaw!(queue, p.body, p.headers);
      } finally {
        await transport.close();
      }
    }

    async function runPython(prepared: Prepared[]): Promise<Map<string, Observed>> {
      const request = {
        url,
        rows: prepared.map((p) => ({
          id: p.row.id,
          queue: p.pyQueue,
          urn: KNOWN_URN,
          handler: p.row.handler,
          max_attempts: p.row.consumer.maxAttempts,
          dead_letter: p.row.consumer.deadLetter,
          on_unknown_urn: p.row.consumer.onUnknownUrn,
          retry_backoff_ms: p.row.consumer.retryBackoffMs,
          unknown_urn_release_delay_ms: p.row.consumer.unknownUrnReleaseDelayMs,
          max: MAX_DELIVERIES,
          idle_s: idleMs / 1000,
          ...target.peerRow?.(p.pyQueue),
        })),
      };
      const answer = await peer.run(['differential'], JSON.stringify(request), 240_000);
      const observed = new Map<string, Observed>();
      for (const p of prepared) {
        const got = answer.rows[p.row.id] as { runs: number[]; errors: string[]; crash?: string };
        const seen = await target.inspect(url, p.pyQueue, dlqOf(p.pyQueue));
        observed.set(p.row.id, {
          runs: got.runs,
          lastRunSucceeded: lastRunSucceeded(p.row.handler, got.runs.length),
          left: seen.left,
          dlq: seen.dlq,
          errorLines: got.errors.length,
          ...(got.crash === undefined ? {} : { crashed: got.crash }),
        });
      }
      return observed;
    }

    async function runOurs(p: Prepared): Promise<Observed> {
      const logger = captureLogger();
      const runs: number[] = [];
      let crashed: string | undefined;
      const app = createApp({
        transport: target.transport(url, p.tsQueue),
        queue: p.tsQueue,
        logger,
        maxAttempts: p.row.consumer.maxAttempts,
        deadLetter: p.row.consumer.deadLetter,
        onUnknownUrn: p.row.consumer.onUnknownUrn,
        retryBackoff: { baseMs: p.row.consumer.retryBackoffMs },
        unknownUrnReleaseDelayMs: p.row.consumer.unknownUrnReleaseDelayMs,
      });
      app.handle(KNOWN_URN, (_data, message) => {
        runs.push(message.attempts);
        if (p.row.handler === 'fail-always' || (p.row.handler === 'fail-once' && runs.length === 1)) {
          throw new Error(FAILURE_TEXT);
        }
      });
      try {
        await app.consume({ maxMessages: MAX_DELIVERIES, idleMs });
      } catch (e) {
        crashed = `${(e as Error).name}: ${(e as Error).message}`;
      } finally {
        await app.close();
      }
      const seen = await target.inspect(url, p.tsQueue, dlqOf(p.tsQueue));
      return {
        runs,
        lastRunSucceeded: lastRunSucceeded(p.row.handler, runs.length),
        left: seen.left,
        dlq: seen.dlq,
        errorLines: logger.lines.filter((l) => l.level === 'error').length,
        ...(crashed === undefined ? {} : { crashed }),
      };
    }

    before(async () => {
      const prepared: Prepared[] = rows.map((row) => {
        const pyQueue = uniqueQueue(`diff-${target.name}-py`);
        const tsQueue = uniqueQueue(`diff-${target.name}-ts`);
        queues.push(pyQueue, dlqOf(pyQueue), tsQueue, dlqOf(tsQueue));
        const version = row.publish.version;
        const headers = version === undefined || target.versionKey === undefined ? {} : { [target.versionKey]: version };
        return { row, body: bodyOf(row.publish.body), headers, pyQueue, tsQueue };
      });
      await target.prepare?.(url, queues);
      // The same bytes to both queues, before either consumer starts.
      for (const p of prepared) {
        await publish(p, p.pyQueue);
        await publish(p, p.tsQueue);
      }
      const python = await runPython(prepared);
      const ours = await Promise.all(prepared.map((p) => runOurs(p)));
      prepared.forEach((p, i) => {
        outcomes.set(p.row.id, {
          python: outcomeOf(python.get(p.row.id)!, { queue: p.pyQueue, published: p.body }),
          ours: outcomeOf(ours[i]!, { queue: p.tsQueue, published: p.body }),
        });
      });
      // For people reviewing a change: every outcome of this broker, agreeing or not.
      const dir = process.env.BABELQUEUE_DIFFERENTIAL_OUT;
      if (dir !== undefined) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `${target.name}.json`), `${JSON.stringify(Object.fromEntries(outcomes), null, 2)}\n`);
      }
    });

    after(async () => {
      await target.cleanup?.(url, queues);
    });

    for (const row of rows) {
      it(`${row.id}: ${row.rule}`, () => {
        const { python, ours } = outcomes.get(row.id)!;
        const { unlisted, stale } = judge(row.id, target.name, python, ours);
        const problems: string[] = [];
        if (unlisted.length > 0) {
          problems.push(
            `the Python SDK and BabelQueue settle it differently; fix the difference, or add to conformance/divergences.json ` +
              `(with its reason) what differs:\n${JSON.stringify(unlisted, null, 2)}`,
          );
        }
        for (const { entry, difference } of stale) {
          problems.push(`divergence "${entry.id}" lists ${difference.path} (${JSON.stringify(difference.python)} / ${JSON.stringify(difference.ours)}), which no longer happens here: take ${row.id}/${target.name} out of it`);
        }
        if (problems.length > 0) {
          assert.fail(`${row.id} on ${target.name}: ${problems.join('\n')}\nPython: ${JSON.stringify(python)}\nOurs:   ${JSON.stringify(ours)}`);
        }
      });
    }

    // Rows the broker cannot carry are named in one passing test, not as skipped tests:
    // under CI=true a skip reads as a suite that did not run, and these are not applicable.
    const notApplicable: [string, string][] = [
      ...Object.entries(target.unsupported ?? {}),
      ...(target.versionKey === undefined
        ? ROWS.filter((r) => r.publish.version !== undefined).map((r): [string, string] => [r.id, 'the broker carries no native schema-version metadata'])
        : []),
    ];
    if (notApplicable.length > 0) {
      it(`rows not applicable on ${target.name}: ${notApplicable.map(([id, why]) => `${id} (${why})`).join('; ')}`, () => {
        for (const [id] of notApplicable) assert.ok(!rows.some((row) => row.id === id), `${id} is both run and not applicable`);
      });
    }
  });
}

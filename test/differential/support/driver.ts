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
import { createApp, UnrecoverableError, type DeadLetterOptions, type HeaderValue, type Transport } from '@babelqueue/core';
import { uniqueQueue, type BrokerSuite } from '../../support/brokers.js';
import { captureLogger } from '../../support/capture-logger.js';
import { pythonPeer } from '../../interop/support/python-peer.js';
import { bodyOf, dlqFor, FAILURE_TEXT, KNOWN_URN, lastRunSucceeded, ROWS, runFails, SLOW_RUN_MS, type Row } from './table.js';
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
  /** The dead-letter queue of `queue`, with the row's suffix if it sets one (default `<queue>` + (suffix ?? `.dlq`)). */
  dlqName?(queue: string, suffix?: string): string;
  /** Whether the outcome records the delay each retry or release carries (default true; Kafka: the retry tier decides). */
  readonly recordsDelays?: boolean;
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A `hang` handler: its timer does not keep the test process alive (the handler outlives its worker). */
function hang(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

interface Prepared {
  readonly row: Row;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  readonly pyQueue: string;
  readonly tsQueue: string;
}

export function describeDifferential(target: DifferentialTarget): void {
  const peer = pythonPeer(`${target.name} (differential)`);
  const skip = target.broker.skip || peer.skip;
  const rows = ROWS.filter((r) => target.unsupported?.[r.id] === undefined && (r.publish.version === undefined || target.versionKey !== undefined));

  describe(`differential over ${target.name}: the Python SDK and BabelQueue settle each row alike`, { skip }, () => {
    const url = target.broker.url!;
    const idleMs = target.idleMs ?? 4_000;
    const recordsDelays = target.recordsDelays ?? true;
    const dlqOf = (row: Row, q: string) => dlqFor(row, q, (queue, suffix) => target.dlqName?.(queue, suffix) ?? `${queue}${suffix ?? '.dlq'}`);
    const queues: string[] = [];
    const outcomes = new Map<string, { python: Outcome; ours: Outcome }>();

    /** Publishes every row's bytes to both its queues, through one connection (a connection per message cost minutes on the stand-in). */
    async function publishAll(prepared: Prepared[]): Promise<void> {
      const targets = prepared.flatMap((p) => [[p, p.pyQueue], [p, p.tsQueue]] as const);
      if (target.publish) {
        for (const [p, queue] of targets) await target.publish(url, queue, p.body, p.headers);
        return;
      }
      const transport = target.transport(url, prepared[0]!.tsQueue);
      try {
        for (const [p, queue] of targets) await transport.publishRaw!(queue, p.body, p.headers);
      } finally {
        await transport.close();
      }
    }

    function peerRow(p: Prepared): Record<string, unknown> {
      const c = p.row.consumer;
      return {
        id: p.row.id,
        queue: p.pyQueue,
        urn: KNOWN_URN,
        handler: p.row.handler,
        max_attempts: c.maxAttempts,
        dead_letter: c.deadLetter,
        ...(c.deadLetterQueue === undefined ? {} : { dead_letter_queue: dlqOf(p.row, p.pyQueue) }),
        ...(c.deadLetterSuffix === undefined ? {} : { dead_letter_suffix: c.deadLetterSuffix }),
        on_unknown_urn: c.onUnknownUrn,
        retry_backoff_ms: c.retryBackoffMs,
        ...(c.retryBackoffMultiplier === undefined ? {} : { retry_backoff_multiplier: c.retryBackoffMultiplier }),
        ...(c.retryBackoffMaxMs === undefined ? {} : { retry_backoff_max_ms: c.retryBackoffMaxMs }),
        unknown_urn_release_delay_ms: c.unknownUrnReleaseDelayMs,
        ...(c.shutdownTimeoutMs === undefined ? {} : { shutdown_timeout_ms: c.shutdownTimeoutMs }),
        slow_run_ms: SLOW_RUN_MS,
        max: MAX_DELIVERIES,
        idle_s: idleMs / 1000,
        ...target.peerRow?.(p.pyQueue),
      };
    }

    async function runPython(prepared: Prepared[]): Promise<Map<string, Observed>> {
      // A `hang` row needs the SDK's signal-driven shutdown, which Python allows on the
      // main thread only: each runs in a peer process of its own, beside the others.
      const threaded = prepared.filter((p) => p.row.handler !== 'hang');
      const alone = prepared.filter((p) => p.row.handler === 'hang');
      const answers = await Promise.all([
        peer.run(['differential'], JSON.stringify({ url, rows: threaded.map(peerRow) }), 240_000),
        ...alone.map((p) => peer.run(['differential-shutdown'], JSON.stringify({ url, row: peerRow(p) }), 120_000)),
      ]);
      const rows = Object.assign({}, ...answers.map((a: { rows: object }) => a.rows)) as Record<string, { runs: number[]; errors: string[]; delays: number[]; crash?: string }>;
      const observed = new Map<string, Observed>();
      const inspections = await Promise.all(prepared.map((p) => target.inspect(url, p.pyQueue, dlqOf(p.row, p.pyQueue))));
      for (const [i, p] of prepared.entries()) {
        const got = rows[p.row.id]!;
        const seen = inspections[i]!;
        observed.set(p.row.id, {
          runs: got.runs,
          lastRunSucceeded: lastRunSucceeded(p.row.handler, got.runs.length),
          left: seen.left,
          dlq: seen.dlq,
          errorLines: got.errors.length,
          ...(recordsDelays ? { delays: got.delays } : {}),
          ...(got.crash === undefined ? {} : { crashed: got.crash }),
        });
      }
      return observed;
    }

    function deadLetterOption(p: Prepared): boolean | DeadLetterOptions {
      const c = p.row.consumer;
      if (!c.deadLetter) return false;
      if (c.deadLetterQueue !== undefined) return { queue: dlqOf(p.row, p.tsQueue) };
      if (c.deadLetterSuffix !== undefined) return { suffix: c.deadLetterSuffix };
      return true;
    }

    async function runOurs(p: Prepared): Promise<Observed> {
      const logger = captureLogger();
      const runs: number[] = [];
      let crashed: string | undefined;
      const c = p.row.consumer;
      const app = createApp({
        transport: target.transport(url, p.tsQueue),
        queue: p.tsQueue,
        logger,
        maxAttempts: c.maxAttempts,
        deadLetter: deadLetterOption(p),
        onUnknownUrn: c.onUnknownUrn,
        retryBackoff: {
          baseMs: c.retryBackoffMs,
          ...(c.retryBackoffMultiplier === undefined ? {} : { multiplier: c.retryBackoffMultiplier }),
          ...(c.retryBackoffMaxMs === undefined ? {} : { maxMs: c.retryBackoffMaxMs }),
        },
        unknownUrnReleaseDelayMs: c.unknownUrnReleaseDelayMs,
        handlerTimeoutMs: c.handlerTimeoutMs,
        shutdownTimeoutMs: c.shutdownTimeoutMs,
        // Some fifty consumers connect at once, beside the other broker files: 10 s was seen to run out on Kafka.
        connectTimeoutMs: 60_000,
      });
      // A `hang` row shuts the consumer down once its handler runs.
      const shutdown = new AbortController();
      app.handle(KNOWN_URN, async (_data, message) => {
        runs.push(message.attempts);
        const mode = p.row.handler;
        if (mode === 'unrecoverable') throw new UnrecoverableError(FAILURE_TEXT);
        if (runFails(mode, runs.length)) throw new Error(FAILURE_TEXT);
        if (mode === 'slow-once' && runs.length === 1) await sleep(SLOW_RUN_MS);
        if (mode === 'hang') {
          shutdown.abort();
          await hang(15_000);
        }
      });
      try {
        // consume() drains what is in flight; run() is the worker whose shutdown has the deadline.
        if (p.row.handler === 'hang') await app.run({ signal: shutdown.signal });
        else await app.consume({ maxMessages: MAX_DELIVERIES, idleMs });
      } catch (e) {
        crashed = `${(e as Error).name}: ${(e as Error).message}`;
      } finally {
        await app.close();
      }
      const seen = await target.inspect(url, p.tsQueue, dlqOf(p.row, p.tsQueue));
      // The retry log line carries the delay the policy gave the retry copy or release.
      const delays = logger.lines.flatMap((l) => (typeof l.fields.delayMs === 'number' ? [l.fields.delayMs] : []));
      return {
        runs,
        lastRunSucceeded: lastRunSucceeded(p.row.handler, runs.length),
        left: seen.left,
        dlq: seen.dlq,
        errorLines: logger.lines.filter((l) => l.level === 'error').length,
        ...(recordsDelays ? { delays } : {}),
        ...(crashed === undefined ? {} : { crashed }),
      };
    }

    before(async () => {
      const prepared: Prepared[] = rows.map((row) => {
        const pyQueue = uniqueQueue(`diff-${target.name}-py`);
        const tsQueue = uniqueQueue(`diff-${target.name}-ts`);
        // The binding's default DLQ too: Redis writes poison there whatever the row names.
        queues.push(pyQueue, dlqOf(row, pyQueue), tsQueue, dlqOf(row, tsQueue));
        if (row.consumer.deadLetterQueue !== undefined || row.consumer.deadLetterSuffix !== undefined) {
          queues.push(target.dlqName?.(pyQueue) ?? `${pyQueue}.dlq`, target.dlqName?.(tsQueue) ?? `${tsQueue}.dlq`);
        }
        const version = row.publish.version;
        const headers = version === undefined || target.versionKey === undefined ? {} : { [target.versionKey]: version };
        return { row, body: bodyOf(row.publish.body, row.publish.attempts), headers, pyQueue, tsQueue };
      });
      await target.prepare?.(url, queues);
      // The same bytes to both queues, before either consumer starts.
      await publishAll(prepared);
      // One side after the other: both at once, on two busy cores, left consumers idle out before their message came.
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

import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createApp, withAttempts, withoutDeadLetter } from '@babelqueue/core';
import { sleep } from '../drivers/driver.js';
import { FUZZ_CATEGORIES, fuzzBodies, type FuzzCategory, type FuzzOutcome } from '../fuzz/bodies.js';
import { LedgerReader } from '../ledger.js';
import { startRefused, WorkerPool } from '../pool.js';
import { controllerTarget, type ScenarioContext } from './context.js';
import { readAll, waitEmpty } from './queues.js';

/** One row of the fuzz table. */
export interface FuzzRow {
  published: number;
  /** Refused by the broker at publish (loudly: the publish rejected), as the driver says it must be. */
  refused: number;
  handled: number;
  poison: number;
  unknownUrn: number;
  /** Ended otherwise than the rules say (or refused when the broker should carry it). */
  wrong: number;
  /** Neither handled nor on the DLQ. */
  missing: number;
}

export interface FuzzResult {
  readonly bodies: number;
  readonly rows: Readonly<Partial<Record<FuzzCategory, FuzzRow>>>;
  /** Up to 20 examples of wrong or missing ends: category, variant, expected, what happened. */
  readonly examples: readonly string[];
  /** DLQ records whose original body could not be recovered (or was never published). */
  readonly unrecoverable: number;
  /** DLQ records of bodies whose publish failed loudly yet reached the broker (allowed: at-least-once). */
  readonly refusedButStored: number;
  /** Publishes that failed loudly and were sent again. */
  readonly republished: number;
  /** Settlements by decision (ack, dead-letter, …), every delivery counted. */
  readonly decisions: Readonly<Record<string, number>>;
  /** Worker exits nobody asked for. */
  readonly crashes: readonly string[];
  readonly leftover: Record<string, number>;
  readonly dlqLeftover: Record<string, number>;
  readonly ms: number;
  readonly aborted?: string;
}

interface Published {
  readonly category: FuzzCategory;
  readonly variant: string;
  readonly expected: FuzzOutcome;
  count: number;
}

const PUBLISH_LANES = 16;

/**
 * Publishes `count` fuzzed bodies raw (bypassing the App's encoder) while one
 * worker consumes them, then checks that each one ended as the rules say,
 * with every DLQ record's original bytes recovered and matched to what was
 * sent. The worker must neither crash nor stall.
 */
export async function runFuzz(context: ScenarioContext, count: number): Promise<FuzzResult> {
  const { driver, say } = context;
  const started = Date.now();
  mkdirSync(context.dir, { recursive: true });
  const queue = driver.queue(`rel-fuzz-${driver.name}-${context.runId}`);
  const target = controllerTarget(context, queue, 'producer');
  const transport = driver.transport(target);
  const dlq = createApp({ transport, queue, logger: target.logger, deadLetter: true }).deadLetterQueueName();
  const rows: Partial<Record<FuzzCategory, FuzzRow>> = {};
  const row = (category: FuzzCategory) => (rows[category] ??= { published: 0, refused: 0, handled: 0, poison: 0, unknownUrn: 0, wrong: 0, missing: 0 });
  const examples: string[] = [];
  const example = (line: string) => {
    if (examples.length < 20) examples.push(line);
  };
  const published = new Map<string, Published>();
  const maybeStored = new Set<string>();
  let republished = 0;
  const crashes: string[] = [];
  const decisions: Record<string, number> = {};
  const settledBy = new Map<string, number>();
  const handledBy = new Map<string, number>();
  let finishing = false;
  let aborted: string | undefined;

  const pool = new WorkerPool(context.bundle, { driver: driver.name, url: context.url, queue, mode: 'fuzz', concurrency: 16, dir: context.dir }, {
    onExit(worker) {
      if (worker.killed !== undefined || startRefused(worker)) {
        if (startRefused(worker) && !finishing) pool.start(context.rng.int(2 ** 32));
        return;
      }
      crashes.push(`${worker.id} exited by itself (code ${worker.exited?.code}, signal ${worker.exited?.signal})`);
      if (!finishing) pool.start(context.rng.int(2 ** 32));
    },
  });
  const reader = new LedgerReader(context.dir);
  const poll = () => {
    for (const event of reader.poll()) {
      if (event.kind === 'S') {
        decisions[event.detail] = (decisions[event.detail] ?? 0) + 1;
        settledBy.set(event.key, (settledBy.get(event.key) ?? 0) + 1);
      } else if (event.kind === 'H') {
        handledBy.set(event.key, (handledBy.get(event.key) ?? 0) + 1);
      }
    }
  };
  /** Bodies not settled yet (a body published k times needs k settlements). */
  const outstanding = () => {
    let n = 0;
    for (const [sha, p] of published) n += Math.max(0, p.count - (settledBy.get(sha) ?? 0));
    return n;
  };

  try {
    await driver.prepare?.(target, queue, dlq);
    await transport.connect({ timeoutMs: 60_000 });
    const worker = pool.start(context.rng.int(2 ** 32));
    if (!(await pool.ready(worker, 180_000))) throw new Error(`fuzz worker did not start consuming (see ${join(context.dir, `${worker.id}.log`)})`);

    const bodies = fuzzBodies(context.rng.fork(), count, driver.maxBodyBytes);
    const lane = async () => {
      for (let next = bodies.next(); !next.done; next = bodies.next()) {
        const body = next.value;
        const expected = driver.fuzzOutcome?.(body) ?? body.expected;
        const r = row(body.category);
        r.published += 1;
        const mustRefuse = driver.refuses?.(body.bytes) === true;
        const sha = createHash('sha1').update(body.bytes).digest('hex');
        try {
          // A body the broker carries is sent again after a loud failure, as a producer would.
          for (let attempt = 1; ; attempt++) {
            try {
              await transport.publishRaw!(queue, body.bytes);
              break;
            } catch (error) {
              if (mustRefuse || attempt === 5) throw error;
              // A refused publish may still have reached the broker (a send whose receipt was lost).
              maybeStored.add(sha);
              republished += 1;
              await sleep(200);
            }
          }
        } catch (error) {
          maybeStored.add(sha);
          r.refused += 1;
          if (!mustRefuse) {
            r.wrong += 1;
            example(`${body.category} (${body.variant}): publish refused: ${error instanceof Error ? error.message : String(error)}`);
          }
          continue;
        }
        if (mustRefuse) {
          r.wrong += 1;
          example(`${body.category} (${body.variant}): the broker took a body it cannot carry`);
        }
        const seen = published.get(sha);
        if (seen === undefined) published.set(sha, { category: body.category, variant: body.variant, expected, count: 1 });
        else seen.count += 1;
      }
    };
    await Promise.all(Array.from({ length: PUBLISH_LANES }, lane));
    say(`${count} bodies published in ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for the worker`);

    // Until every body is settled; a worker that stops settling for two minutes has stalled.
    const waitBoundMs = Math.max(300_000, count * 60);
    let last = -1;
    let lastMoved = Date.now();
    for (;;) {
      poll();
      const left = outstanding();
      if (left === 0) break;
      if (left !== last) {
        last = left;
        lastMoved = Date.now();
      } else if (Date.now() - lastMoved > 120_000) {
        aborted = `stalled: ${left} bodies unsettled for 120 s`;
        break;
      }
      // Settlements that keep coming without the count reaching zero (a body redelivered after
      // every settlement) must not hold CI forever either.
      if (Date.now() - started > waitBoundMs) {
        aborted = `${left} bodies still unsettled after ${Math.round(waitBoundMs / 1000)} s`;
        break;
      }
      await sleep(250);
    }
    finishing = true;
    say(`settled ${((Date.now() - started) / 1000).toFixed(1)} s after the start`);
    await pool.stopAll(30_000);
    poll();
    const leftover = await waitEmpty(driver, target, queue, 60_000);

    const dead = await readAll(driver, context.url, dlq, 120_000, target.logger);
    const recorded = new Map<string, string[]>();
    let unrecoverable = 0;
    let refusedButStored = 0;
    for (const record of dead.bodies) {
      const found = recoverOriginal(record, (sha) => published.has(sha) || maybeStored.has(sha));
      if (found === undefined) unrecoverable += 1;
      else if (!published.has(found.sha)) refusedButStored += 1;
      else recorded.set(found.sha, [...(recorded.get(found.sha) ?? []), found.reason]);
    }

    for (const [sha, p] of published) {
      const r = row(p.category);
      const handled = handledBy.get(sha) ?? 0;
      const reasons = recorded.get(sha) ?? [];
      const ends = handled + reasons.length;
      if (handled > 0) r.handled += p.count;
      if (reasons.includes('poison')) r.poison += p.count;
      if (reasons.includes('unknown_urn')) r.unknownUrn += p.count;
      if (ends < p.count) {
        r.missing += p.count - ends;
        example(`${p.category} (${p.variant}): expected ${p.expected}, ${p.count - ends} of ${p.count} neither handled nor dead-lettered`);
      }
      const right = p.expected === 'handled'
        ? handled >= Math.min(1, p.count) && reasons.length === 0
        : handled === 0 && reasons.every((reason) => reason === p.expected);
      if (!right && ends > 0) {
        r.wrong += p.count;
        example(`${p.category} (${p.variant}): expected ${p.expected}, got ${handled} handled${reasons.length > 0 ? ` and DLQ ${reasons.join(',')}` : ''}`);
      }
    }
    return {
      bodies: count,
      rows: Object.fromEntries(FUZZ_CATEGORIES.filter((c) => rows[c] !== undefined).map((c) => [c, rows[c]!])),
      examples,
      unrecoverable,
      refusedButStored,
      republished,
      decisions,
      crashes,
      leftover,
      dlqLeftover: dead.left,
      ms: Date.now() - started,
      ...(aborted !== undefined ? { aborted } : {}),
    };
  } finally {
    finishing = true;
    await pool.stopAll(10_000);
    await transport.close().catch(() => undefined);
    await driver.cleanup(target, [queue, dlq]).catch(() => undefined);
  }
}

/**
 * The original body a DLQ record keeps, matched to a published body:
 * a poison record keeps it as `raw` (base64 when not UTF-8), or is the
 * original object with a `dead_letter` member added; an `unknown_urn` record
 * is the original envelope with the member added and `attempts` set to the
 * counted attempt (every such fuzzed body was published with `attempts: 0`).
 */
function recoverOriginal(record: Buffer, known: (sha: string) => boolean): { sha: string; reason: string } | undefined {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(record.toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const reason = (parsed.dead_letter as { reason?: unknown } | undefined)?.reason;
  if (typeof reason !== 'string') return undefined;
  const candidates: Buffer[] = [];
  const keys = Object.keys(parsed).join(',');
  if (keys === 'raw,raw_encoding,dead_letter' && parsed.raw_encoding === 'base64') candidates.push(Buffer.from(String(parsed.raw), 'base64'));
  if (keys === 'raw,dead_letter' && typeof parsed.raw === 'string') candidates.push(Buffer.from(parsed.raw, 'utf8'));
  try {
    const without = withoutDeadLetter(record);
    candidates.push(without);
    if (reason !== 'poison') candidates.push(withAttempts(without, 0));
  } catch {
    // not an object record
  }
  for (const candidate of candidates) {
    const sha = createHash('sha1').update(candidate).digest('hex');
    if (known(sha)) return { sha, reason };
  }
  return undefined;
}

import { decodeEnvelope } from '../envelope/decode.js';
import { acceptsEnvelope, isObject, resolveUrn } from '../envelope/identity.js';
import type { Envelope } from '../envelope/types.js';
import { isVersionGated } from '../projection/version-gate.js';
import { reemit } from '../reemit/edit.js';
import { CapabilityError, ConfigurationError } from '../runtime/errors.js';
import type { Delivery, Transport } from '../transport/transport.js';
import { drainQueue } from './drain.js';
import { REPLAY_BYPASS_HEADER } from './replay.js';

/**
 * How many records one redrive takes at most when `max` is 0 ("everything
 * available now"). Every record of a batch is held unsettled at once, and
 * some brokers cap that (AMQP prefetch is 16-bit); call again for more.
 */
export const REDRIVE_BATCH_CEILING = 10_000;

/** Options of {@link redrive}. */
export interface RedriveOptions {
  /** The dead-letter queue to read (e.g. `orders.dlq`). */
  readonly from: string;
  /** Send every record here; default each record's `dead_letter.original_queue`, else its `meta.queue`. */
  readonly toQueue?: string;
  /** Take at most this many records; 0 (default) = everything available now, up to {@link REDRIVE_BATCH_CEILING}. */
  readonly max?: number;
  /** Report what would happen; every record is restored to the DLQ unchanged. */
  readonly dryRun?: boolean;
  /** Redrive only records this predicate accepts (given the decoded envelope); the others are restored. */
  readonly select?: (envelope: Envelope) => boolean;
  /**
   * Mark redriven messages as replays: native header `bq-replay-bypass: "1"`
   * (ADR-0027). Refused with a `CapabilityError` before anything moves on a
   * transport that carries no headers (the Redis zset layout).
   */
  readonly bypass?: boolean;
  /** The drain ends once no record arrived for this long (the per-pop wait). Default 1000 ms. */
  readonly idleMs?: number;
}

/** What happened to one record. */
export interface RedriveItem {
  /** `meta.id` ("" when the record has none). */
  readonly messageId: string;
  readonly traceId: string;
  readonly urn: string;
  /**
   * `dead_letter.reason`; `version_gate` for a version-gated record (one with no
   * `dead_letter` block, or whose DLQ delivery carries a gated native schema
   * version), which is always kept on the DLQ; "" when the record is not an
   * envelope and has no block.
   */
  readonly reason: string;
  /** The DLQ it was read from. */
  readonly from: string;
  /** Where it went (or would go, on a dry run); "" when unselected or undecodable. */
  readonly to: string;
  readonly redriven: boolean;
  /** Sent with the replay-bypass header. */
  readonly bypassed: boolean;
}

/** The outcome of {@link redrive}. */
export interface RedriveResult {
  readonly redriven: number;
  readonly skipped: number;
  /** One item per record taken, in the order taken. */
  readonly items: RedriveItem[];
}

/** Native riders a record keeps on its way back (trace continuity); other native metadata is broker state. */
const RIDERS = ['traceparent', 'tracestate'] as const;

/**
 * Moves dead-lettered records back to work (ADR-0026). It drains first — takes
 * up to `max` records and holds them unsettled — so records written back to the
 * DLQ are not met twice, then handles each record in order:
 *
 * - version-gated (no `dead_letter` block, which is how the spec tells the raw
 *   record of the version gate apart, or a DLQ delivery whose native schema
 *   version the gate rejects; see {@link isVersionGatedRecord}) → restored to
 *   the DLQ byte for byte, acknowledged, skipped with reason `version_gate`,
 *   whatever `toQueue` says: its gate metadata did not survive the trip to the
 *   DLQ, so a write back to work would hand a newer schema to handlers of this
 *   one, past the gate;
 * - not decodable / not an accepted envelope (poison records) → restored to the
 *   DLQ byte for byte, acknowledged, skipped;
 * - not selected → restored unchanged, skipped;
 * - dry run → restored unchanged, skipped, with `to` still reported;
 * - otherwise the reset body — the raw bytes with `dead_letter` removed and
 *   `attempts` set to 0, nothing else touched — is written to the target, and
 *   only then is the record acknowledged. If that write fails the record is
 *   restored to the DLQ, acknowledged, and the error is rethrown.
 *
 * If a write back to the DLQ fails, that record and every record not yet
 * handled are left unsettled (the broker delivers them again) and the error is
 * rethrown; nothing is lost. Works on any transport with `publishRaw`.
 *
 * @example
 * ```ts
 * const result = await redrive(transport, { from: 'orders.dlq', select: (env) => env.meta.id === id });
 * console.log(`${result.redriven} redriven, ${result.skipped} skipped`);
 * ```
 */
export async function redrive(transport: Transport, options: RedriveOptions): Promise<RedriveResult> {
  const settings = validate(transport, options);
  const publishRaw = settings.publishRaw;
  const max = settings.max === 0 ? REDRIVE_BATCH_CEILING : settings.max;
  const { from } = options;

  return drainQueue(transport, from, { max, idleMs: settings.idleMs }, async (taken) => {
    const items: RedriveItem[] = [];
    let index = 0;
    try {
      for (; index < taken.length; index++) {
        items.push(await redriveOne(taken[index] as Delivery));
      }
    } catch (error) {
      // The failing record settled itself; the rest go back to the broker untouched.
      for (const delivery of taken.slice(index + 1)) {
        await delivery.settle({ kind: 'unsettled', why: 'redrive stopped on an error' }).catch(() => undefined);
      }
      throw error;
    }
    const redriven = items.filter((item) => item.redriven).length;
    return { redriven, skipped: items.length - redriven, items };
  });

  async function redriveOne(delivery: Delivery): Promise<RedriveItem> {
    const body = delivery.body;
    const riders = ridersOf(delivery);
    // Kafka: the record key rides every write, the restores included (seed 000).
    const keyed = delivery.key === undefined ? undefined : { key: delivery.key };
    // A null value (a tombstone) is undecodable: it is only ever restored, and as null.
    const asStored = delivery.nullValue === true ? { ...keyed, nullValue: true } : keyed;
    const decoded = decodeEnvelope(body, () => undefined);
    const describe = (to: string, redriven: boolean, bypassed: boolean): RedriveItem => ({
      messageId: stringAt(decoded.meta, 'id'),
      traceId: typeof decoded.trace_id === 'string' ? decoded.trace_id : '',
      urn: resolveUrn(decoded) ?? '',
      reason: stringAt(decoded.dead_letter, 'reason'),
      from,
      to,
      redriven,
      bypassed,
    });

    const restore = async () => {
      try {
        await publishRaw(from, body, riders, asStored);
      } catch (error) {
        await delivery.settle({ kind: 'unsettled', why: 'the write back to the DLQ failed' }).catch(() => undefined);
        throw error;
      }
      await delivery.settle({ kind: 'ack' });
    };

    if (isVersionGatedRecord(decoded, delivery)) {
      await restore();
      return { ...describe('', false, false), reason: VERSION_GATE };
    }
    const envelope = acceptsEnvelope(decoded) ? decoded : undefined;
    // A record whose own queue is the DLQ being read would only loop back: restored, skipped.
    const own = envelope === undefined ? '' : targetOf(envelope, options.toQueue);
    const target = own === from ? '' : own;
    const reset = target === '' ? undefined : resetBody(body);
    if (envelope === undefined || reset === undefined) {
      await restore();
      return describe('', false, false);
    }
    let selected = true;
    try {
      selected = options.select === undefined || options.select(envelope);
    } catch (error) {
      await restore();
      throw error;
    }
    if (!selected) {
      await restore();
      return describe('', false, false);
    }
    if (options.dryRun) {
      await restore();
      return describe(target, false, false);
    }
    const headers = options.bypass ? { ...riders, [REPLAY_BYPASS_HEADER]: '1' } : riders;
    try {
      await publishRaw(target, reset, headers, keyed);
    } catch (error) {
      // The original error is the one to report; a failed restore already left the record unsettled.
      await restore().catch(() => undefined);
      throw error;
    }
    await delivery.settle({ kind: 'ack' });
    return describe(target, true, options.bypass === true);
  }
}

interface Settings {
  publishRaw: NonNullable<Transport['publishRaw']>;
  max: number;
  idleMs: number;
}

function validate(transport: Transport, options: RedriveOptions): Settings {
  if (typeof options.from !== 'string' || options.from.trim() === '') {
    throw new ConfigurationError('redrive needs the dead-letter queue to read (`from`)');
  }
  if (options.toQueue !== undefined && (typeof options.toQueue !== 'string' || options.toQueue.trim() === '')) {
    throw new ConfigurationError('redrive `toQueue` must be a non-blank queue name');
  }
  if (options.toQueue === options.from) {
    throw new ConfigurationError(`redrive \`toQueue\` is "${options.from}", the dead-letter queue it reads: the records would only loop back`);
  }
  const max = options.max ?? 0;
  if (!Number.isSafeInteger(max) || max < 0) {
    throw new ConfigurationError(`redrive \`max\` must be an integer >= 0 (0 = everything available now), got ${String(max)}`);
  }
  const idleMs = options.idleMs ?? 1000;
  if (typeof idleMs !== 'number' || !Number.isFinite(idleMs) || idleMs < 0) {
    throw new ConfigurationError(`redrive \`idleMs\` must be a number >= 0, got ${String(idleMs)}`);
  }
  if (typeof transport.publishRaw !== 'function') {
    throw new CapabilityError(`the ${transport.rules.name} transport cannot write raw records (publishRaw), so it cannot redrive`);
  }
  if (options.bypass === true && !transport.capabilities.headers) {
    // Refused before anything moves: without the header a replay would re-run its external effects.
    throw new CapabilityError(`the ${transport.rules.name} transport carries no native headers, so the replay-bypass header (${REPLAY_BYPASS_HEADER}) cannot travel with a redriven message and handlers would re-run their external effects; redrive without bypass, or use a layout or broker that carries headers`);
  }
  return { publishRaw: transport.publishRaw.bind(transport), max, idleMs };
}

/** The item reason of a version-gated record (the settlement's name for it). */
const VERSION_GATE = 'version_gate';

/**
 * True for a version-gated DLQ record: the raw body the gate wrote, recognised
 * by its missing `dead_letter` block (seed 000: every other DLQ record — failed,
 * unknown URN, poison — carries one; the raw body may not even be JSON), or a
 * record whose own native schema version the gate rejects (a peer that kept the
 * header). `record` is the decoded record (`decodeEnvelope`, `{}` when it is
 * not a JSON object); `delivery` the DLQ delivery when there is one.
 */
export function isVersionGatedRecord(record: { readonly dead_letter?: unknown }, delivery?: Pick<Delivery, 'nativeSchemaVersion'>): boolean {
  return !isObject(record.dead_letter) || isVersionGated(delivery?.nativeSchemaVersion);
}

/** The record's own queue: `dead_letter.original_queue`, else `meta.queue`; "" when neither is usable. */
function targetOf(envelope: Envelope, toQueue: string | undefined): string {
  if (toQueue !== undefined) return toQueue;
  const original = stringAt(envelope.dead_letter, 'original_queue');
  if (original.trim() !== '') return original;
  const queue = stringAt(envelope.meta, 'queue');
  return queue.trim() !== '' ? queue : '';
}

/** The raw bytes without `dead_letter` and with `attempts` 0; undefined if they cannot be edited. */
function resetBody(body: Buffer): Buffer | undefined {
  try {
    return reemit(body, { deadLetter: null, attempts: 0 });
  } catch {
    return undefined;
  }
}

function ridersOf(delivery: Delivery): Record<string, string> {
  const riders: Record<string, string> = {};
  for (const name of RIDERS) {
    const value = delivery.headers[name];
    if (typeof value === 'string' && value !== '') riders[name] = value;
  }
  return riders;
}

function stringAt(value: unknown, key: string): string {
  if (!isObject(value)) return '';
  const found = value[key];
  return typeof found === 'string' ? found : '';
}

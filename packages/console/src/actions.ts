import { redrive, REDRIVE_BATCH_CEILING, type ConsumeOptions, type Decision, type Logger, type RedriveItem, type ScannedRecord, type Transport } from '@babelqueue/core';
import { type Delivery, type RawPublishOptions } from '@babelqueue/core/binding';
import type { InterruptedAction, Journal } from './journal.js';
import type { RecordFilter } from './filter.js';
import { locate, type RecordRef } from './locate.js';
import { recordHash, summarize } from './records.js';
import { planRedrive, ridersOf } from './redrive-plan.js';
import { eachMatchingChunk } from './matching-chunks.js';
import { matchesParsed } from './search.js';
import type { RecordSource } from './source.js';
import { takeChosen } from './take-chosen.js';

/** What happened to one record in an action. */
export interface ActionItem {
  readonly hash: string;
  readonly message_id: string | null;
  readonly urn: string | null;
  readonly outcome: 'redriven' | 'kept' | 'deleted' | 'not-found' | 'locked';
  /** Where a redriven record went. */
  readonly to?: string;
  /** Why a record was kept, or what else to know. */
  readonly note?: string;
}

/** The counts an action reports, and the error that stopped it midway (nothing was lost). */
export interface ActionResult {
  readonly action: 'redrive' | 'delete' | 'purge' | 'recover';
  readonly dlq: string;
  /** How records were moved: `remove` (targeted, list brokers), `drain` (take and restore), `purge`. */
  readonly method: 'remove' | 'drain' | 'purge';
  readonly redriven: number;
  readonly deleted: number;
  readonly kept: number;
  readonly not_found: number;
  /** Chosen records another receiver holds locked (left untouched): try again after {@link retry_after_s}. */
  readonly locked: number;
  /** With `locked`: seconds until the last of their locks lapses. */
  readonly retry_after_s?: number;
  /** The first items (at most 200), for the page. */
  readonly items: ActionItem[];
  readonly error?: string;
  readonly note?: string;
}

/** Options of a redrive from the console. */
export interface RedriveRequest {
  /** Send every record here instead of its own queue. */
  readonly toQueue?: string;
  /** Mark the messages as replays (`bq-replay-bypass: 1`). */
  readonly bypass: boolean;
}

/** The action layer's view of the console's settings. */
export interface ActionContext {
  readonly transport: Transport;
  readonly source: RecordSource;
  readonly logger: Logger;
  readonly scanLimit: number;
  /** The drain's per-pop wait on brokers without targeted removal. */
  readonly idleMs: number;
}

/**
 * The transport as an action on `dlq` uses it: every raw write is journaled
 * once it is done (`sent` to another queue, `restored` to the DLQ itself),
 * before the original leaves the DLQ, so a kill in between is found at the
 * next start. A proxy, so the core's redrive writes through it too; every
 * other member is the transport's own, bound to it.
 */
export function journaled(transport: Transport, dlq: string, journal: Journal): Transport {
  const publishRaw = transport.publishRaw?.bind(transport);
  const consume = transport.consume.bind(transport);
  const remove = transport.remove?.bind(transport);
  const markLeft = (body: Buffer) => {
    const plan = planRedrive(body, undefined);
    if (plan.kind === 'send') journal.mark(dlq, 'left', recordHash(plan.body));
  };
  return new Proxy(transport, {
    get(target, property) {
      if (property === 'publishRaw' && publishRaw !== undefined) {
        return async (queue: string, body: Buffer, headers?: Readonly<Record<string, string>>, options?: RawPublishOptions) => {
          // The intent first: a stop between the write and its `sent` line leaves a copy the journal still names.
          if (queue !== dlq) journal.mark(dlq, 'sending', recordHash(body), queue);
          await publishRaw(queue, body, headers, options);
          journal.mark(dlq, queue === dlq ? 'restored' : 'sent', recordHash(body));
        };
      }
      if (property === 'remove' && remove !== undefined) {
        return async (queue: string, body: Buffer) => {
          const removed = await remove(queue, body);
          if (removed && queue === dlq) markLeft(body);
          return removed;
        };
      }
      if (property === 'consume') {
        // A record taken off the DLQ: once it is settled away, its copy (if one was sent) is no longer in two places.
        return (queue: string, onDelivery: (delivery: Delivery) => Promise<void>, options: ConsumeOptions) => consume(queue, (delivery) => onDelivery(queue === dlq ? leaving(delivery) : delivery), options);
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });

  function leaving(delivery: Delivery): Delivery {
    const settle = async (decision: Decision) => {
      await delivery.settle(decision);
      if (decision.kind === 'ack' || decision.kind === 'drop') markLeft(delivery.body);
    };
    return new Proxy(delivery, {
      get(target, property) {
        if (property === 'settle') return settle;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}

/**
 * Finishes an interrupted action: every record it had already copied to its
 * target (`sent`) and that is still on the DLQ is removed from it, and of a
 * record it had written back (`restored`) and that is now on the DLQ twice,
 * one copy is removed. Read from the DLQ as it is now, so a record whose
 * original did leave is left alone.
 */
export async function recover(ctx: ActionContext, dlq: string, interrupted: InterruptedAction): Promise<ActionResult> {
  const outcome = emptyResult('recover', dlq, typeof ctx.transport.remove === 'function' ? 'remove' : 'drain');
  // A `sent` line names the copy written (the reset body), a `restored` one the stored bytes.
  const byStored = new Map<string, ScannedRecord[]>();
  const byCopy = new Map<string, ScannedRecord[]>();
  let scanned = 0;
  for await (const record of ctx.source.read(dlq, 0)) {
    const add = (into: Map<string, ScannedRecord[]>, hash: string) => into.set(hash, [...(into.get(hash) ?? []), record]);
    add(byStored, recordHash(record.body));
    const plan = planRedrive(record.body, undefined);
    if (plan.kind === 'send') add(byCopy, recordHash(plan.body));
    if (++scanned >= ctx.scanLimit) break;
  }
  const extra: ScannedRecord[] = [];
  const chosen = new Set<ScannedRecord>();
  const pick = (copies: ScannedRecord[] | undefined, keep: number) => {
    const left = (copies ?? []).filter((r) => !chosen.has(r));
    if (left.length > keep) {
      chosen.add(left[0] as ScannedRecord);
      extra.push(left[0] as ScannedRecord);
    }
  };
  // Every copy on its target whose original the DLQ still shows goes, even one the action saw settled:
  // a Kafka acknowledgement is a commit still to be sent when the process dies.
  const seenLeaving = [...interrupted.left];
  const copies = [...interrupted.sent];
  // A copy whose write had begun when the action stopped (no `sent` line): if it reached its target, the original goes too.
  const confirmed = [...interrupted.sent];
  for (const intent of interrupted.sending) {
    const at = confirmed.indexOf(intent.hash);
    if (at >= 0) {
      confirmed.splice(at, 1);
      continue;
    }
    if ((byCopy.get(intent.hash) ?? []).length > 0 && (await onQueue(ctx, intent.queue, intent.hash))) copies.push(intent.hash);
  }
  // A copied record not on the DLQ that the action did not see leave may still be held for the stopped process.
  let away = 0;
  for (const hash of copies) {
    const before = extra.length;
    pick(byCopy.get(hash), 0);
    if (extra.length > before) continue;
    const at = seenLeaving.indexOf(hash);
    if (at >= 0) seenLeaving.splice(at, 1);
    else away += 1;
  }
  for (const hash of interrupted.restored) pick(byStored.get(hash), 1);
  const remove = ctx.transport.remove?.bind(ctx.transport);
  try {
    if (remove !== undefined) {
      for (const record of extra) push(outcome, (await remove(dlq, record.body)) ? item(record, 'deleted', 'a copy already on its target or written back') : item(record, 'not-found'));
    } else if (extra.length > 0) {
      const result = await takeChosen(ctx.transport, dlq, wantedOf(extra), takeOptions(ctx), (delivery) => delivery.settle({ kind: 'ack' }));
      pushTaken(outcome, extra, result.done, 'deleted');
    }
  } catch (error) {
    outcome.error = messageOf(error);
  }
  if (outcome.error === undefined && outcome.deleted > 0) {
    // Read again: a removal only counts once the DLQ shows it (a Kafka commit can be lost to a rebalance while the dead process's member is still in the group).
    const still = await countOn(ctx, dlq, extra.map((r) => recordHash(r.body)));
    if (still > byStoredCount(byStored, extra)) {
      outcome.error = `the DLQ still shows ${still - byStoredCount(byStored, extra)} of the removed records (the broker did not keep the removal yet); try again in a few seconds`;
      outcome.retry_after_s = 5;
    }
  }
  if (outcome.error === undefined && outcome.not_found > 0) {
    outcome.error = `${outcome.not_found} record(s) in two places could not be taken yet (a broker may hand the dead process's records to a new reader only after a while); try again in a few seconds`;
  }
  const stoppedAgo = Date.now() - interrupted.last_write;
  // Where reads peek and actions remove in place (Redis), nothing is held for a stopped process: a record not on the DLQ has left.
  const graceMs = remove !== undefined && (ctx.transport.capabilities.scan ?? 'peek') === 'peek' ? 0 : HOLD_GRACE_MS;
  if (outcome.error === undefined && away > 0 && stoppedAgo < graceMs) {
    outcome.error = `${away} record(s) the interrupted action copied to their target are not on ${dlq} now, and it did not see them leave: the broker may still hold them for the stopped process (they come back when it notices or their lock lapses); try again in ${Math.ceil((graceMs - stoppedAgo) / 1000)} s at most`;
    outcome.retry_after_s = Math.min(10, Math.ceil((graceMs - stoppedAgo) / 1000));
  } else if (outcome.error === undefined && away > 0) {
    outcome.note = graceMs === 0
      ? `${away} record(s) the interrupted action copied are not on ${dlq}: removed just before the stop (this broker holds nothing for a stopped process)`
      : `${away} record(s) the interrupted action copied did not come back to ${dlq} within ${graceMs / 1000} s of the stop: taken as left (acknowledged just before the stop)`;
  } else if (extra.length === 0) {
    outcome.note = 'no record of the interrupted action is in two places';
  }
  log(ctx, outcome);
  return finish(outcome);
}

/** How many records of `dlq` have one of the fingerprints `hashes` (each counted once per record). */
async function countOn(ctx: ActionContext, dlq: string, hashes: readonly string[]): Promise<number> {
  const wanted = new Set(hashes);
  let count = 0;
  let scanned = 0;
  for await (const record of ctx.source.read(dlq, 0)) {
    if (wanted.has(recordHash(record.body))) count += 1;
    if (++scanned >= ctx.scanLimit) break;
  }
  return count;
}

/** How many records the DLQ held with the fingerprints of `extra` before the removal, less one per removed record: what should be left. */
function byStoredCount(byStored: ReadonlyMap<string, ScannedRecord[]>, extra: readonly ScannedRecord[]): number {
  const hashes = new Set(extra.map((r) => recordHash(r.body)));
  let before = 0;
  for (const hash of hashes) before += (byStored.get(hash) ?? []).length;
  return before - extra.length;
}

/** Whether a record with fingerprint `hash` waits on `queue` (read as the DLQ is; a queue the binding will not read counts as no). */
async function onQueue(ctx: ActionContext, queue: string, hash: string): Promise<boolean> {
  try {
    let scanned = 0;
    for await (const record of ctx.source.read(queue, 0)) {
      if (recordHash(record.body) === hash) return true;
      if (++scanned >= ctx.scanLimit) return false;
    }
  } catch (error) {
    ctx.logger.warn({ queue, error: messageOf(error) }, 'console: cannot read the target queue to see whether an interrupted copy reached it; the original stays on the DLQ');
  }
  return false;
}

/**
 * How long after an action stopped (its journal's last write) a record it had
 * copied may still be held for the stopped process and come back to the DLQ:
 * a dead connection's deliveries return when the broker notices (RabbitMQ,
 * Artemis, Pulsar: at once to a heartbeat's minute), a lease or lock when it
 * lapses (SQS's visibility timeout, a Service Bus lock: 30-60 s by default).
 */
const HOLD_GRACE_MS = 90_000;

const ITEMS_SHOWN = 200;

/** The least wait of a drain for chosen records (it ends as soon as they are all taken). */
const FIRST_DELIVERY_WAIT_MS = 10_000;

/** Thrown for a request the broker cannot honour (no headers for bypass, no purge); the API answers 400. */
export class UnsupportedActionError extends Error {
  override readonly name = 'UnsupportedActionError';
}

/** Redrives the records `refs` name. */
export async function redriveSelected(ctx: ActionContext, dlq: string, refs: readonly RecordRef[], request: RedriveRequest): Promise<ActionResult> {
  refuseBypass(ctx.transport, request);
  const found = await locate(ctx.source, dlq, refs, ctx.scanLimit);
  const missing = refs.filter((r) => !found.has(r)).map(notFound);
  if (typeof ctx.transport.remove === 'function') {
    return removeEach(ctx, dlq, [...found.values()], request, missing);
  }
  return takeAndRedrive(ctx, dlq, [...found.values()], request, missing);
}

/** Redrives every record that passes `filter`, up to the scan limit (list brokers) or the drain ceiling. */
export async function redriveMatching(ctx: ActionContext, dlq: string, filter: RecordFilter, request: RedriveRequest): Promise<ActionResult> {
  refuseBypass(ctx.transport, request);
  if (typeof ctx.transport.remove !== 'function' || ctx.source.mode === 'none') {
    return drainRedrive(ctx, dlq, request, filter);
  }
  // Move each chunk of matches; the next scan starts where this one stopped, less what left the list.
  const outcome = emptyResult('redrive', dlq, 'remove');
  const { scanned, limited } = await eachMatchingChunk(ctx.source, dlq, filter, ctx.scanLimit, async (chunk) => {
    const result = await removeEach(ctx, dlq, chunk, request, []);
    merge(outcome, result);
    return result.error === undefined ? result.redriven : undefined;
  });
  return limited ? { ...outcome, note: `stopped after scanning ${scanned} records (the scan limit); run it again for more` } : outcome;
}

/** Deletes the records `refs` name. */
export async function deleteSelected(ctx: ActionContext, dlq: string, refs: readonly RecordRef[]): Promise<ActionResult> {
  const found = await locate(ctx.source, dlq, refs, ctx.scanLimit);
  const outcome = emptyResult('delete', dlq, typeof ctx.transport.remove === 'function' ? 'remove' : 'drain');
  outcome.items.push(...refs.filter((r) => !found.has(r)).map(notFound));
  outcome.not_found = outcome.items.length;
  const records = setLockedApart(outcome, [...found.values()]);
  const remove = ctx.transport.remove?.bind(ctx.transport);
  try {
    if (remove !== undefined) {
      for (const record of records) {
        const removed = await remove(dlq, record.body);
        push(outcome, removed ? item(record, 'deleted') : item(record, 'not-found', 'taken by someone else meanwhile'));
      }
    } else if (records.length > 0) {
      const result = await takeChosen(ctx.transport, dlq, wantedOf(records), takeOptions(ctx), (delivery) => delivery.settle({ kind: 'ack' }));
      pushTaken(outcome, records, result.done, 'deleted');
      if (result.restored > 0) outcome.note = `${result.restored} record(s) taken ahead of them were written back to the end of ${dlq}`;
    }
  } catch (error) {
    // A drain that stopped midway says which records it had already deleted.
    pushDone(outcome, records, (error as { done?: string[] }).done ?? [], 'deleted');
    outcome.error = messageOf(error);
  }
  ctx.logger.info({ dlq, action: 'delete', method: outcome.method, deleted: outcome.deleted, notFound: outcome.not_found, ...(outcome.error ? { error: outcome.error } : {}) }, 'console: delete');
  return finish(outcome);
}

/** Deletes every waiting record of the DLQ. */
export async function purgeAll(ctx: ActionContext, dlq: string): Promise<ActionResult> {
  const purge = ctx.transport.purge?.bind(ctx.transport);
  if (purge === undefined) throw new UnsupportedActionError(`the ${ctx.transport.rules.name} binding cannot purge a queue`);
  const outcome = emptyResult('purge', dlq, 'purge');
  outcome.deleted = await purge(dlq);
  ctx.logger.info({ dlq, action: 'purge', deleted: outcome.deleted }, 'console: purge');
  return finish(outcome);
}

/** Publish the reset copy first, then remove the record: a failure in between leaves a copy on both sides, never none. */
async function removeEach(ctx: ActionContext, dlq: string, records: readonly ScannedRecord[], request: RedriveRequest, missing: ActionItem[]): Promise<ActionResult> {
  const outcome = emptyResult('redrive', dlq, 'remove');
  outcome.items.push(...missing);
  outcome.not_found = missing.length;
  const publishRaw = ctx.transport.publishRaw?.bind(ctx.transport);
  const remove = ctx.transport.remove?.bind(ctx.transport);
  if (publishRaw === undefined || remove === undefined) throw new UnsupportedActionError(`the ${ctx.transport.rules.name} binding cannot write raw records`);
  try {
    for (const record of setLockedApart(outcome, records)) {
      const plan = planRedrive(record.body, request.toQueue);
      if (plan.kind === 'keep') {
        push(outcome, item(record, 'kept', plan.why));
        continue;
      }
      await publishRaw(plan.target, plan.body, ridersOf(record.headers, request.bypass), record.key === undefined ? undefined : { key: record.key });
      const removed = await remove(dlq, record.body);
      push(outcome, { ...item(record, 'redriven', removed ? undefined : `was already gone from ${dlq} (taken meanwhile): it may now run twice`), to: plan.target });
    }
  } catch (error) {
    outcome.error = messageOf(error);
  }
  log(ctx, outcome);
  return finish(outcome);
}

/**
 * Redrive of chosen records on a broker without targeted removal: take the
 * records up to the last chosen one ({@link takeChosen}), write each chosen
 * one's reset copy to its target before acknowledging it, write the others
 * taken ahead of them back, and leave the rest in place. Records that would
 * fail again (poison, version-gated, no target) are kept without being taken.
 */
async function takeAndRedrive(ctx: ActionContext, dlq: string, records: readonly ScannedRecord[], request: RedriveRequest, missing: ActionItem[]): Promise<ActionResult> {
  const outcome = emptyResult('redrive', dlq, 'drain');
  outcome.items.push(...missing);
  outcome.not_found = missing.length;
  const publishRaw = ctx.transport.publishRaw?.bind(ctx.transport);
  if (publishRaw === undefined) throw new UnsupportedActionError(`the ${ctx.transport.rules.name} binding cannot write raw records`);
  const moving: ScannedRecord[] = [];
  for (const record of setLockedApart(outcome, records)) {
    const plan = planRedrive(record.body, request.toQueue);
    if (plan.kind === 'keep') push(outcome, item(record, 'kept', plan.why));
    else moving.push(record);
  }
  const targets = new Map<string, string>();
  try {
    if (moving.length > 0) {
      const result = await takeChosen(ctx.transport, dlq, wantedOf(moving), takeOptions(ctx), async (delivery) => {
        const plan = planRedrive(delivery.body, request.toQueue);
        if (plan.kind === 'keep') throw new Error('a chosen record changed under the action');
        await publishRaw(plan.target, plan.body, ridersOf(delivery.headers, request.bypass), delivery.key === undefined ? undefined : { key: delivery.key });
        await delivery.settle({ kind: 'ack' });
        targets.set(recordHash(delivery.body), plan.target);
      });
      pushTaken(outcome, moving, result.done, 'redriven', targets);
      if (result.restored > 0) outcome.note = `${result.restored} record(s) taken ahead of them were written back to the end of ${dlq}`;
    }
  } catch (error) {
    pushDone(outcome, moving, (error as { done?: string[] }).done ?? [], 'redriven', targets);
    outcome.error = messageOf(error);
  }
  log(ctx, outcome);
  return finish(outcome);
}

/**
 * Sets apart the chosen records the broker shows locked by another receiver
 * (`lockedUntil`, a Service Bus peek-lock): no drain can take them before the
 * lock lapses, so they get a "locked, try again in N s" item instead of a
 * drain that would wait for them and answer "not found".
 */
function setLockedApart(outcome: Mutable<ActionResult>, records: readonly ScannedRecord[]): ScannedRecord[] {
  const now = Date.now();
  const free: ScannedRecord[] = [];
  for (const record of records) {
    if (record.lockedUntil === undefined || record.lockedUntil <= now) {
      free.push(record);
      continue;
    }
    const seconds = Math.ceil((record.lockedUntil - now) / 1000);
    outcome.retry_after_s = Math.max(outcome.retry_after_s ?? 0, seconds);
    push(outcome, item(record, 'locked', `locked by another receiver, try again in ${seconds} s`));
  }
  return free;
}

/** The fingerprints of `records`, each with how many times it is chosen. */
export function wantedOf(records: readonly ScannedRecord[]): Map<string, number> {
  const wanted = new Map<string, number>();
  for (const record of records) wanted.set(recordHash(record.body), (wanted.get(recordHash(record.body)) ?? 0) + 1);
  return wanted;
}

/**
 * The drain of an action on chosen records ends as soon as every chosen record
 * was taken, so its wait only matters when one is missing; it is at least
 * {@link FIRST_DELIVERY_WAIT_MS}, because some brokers' clients take seconds
 * to hand over the first record (the Service Bus SDK: a chosen record was
 * reported "not found" with a 1 s wait).
 */
export function takeOptions(ctx: ActionContext): { max: number; idleMs: number } {
  return { max: REDRIVE_BATCH_CEILING, idleMs: Math.max(ctx.idleMs, FIRST_DELIVERY_WAIT_MS) };
}

/** One item per chosen record: `done` (fingerprints handled) says which were; the others were not among those taken. */
function pushTaken(outcome: Mutable<ActionResult>, records: readonly ScannedRecord[], done: readonly string[], as: 'deleted' | 'redriven', targets?: ReadonlyMap<string, string>): void {
  const left = [...done];
  for (const record of records) {
    const at = left.indexOf(recordHash(record.body));
    if (at >= 0) left.splice(at, 1);
    const target = targets?.get(recordHash(record.body));
    push(outcome, at >= 0 ? { ...item(record, as), ...(target !== undefined ? { to: target } : {}) } : item(record, 'not-found', 'not among the records taken'));
  }
}

/** After an error: items for the chosen records already handled. */
function pushDone(outcome: Mutable<ActionResult>, records: readonly ScannedRecord[], done: readonly string[], as: 'deleted' | 'redriven', targets?: ReadonlyMap<string, string>): void {
  const pool = [...records];
  for (const hash of done) {
    const at = pool.findIndex((r) => recordHash(r.body) === hash);
    if (at < 0) continue;
    const [record] = pool.splice(at, 1) as [ScannedRecord];
    const target = targets?.get(hash);
    push(outcome, { ...item(record, as), ...(target !== undefined ? { to: target } : {}) });
  }
}

/** The core's redrive of every record matching `filter` (drain, then reset or restore) for brokers without targeted removal. */
async function drainRedrive(ctx: ActionContext, dlq: string, request: RedriveRequest, filter: RecordFilter): Promise<ActionResult> {
  const outcome = emptyResult('redrive', dlq, 'drain');
  try {
    const result = await redrive(ctx.transport, {
      from: dlq,
      bypass: request.bypass,
      idleMs: ctx.idleMs,
      ...(request.toQueue !== undefined ? { toQueue: request.toQueue } : {}),
      select: (env) => matchesParsed(env as unknown as Record<string, unknown>, filter),
    });
    for (const it of result.items) {
      push(outcome, {
        hash: '',
        message_id: it.messageId || null,
        urn: it.urn || null,
        outcome: it.redriven ? 'redriven' : 'kept',
        ...(it.redriven ? { to: it.to } : { note: keptNote(it) }),
      });
    }
    if (result.items.length >= REDRIVE_BATCH_CEILING) outcome.note = `took the first ${REDRIVE_BATCH_CEILING} records; run it again for more`;
  } catch (error) {
    outcome.error = messageOf(error);
  }
  log(ctx, outcome);
  return finish(outcome);
}

/** Why the core's redrive restored a record. */
function keptNote(it: RedriveItem): string {
  if (it.reason === 'version_gate') return 'version-gated (no dead_letter block): restored, never sent past its gate';
  return it.urn === '' ? 'not an envelope (poison): restored' : 'restored';
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function emptyResult(action: ActionResult['action'], dlq: string, method: ActionResult['method']): Mutable<ActionResult> & { items: ActionItem[] } {
  return { action, dlq, method, redriven: 0, deleted: 0, kept: 0, not_found: 0, locked: 0, items: [] };
}

function push(outcome: Mutable<ActionResult>, entry: ActionItem): void {
  if (entry.outcome === 'redriven') outcome.redriven += 1;
  else if (entry.outcome === 'deleted') outcome.deleted += 1;
  else if (entry.outcome === 'kept') outcome.kept += 1;
  else if (entry.outcome === 'locked') outcome.locked += 1;
  else outcome.not_found += 1;
  outcome.items.push(entry);
}

function merge(into: Mutable<ActionResult>, from: ActionResult): void {
  into.redriven += from.redriven;
  into.kept += from.kept;
  into.not_found += from.not_found;
  into.locked += from.locked;
  if (from.retry_after_s !== undefined) into.retry_after_s = Math.max(into.retry_after_s ?? 0, from.retry_after_s);
  into.items.push(...from.items);
  if (from.error !== undefined) into.error = from.error;
}

function finish(outcome: Mutable<ActionResult>): ActionResult {
  return { ...outcome, items: outcome.items.slice(0, ITEMS_SHOWN) };
}

function item(record: ScannedRecord, outcome: ActionItem['outcome'], note?: string): ActionItem {
  const summary = summarize(record);
  return { hash: summary.hash, message_id: summary.message_id, urn: summary.urn, outcome, ...(note !== undefined ? { note } : {}) };
}

function notFound(ref: RecordRef): ActionItem {
  return { hash: ref.hash, message_id: null, urn: null, outcome: 'not-found', note: 'no longer on the DLQ (redriven, deleted or taken meanwhile)' };
}

function refuseBypass(transport: Transport, request: RedriveRequest): void {
  if (request.bypass && !transport.capabilities.headers) {
    throw new UnsupportedActionError(`the ${transport.rules.name} binding carries no native headers, so the replay-bypass header cannot travel with a redriven message; redrive without bypass`);
  }
}

function log(ctx: ActionContext, outcome: ActionResult): void {
  ctx.logger.info(
    { dlq: outcome.dlq, action: outcome.action, method: outcome.method, redriven: outcome.redriven, kept: outcome.kept, notFound: outcome.not_found, ...(outcome.error ? { error: outcome.error } : {}) },
    `console: ${outcome.action}`,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import { redrive, REDRIVE_BATCH_CEILING, type Logger, type RedriveItem, type ScannedRecord, type Transport } from '@babelqueue/core';
import { matches, type RecordFilter } from './filter.js';
import { locate, type RecordRef } from './locate.js';
import { describe, recordHash, summarize } from './records.js';
import { planRedrive, ridersOf } from './redrive-plan.js';
import type { RecordSource } from './source.js';
import { takeAndDelete } from './take-and-delete.js';

/** What happened to one record in an action. */
export interface ActionItem {
  readonly hash: string;
  readonly message_id: string | null;
  readonly urn: string | null;
  readonly outcome: 'redriven' | 'kept' | 'deleted' | 'not-found';
  /** Where a redriven record went. */
  readonly to?: string;
  /** Why a record was kept, or what else to know. */
  readonly note?: string;
}

/** The counts an action reports, and the error that stopped it midway (nothing was lost). */
export interface ActionResult {
  readonly action: 'redrive' | 'delete' | 'purge';
  readonly dlq: string;
  /** How records were moved: `remove` (targeted, list brokers), `drain` (take and restore), `purge`. */
  readonly method: 'remove' | 'drain' | 'purge';
  readonly redriven: number;
  readonly deleted: number;
  readonly kept: number;
  readonly not_found: number;
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

const ITEMS_SHOWN = 200;

/** Records a bulk redrive over a list broker moves per scan. */
const CHUNK = 200;

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
  const ids = new Set([...found.values()].map((r) => summarize(r).message_id).filter((id): id is string => id !== null && id !== ''));
  const result = await drainRedrive(ctx, dlq, request, (id) => ids.has(id), missing);
  return { ...result, note: 'matched by meta.id: every record with a selected meta.id among those taken moves' };
}

/** Redrives every record that passes `filter`, up to the scan limit (list brokers) or the drain ceiling. */
export async function redriveMatching(ctx: ActionContext, dlq: string, filter: RecordFilter, request: RedriveRequest): Promise<ActionResult> {
  refuseBypass(ctx.transport, request);
  if (typeof ctx.transport.remove !== 'function' || ctx.source.mode !== 'scan') {
    return drainRedrive(ctx, dlq, request, undefined, [], filter);
  }
  // Scan a chunk of matches, move them, go on from where the scan stopped less what left the list.
  const outcome = emptyResult('redrive', dlq, 'remove');
  let from = 0;
  let scanned = 0;
  for (;;) {
    const chunk: ScannedRecord[] = [];
    let end = true;
    let next = from;
    for await (const record of ctx.source.read(dlq, from)) {
      if (chunk.length === CHUNK || scanned >= ctx.scanLimit) {
        end = false;
        break;
      }
      scanned += 1;
      next = record.index + 1;
      if (matches(summarize(record), filter)) chunk.push(record);
    }
    const result = await removeEach(ctx, dlq, chunk, request, []);
    merge(outcome, result);
    if (result.error !== undefined || end || scanned >= ctx.scanLimit) {
      const limited = !end && scanned >= ctx.scanLimit && result.error === undefined;
      return limited ? { ...outcome, note: `stopped after scanning ${scanned} records (the scan limit); run it again for more` } : outcome;
    }
    from = next - result.redriven;
  }
}

/** Deletes the records `refs` name. */
export async function deleteSelected(ctx: ActionContext, dlq: string, refs: readonly RecordRef[]): Promise<ActionResult> {
  const found = await locate(ctx.source, dlq, refs, ctx.scanLimit);
  const outcome = emptyResult('delete', dlq, typeof ctx.transport.remove === 'function' ? 'remove' : 'drain');
  outcome.items.push(...refs.filter((r) => !found.has(r)).map(notFound));
  outcome.not_found = outcome.items.length;
  const records = [...found.values()];
  const remove = ctx.transport.remove?.bind(ctx.transport);
  try {
    if (remove !== undefined) {
      for (const record of records) {
        const removed = await remove(dlq, record.body);
        push(outcome, removed ? item(record, 'deleted') : item(record, 'not-found', 'taken by someone else meanwhile'));
      }
    } else if (records.length > 0) {
      const wanted = new Map<string, number>();
      for (const record of records) wanted.set(recordHash(record.body), (wanted.get(recordHash(record.body)) ?? 0) + 1);
      const result = await takeAndDelete(ctx.transport, dlq, wanted, { max: REDRIVE_BATCH_CEILING, idleMs: ctx.idleMs });
      const left = [...result.deleted];
      for (const record of records) {
        const at = left.indexOf(recordHash(record.body));
        if (at >= 0) left.splice(at, 1);
        push(outcome, at >= 0 ? item(record, 'deleted') : item(record, 'not-found', 'not among the records taken'));
      }
      if (result.restored > 0) outcome.note = `${result.restored} record(s) taken ahead of them were written back to the end of ${dlq}`;
    }
  } catch (error) {
    // A drain that stopped midway says which records it had already deleted.
    for (const hash of (error as { deleted?: string[] }).deleted ?? []) {
      const record = records.find((r) => recordHash(r.body) === hash);
      if (record !== undefined) push(outcome, item(record, 'deleted'));
    }
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
    for (const record of records) {
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

/** The core's redrive (drain, then restore or reset) for brokers without targeted removal. */
async function drainRedrive(
  ctx: ActionContext,
  dlq: string,
  request: RedriveRequest,
  byId: ((id: string) => boolean) | undefined,
  missing: ActionItem[],
  filter?: RecordFilter,
): Promise<ActionResult> {
  const outcome = emptyResult('redrive', dlq, 'drain');
  outcome.items.push(...missing);
  outcome.not_found = missing.length;
  try {
    const result = await redrive(ctx.transport, {
      from: dlq,
      bypass: request.bypass,
      idleMs: ctx.idleMs,
      ...(request.toQueue !== undefined ? { toQueue: request.toQueue } : {}),
      select: (env) => (byId === undefined || byId(env.meta.id)) && (filter === undefined || matches(describe(env as unknown as Record<string, unknown>), filter)),
    });
    for (const it of result.items) {
      if (!it.redriven && byId !== undefined) continue; // unselected records were restored untouched
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
  return { action, dlq, method, redriven: 0, deleted: 0, kept: 0, not_found: 0, items: [] };
}

function push(outcome: Mutable<ActionResult>, entry: ActionItem): void {
  if (entry.outcome === 'redriven') outcome.redriven += 1;
  else if (entry.outcome === 'deleted') outcome.deleted += 1;
  else if (entry.outcome === 'kept') outcome.kept += 1;
  else outcome.not_found += 1;
  outcome.items.push(entry);
}

function merge(into: Mutable<ActionResult>, from: ActionResult): void {
  into.redriven += from.redriven;
  into.kept += from.kept;
  into.not_found += from.not_found;
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

import { decodeEnvelope, EnvelopeValidator, REDRIVE_BATCH_CEILING, reemit, type JsonObject, type ScannedRecord } from '@babelqueue/core';
import type { ActionContext, ActionResult, RedriveRequest } from './actions.js';
import { BadQueryError } from './filter.js';
import { locate, type RecordRef } from './locate.js';
import { recordHash, summarize } from './records.js';
import { planRedrive, ridersOf } from './redrive-plan.js';
import { takeChosen } from './take-chosen.js';

/** An edit's new `data`: the page sends it as JSON text, so the server parses it once and sees every number as written. */
export const DATA_TEXT_MAX = 512 * 1024;

/** The outcome of an edit and redrive: one record, with the fingerprints of the stored record and of the copy sent. */
export type EditResult = ActionResult & { readonly edit?: { readonly from: string; readonly sent: string } };

/**
 * The new `data` from its JSON text: a JSON object, every integer exact in a
 * double (a larger one would change on the way through JSON.parse). A
 * {@link BadQueryError} (400) says what is wrong.
 */
export function parseData(text: unknown): JsonObject {
  if (typeof text !== 'string') throw new BadQueryError('"data" must be the new data as JSON text (a string)');
  if (text.length > DATA_TEXT_MAX) throw new BadQueryError(`"data" is over ${DATA_TEXT_MAX} characters`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BadQueryError(`"data" is not valid JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new BadQueryError('"data" must be a JSON object ({…}), as the envelope requires');
  const unsafe = firstUnsafeInteger(value);
  if (unsafe !== undefined) throw new BadQueryError(`"data" holds an integer beyond 2^53 (${unsafe}) that would not survive the edit exactly; send it as a string`);
  return value as JsonObject;
}

/**
 * Edit and redrive one record (ServicePulse's "edit and retry"): the copy sent
 * is the stored bytes with the ADR-0026 reset (no `dead_letter`, `attempts` 0)
 * and `data` replaced, every other byte as stored (`job`, `trace_id`, `meta`
 * with its `id`, unknown members). It is re-validated with the core's
 * {@link EnvelopeValidator} before anything is sent; a bad edit is a
 * {@link BadQueryError} and the DLQ is untouched. The original stays on the
 * DLQ until the broker confirmed the copy (`publishRaw` resolved), and is
 * removed only then; `markSent` journals the original's reset fingerprint in
 * between, so a kill there is finished by the console's recovery.
 */
export async function editAndRedrive(ctx: ActionContext, dlq: string, ref: RecordRef, data: JsonObject, request: RedriveRequest, markSent: (resetHash: string) => void): Promise<EditResult> {
  const publishRaw = ctx.transport.publishRaw?.bind(ctx.transport);
  if (publishRaw === undefined) throw new BadQueryError(`the ${ctx.transport.rules.name} binding cannot write raw records`);
  const record = (await locate(ctx.source, dlq, [ref], ctx.scanLimit)).get(ref);
  const method = typeof ctx.transport.remove === 'function' ? 'remove' : 'drain';
  const base = { action: 'redrive' as const, dlq, method: method as ActionResult['method'], deleted: 0, kept: 0, locked: 0 };
  if (record === undefined) {
    return { ...base, redriven: 0, not_found: 1, items: [{ hash: ref.hash, message_id: null, urn: null, outcome: 'not-found', note: 'no longer on the DLQ (redriven, deleted or taken meanwhile)' }] };
  }
  const copy = editedCopy(record.body, data, request.toQueue);
  const summary = summarize(record);
  // The original's own riders and key travel with the copy, as in a redrive.
  const sent = async (headers: ScannedRecord['headers'], key: Buffer | null | undefined) => {
    await publishRaw(copy.target, copy.body, ridersOf(headers, request.bypass), key === undefined ? undefined : { key });
    markSent(recordHash(copy.reset));
  };
  let note = 'edited data';
  try {
    if (method === 'remove') {
      await sent(record.headers, record.key);
      const removed = await (ctx.transport.remove as NonNullable<typeof ctx.transport.remove>)(dlq, record.body);
      if (!removed) note += `; the original was already gone from ${dlq} (taken meanwhile)`;
    } else {
      const result = await takeChosen(ctx.transport, dlq, new Map([[summary.hash, 1]]), { max: REDRIVE_BATCH_CEILING, idleMs: Math.max(ctx.idleMs, 10_000) }, async (delivery) => {
        await sent(delivery.headers, delivery.key);
        await delivery.settle({ kind: 'ack' });
      });
      if (result.done.length === 0) return { ...base, redriven: 0, not_found: 1, items: [{ hash: summary.hash, message_id: summary.message_id, urn: summary.urn, outcome: 'not-found', note: 'not among the records taken' }] };
      if (result.restored > 0) note += `; ${result.restored} record(s) taken ahead of it were written back to the end of ${dlq}`;
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ...base, redriven: 0, not_found: 0, items: [], error: message };
  }
  ctx.logger.info({ dlq, action: 'edit-redrive', method, to: copy.target, messageId: summary.message_id }, 'console: edit and redrive');
  return {
    ...base,
    redriven: 1,
    not_found: 0,
    items: [{ hash: summary.hash, message_id: summary.message_id, urn: summary.urn, outcome: 'redriven', to: copy.target, note }],
    note,
    edit: { from: summary.hash, sent: recordHash(copy.body) },
  };
}

/**
 * The copy an edit sends: the redrive reset of the stored bytes with `data`
 * replaced, validated as a consumer would. `reset` is the plain reset copy
 * (what the journal's recovery matches DLQ records against).
 */
export function editedCopy(stored: Buffer, data: JsonObject, toQueue: string | undefined): { target: string; body: Buffer; reset: Buffer } {
  const plan = planRedrive(stored, toQueue);
  if (plan.kind === 'keep') throw new BadQueryError(`this record cannot be edited and redriven: ${plan.why}`);
  const body = reemit(stored, { deadLetter: null, attempts: 0, data });
  const reason = EnvelopeValidator.check(decodeEnvelope(body, () => undefined));
  if (reason !== null) throw new BadQueryError(`the edited envelope is not valid (${reason}); nothing was sent and the record stays on the DLQ`);
  return { target: plan.target, body, reset: plan.body };
}

function firstUnsafeInteger(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value) ? value : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const member of Object.values(value as Record<string, unknown>)) {
    const found = firstUnsafeInteger(member);
    if (found !== undefined) return found;
  }
  return undefined;
}

import { REDRIVE_BATCH_CEILING, type ScannedRecord } from '@babelqueue/core';
import { takeOptions, wantedOf, type ActionContext, type ActionItem, type ActionResult } from './actions.js';
import type { RecordFilter } from './filter.js';
import { eachMatchingChunk } from './matching-chunks.js';
import { recordHash, summarize } from './records.js';
import { selectFields } from './search.js';
import { takeChosen } from './take-chosen.js';

/** Items an answer lists. */
const ITEMS_SHOWN = 200;

/**
 * Deletes every record that passes `filter` (a failure group, a search), up
 * to the scan limit: on a broker with targeted removal, chunk by chunk as the
 * scan finds them (`remove` of the exact bytes); elsewhere the matches found
 * by one scan (at most the drain ceiling, 10,000) are taken and acknowledged,
 * and the records taken ahead of them written back ({@link takeChosen}).
 * `filter` must narrow: the API never sends an empty one here.
 */
export async function deleteMatching(ctx: ActionContext, dlq: string, filter: RecordFilter): Promise<ActionResult> {
  const remove = ctx.transport.remove?.bind(ctx.transport);
  const result: { -readonly [K in keyof ActionResult]: ActionResult[K] } & { items: ActionItem[] } = {
    action: 'delete', dlq, method: remove !== undefined && ctx.source.mode !== 'none' ? 'remove' : 'drain', redriven: 0, deleted: 0, kept: 0, not_found: 0, locked: 0, items: [],
  };
  const note = (record: ScannedRecord, outcome: ActionItem['outcome'], why?: string) => {
    if (outcome === 'deleted') result.deleted += 1;
    else result.not_found += 1;
    if (result.items.length >= ITEMS_SHOWN) return;
    const summary = summarize(record);
    result.items.push({ hash: summary.hash, message_id: summary.message_id, urn: summary.urn, outcome, ...(why !== undefined ? { note: why } : {}) });
  };
  let scanned = 0;
  try {
    if (result.method === 'remove' && remove !== undefined) {
      // Remove each chunk of matches; the next scan starts where this one stopped, less what left the list.
      ({ scanned } = await eachMatchingChunk(ctx.source, dlq, filter, ctx.scanLimit, async (chunk) => {
        let removed = 0;
        for (const record of chunk) {
          if (await remove(dlq, record.body)) {
            removed += 1;
            note(record, 'deleted');
          } else note(record, 'not-found', 'taken by someone else meanwhile');
        }
        return removed;
      }));
    } else {
      const chosen: ScannedRecord[] = [];
      for await (const record of ctx.source.read(dlq, 0)) {
        if (scanned >= ctx.scanLimit || chosen.length >= REDRIVE_BATCH_CEILING) break;
        scanned += 1;
        if (selectFields(record, filter) !== undefined) chosen.push(record);
      }
      if (chosen.length > 0) {
        const taken = await takeChosen(ctx.transport, dlq, wantedOf(chosen), takeOptions(ctx), (delivery) => delivery.settle({ kind: 'ack' }));
        const done = [...taken.done];
        for (const record of chosen) {
          const at = done.indexOf(recordHash(record.body));
          if (at >= 0) done.splice(at, 1);
          note(record, at >= 0 ? 'deleted' : 'not-found', at >= 0 ? undefined : 'not among the records taken');
        }
        if (taken.restored > 0) result.note = `${taken.restored} record(s) taken ahead of them were written back to the end of ${dlq}`;
      }
    }
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
  }
  if (result.error === undefined && scanned >= ctx.scanLimit) result.note = `stopped after scanning ${scanned} records (the scan limit); run it again for more`;
  ctx.logger.info({ dlq, action: 'delete', method: result.method, deleted: result.deleted, notFound: result.not_found, ...(result.error ? { error: result.error } : {}) }, 'console: delete matching');
  return result;
}

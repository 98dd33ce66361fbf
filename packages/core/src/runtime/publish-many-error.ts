import { BabelQueueError } from './errors.js';

/** How one item of `App.publishMany` ended: its `meta.id`, and the reason when it failed. */
export type PublishManyResult =
  | { readonly ok: true; readonly id: string }
  | { readonly ok: false; readonly id: string; readonly error: Error };

/**
 * `App.publishMany` could not publish every item. `results` holds every item's
 * outcome in the order given (the items that went through included, so a
 * caller can retry exactly the failed ones); `errors` holds the failures'
 * reasons. A failed item may still reach the queue when its batch failed after
 * the broker took part of it: retrying it can duplicate it, which consumers
 * recognise by its `meta.id`.
 */
export class PublishManyError extends BabelQueueError {
  override readonly name = 'PublishManyError';
  /** Every item's outcome, in order. */
  readonly results: readonly PublishManyResult[];
  /** The indexes of the failed items, ascending. */
  readonly failed: readonly number[];
  /** The failed items' errors, in the order of {@link failed}. */
  readonly errors: readonly Error[];

  constructor(urn: string, queue: string, results: readonly PublishManyResult[]) {
    const failed: number[] = [];
    const errors: Error[] = [];
    results.forEach((result, index) => {
      if (!result.ok) {
        failed.push(index);
        errors.push(result.error);
      }
    });
    const first = errors[0]?.message ?? 'unknown';
    super(`publishMany of ${urn} to "${queue}": ${failed.length} of ${results.length} items failed (items ${preview(failed)}; first: ${first})`);
    this.results = results;
    this.failed = failed;
    this.errors = errors;
  }
}

function preview(indexes: readonly number[]): string {
  return indexes.length <= 10 ? indexes.join(', ') : `${indexes.slice(0, 10).join(', ')}, …`;
}

/**
 * When a read request stops to answer. A page, a search, open-by-id and a
 * chart step read until their work is done, or until they have spent their
 * time budget, or read `scanLimit` records, whichever comes first; then they
 * answer with what they found, how much they scanned and where to carry on.
 * So an answer comes within about the budget however big the DLQ is.
 */

/** Why a read stopped before its work was done: its time budget, or the scan limit. Null when it did not stop early. */
export type StopReason = 'time-budget' | 'scan-limit' | null;

/** One request's bounds. */
export class ScanBudget {
  private readonly deadline: number;

  /**
   * @param budgetMs how long the request may read
   * @param scanLimit how many records it may read
   */
  constructor(budgetMs: number, readonly scanLimit: number, private readonly now: () => number = () => performance.now()) {
    this.deadline = now() + budgetMs;
  }

  /**
   * Why to stop before reading one more record, having read `scanned`: never
   * before the first record, so every request makes progress.
   */
  stopBefore(scanned: number): StopReason {
    if (scanned >= this.scanLimit) return 'scan-limit';
    if (scanned > 0 && this.now() >= this.deadline) return 'time-budget';
    return null;
  }
}

/** Whole epoch seconds from this process's clock (scores are in seconds, as in Laravel). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The reservation deadline score: `floor(now) + retryAfter`, or `+inf` when recovery is off. */
export function deadlineScore(retryAfter: number | null): string {
  return retryAfter === null ? '+inf' : String(nowSeconds() + retryAfter);
}

/** When a delayed element is due: `floor(now) + ceil(delay)`, so a sub-second delay rounds up. */
export function dueScore(delayMs: number): number {
  return nowSeconds() + Math.ceil(Math.max(0, delayMs) / 1000);
}

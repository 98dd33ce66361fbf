import RequestQueue from 'kafkajs/src/network/requestQueue/index.js';

/** kafkajs's own pause between two looks at requests that wait (its CHECK_PENDING_REQUESTS_INTERVAL). */
const CHECK_PENDING_MS = 10;

interface QueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
}

let patched = false;

/**
 * kafkajs 2.2.4 re-arms the timer of every broker connection's request queue after each look at
 * it, with `throttledUntil - Date.now()` as the delay, also when nothing waits and nothing is
 * throttled (`throttledUntil` is -1): a negative delay, which Node runs after 1 ms (Node 24 and
 * later print a TimeoutNegativeWarning), and whose callback arms it again. Each connection then
 * wakes about 1,000 times a second for nothing, from its first request to its close (about 6 % of
 * a core per connection, measured; tulios/kafkajs#1704 and #1751, unfixed upstream). The timer is
 * only needed while requests wait: it is armed then, for the throttle's end or kafkajs's own 10 ms.
 * The change is to kafkajs's class, so every kafkajs client of the process gets it; idempotent.
 */
export function armRequestQueueTimerOnlyWhenNeeded(): void {
  if (patched) return;
  patched = true;
  (RequestQueue.prototype as unknown as QueueState & { scheduleCheckPendingRequests(): void }).scheduleCheckPendingRequests = function (this: QueueState) {
    if (this.throttleCheckTimeoutId !== null && this.throttleCheckTimeoutId !== undefined) return;
    if (this.pending.length === 0) return;
    const throttled = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, throttled > 0 ? throttled : CHECK_PENDING_MS);
  };
}

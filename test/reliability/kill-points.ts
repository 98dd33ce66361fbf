/**
 * Where a worker can be told to SIGKILL itself, so that a kill lands on the
 * step that matters rather than wherever the clock happens to be:
 *
 * - `handler`: right after a handler began, before its effect;
 * - `effect`: right after the effect, before the handler returns (the
 *   message was handled but is not settled: it must come back, a duplicate);
 * - `settle`: while an ack or a retry is on its way to the broker;
 * - `dlq-write`: while a dead-letter record is being written (the record may
 *   be on the DLQ while the original is still reserved).
 *
 * `anytime` is the controller's SIGKILL from outside, at no chosen point.
 */
export const KILL_POINTS = ['handler', 'effect', 'settle', 'dlq-write'] as const;
export type KillPoint = (typeof KILL_POINTS)[number];
export type KillKind = KillPoint | 'anytime';

/** Messages from the controller to a worker (over the IPC channel). */
export type ToWorker = { readonly type: 'arm'; readonly point: KillPoint } | { readonly type: 'go' } | { readonly type: 'stop' };

/** Messages from a worker to the controller. */
export type FromWorker =
  | { readonly type: 'loaded' }
  | { readonly type: 'ready' }
  | { readonly type: 'memory'; readonly at: number; readonly heapUsed: number; readonly rss: number; readonly external: number };

/** The exit code of a worker whose `run()` was refused before it consumed anything (a ConnectError, or an SQS queue not restored yet). */
export const START_REFUSED = 3;

import type { Transport } from '@babelqueue/core';

/** How far the action running on a DLQ got, for the page's progress line. */
export interface ActionProgress {
  readonly dlq: string;
  /** `redrive`, `delete`, … */
  readonly action: string;
  /** ms UTC. */
  readonly started_at: number;
  /** Records removed from the DLQ in place so far (brokers with `remove`). */
  readonly removed: number;
  /** Records written to another queue so far (redriven copies). */
  readonly sent: number;
}

type Running = { -readonly [K in keyof ActionProgress]: ActionProgress[K] };

/**
 * The progress of running actions, one per DLQ (actions on a DLQ run one at
 * a time). Counted from the transport's writes as the action makes them, so
 * the page can poll it while the action's request is still open. A
 * take-and-restore settles records through the drain, not the transport: there
 * only the records written back or redriven are counted.
 */
export class ProgressBoard {
  private readonly running = new Map<string, Running>();

  /** Starts counting an action on `dlq`, and the transport it should use: the same one, counted. */
  begin(dlq: string, action: string, transport: Transport): Transport {
    const entry: Running = { dlq, action, started_at: Date.now(), removed: 0, sent: 0 };
    this.running.set(dlq, entry);
    const remove = transport.remove?.bind(transport);
    const publishRaw = transport.publishRaw?.bind(transport);
    return new Proxy(transport, {
      get(target, property) {
        if (property === 'remove' && remove !== undefined) {
          return async (queue: string, body: Buffer) => {
            const removed = await remove(queue, body);
            if (removed && queue === dlq) entry.removed += 1;
            return removed;
          };
        }
        if (property === 'publishRaw' && publishRaw !== undefined) {
          return async (...args: Parameters<typeof publishRaw>) => {
            await publishRaw(...args);
            if (args[0] !== dlq) entry.sent += 1;
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  end(dlq: string): void {
    this.running.delete(dlq);
  }

  /** The action running on `dlq`, or null. */
  of(dlq: string): ActionProgress | null {
    const entry = this.running.get(dlq);
    return entry === undefined ? null : { ...entry };
  }
}

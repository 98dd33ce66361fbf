/**
 * One operation at a time per key (a DLQ): two scans of one RabbitMQ queue
 * would each see only what the other does not hold, and a page read while a
 * redrive runs would be half old, half new. Reads that change nothing (a
 * peek) may share the key with each other ({@link KeyedLock.read}); an
 * exclusive operation waits for every read before it and holds up every one
 * after it, so a stream of reads never starves an action.
 */
export class KeyedLock {
  /** Per key: everything queued so far, and the group of shared reads at the end of the queue, if any. */
  private readonly keys = new Map<string, { tail: Promise<unknown>; readers: { gate: Promise<unknown>; running: Set<Promise<unknown>> } | undefined }>();

  /** Runs `work` alone on `key`, after everything queued before it. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const state = this.stateOf(key);
    const before = state.readers === undefined ? state.tail : Promise.all([state.tail, ...state.readers.running]);
    state.readers = undefined;
    const mine = before.catch(() => undefined).then(work);
    const tail = mine.catch(() => undefined);
    state.tail = tail;
    try {
      return await mine;
    } finally {
      if (state.tail === tail && state.readers === undefined && this.keys.get(key) === state) this.keys.delete(key);
    }
  }

  /** Runs `work` on `key` beside other reads, after the exclusive operations queued before it. */
  async read<T>(key: string, work: () => Promise<T>): Promise<T> {
    const state = this.stateOf(key);
    state.readers ??= { gate: state.tail, running: new Set() };
    const readers = state.readers;
    const mine = readers.gate.catch(() => undefined).then(work);
    const settled = mine.catch(() => undefined);
    readers.running.add(settled);
    try {
      return await mine;
    } finally {
      readers.running.delete(settled);
      if (state.readers === readers && readers.running.size === 0) {
        // The group is done: an operation queued later waits for nothing of it.
        state.readers = undefined;
        if (this.keys.get(key) === state) this.keys.delete(key);
      }
    }
  }

  private stateOf(key: string) {
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { tail: Promise.resolve(), readers: undefined };
      this.keys.set(key, state);
    }
    return state;
  }
}

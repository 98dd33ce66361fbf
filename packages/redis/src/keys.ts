/** Keys of one queue in the legacy reliable-queue layout (names used as given). */
export interface LegacyKeys {
  readonly ready: string;
  readonly processing: string;
  readonly deadlines: string;
}

/** `<name>`, `<name>:processing`, `<name>:processing:deadlines`. */
export function legacyKeys(queue: string): LegacyKeys {
  return { ready: queue, processing: `${queue}:processing`, deadlines: `${queue}:processing:deadlines` };
}

/** Keys of one queue in Laravel's zset layout. */
export interface ZsetKeys {
  readonly ready: string;
  readonly delayed: string;
  readonly reserved: string;
  readonly notify: string;
}

/** `<prefix>queues:<name>` and its `:delayed`, `:reserved` and `:notify` companions. */
export function zsetKeys(prefix: string, queue: string): ZsetKeys {
  const ready = `${prefix}queues:${queue}`;
  return { ready, delayed: `${ready}:delayed`, reserved: `${ready}:reserved`, notify: `${ready}:notify` };
}

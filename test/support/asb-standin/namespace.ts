// The stand-in's namespace: queues by name (created on first use, as the
// official emulator's config would declare them), each with its
// `$DeadLetterQueue` sub-queue, and the receiver links waiting on them.
import { DEFAULT_CONFIG, Entity, type QueueConfig } from './entity.js';

const DLQ_SUFFIX = '/$deadletterqueue';

export class Namespace {
  private readonly queues = new Map<string, Entity>();

  constructor(private readonly defaults: QueueConfig = DEFAULT_CONFIG) {}

  /**
   * The entity a link address names: `<queue>` or `<queue>/$DeadLetterQueue`
   * (Service Bus names are case-insensitive). Anything else (topics,
   * subscriptions, `$Transfer`…) is not modelled and throws.
   */
  resolve(address: string): Entity {
    const path = address.replace(/^amqps?:\/\/[^/]+\//i, '').replace(/^\/+/, '');
    const lower = path.toLowerCase();
    if (lower.endsWith(DLQ_SUFFIX)) return this.queue(path.slice(0, -DLQ_SUFFIX.length)).deadLetter!;
    if (path === '' || path.includes('/') || path.startsWith('$')) {
      throw new NotModelledError(`the stand-in models queues and their $DeadLetterQueue only, not "${address}"`);
    }
    return this.queue(path);
  }

  /** A queue by name, created with the defaults on first use. */
  queue(name: string): Entity {
    const key = name.toLowerCase();
    let queue = this.queues.get(key);
    if (queue === undefined) {
      const config = { ...this.defaults };
      queue = new Entity(name, config, new Entity(`${name}/$DeadLetterQueue`, config));
      this.queues.set(key, queue);
    }
    return queue;
  }

  /** Every entity, queues and dead-letter sub-queues. */
  *entities(): Iterable<Entity> {
    for (const queue of this.queues.values()) {
      yield queue;
      yield queue.deadLetter!;
    }
  }
}

/** An address or operation the stand-in does not model: refused loudly, never approximated. */
export class NotModelledError extends Error {
  readonly condition = 'amqp:not-implemented';
}

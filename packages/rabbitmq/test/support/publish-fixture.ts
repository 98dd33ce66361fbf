/**
 * The set-up the publish suites share (publish.test.ts, publish-many.test.ts):
 * the binding's transport and a plain amqplib connection on the lab broker,
 * opened before the suite and closed after it, and fresh queue names, deleted
 * after it. Call it inside `describe`.
 */
import { after, before } from 'node:test';
import { silentLogger } from '@babelqueue/core';
import { RabbitMqTransport } from '@babelqueue/rabbitmq';
import { Raw, rabbit, uniqueQueue } from './rabbit.js';

export interface PublishFixture {
  /** The lab broker. */
  readonly url: string;
  /** The transport under test (open from the suite's `before` on). */
  readonly transport: RabbitMqTransport;
  /** Plain amqplib, to read back what the transport wrote. */
  readonly raw: Raw;
  /** A fresh queue name starting with `prefix`, deleted after the suite. */
  readonly queue: (prefix: string) => string;
  /** Queues the binding declares by itself (a delay's holding queue), deleted after the suite too. */
  readonly alsoDelete: (...names: string[]) => void;
}

export function publishFixture(): PublishFixture {
  const url = rabbit.url!;
  const queues: string[] = [];
  let raw: Raw | undefined;
  let transport: RabbitMqTransport | undefined;
  before(async () => {
    raw = await Raw.open(url);
    transport = new RabbitMqTransport({ url, logger: silentLogger });
  });
  after(async () => {
    await transport?.close();
    await raw?.cleanup(...queues);
    await raw?.close();
  });
  const opened = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('the publish fixture is used before its before hook ran');
    return x;
  };
  return {
    url,
    get transport() {
      return opened(transport);
    },
    get raw() {
      return opened(raw);
    },
    queue: (prefix) => {
      const name = uniqueQueue(prefix);
      queues.push(name);
      return name;
    },
    alsoDelete: (...names) => void queues.push(...names),
  };
}

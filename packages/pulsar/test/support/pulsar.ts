/**
 * The lab's Pulsar for this package's suites, and a raw client beside the
 * binding (the WebSocket and admin APIs used directly) to publish as a foreign
 * producer would and to read back exactly what is on a topic.
 */
import WebSocket from 'ws';
import { EnvelopeCodec } from '@babelqueue/core';
import { type EnvelopeProjection } from '@babelqueue/core/binding';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';

export { captureLogger } from '../../../../test/support/capture-logger.js';
export { uniqueQueue };

/** The lab broker: its web service URL (`http://127.0.0.1:8080`), or why the suite is skipped. */
export const lab = broker('pulsar');

/** One message as a raw consumer received it. */
export interface RawMessage {
  readonly body: Buffer;
  readonly properties: Record<string, string>;
  readonly messageId: string;
  readonly redeliveryCount: number;
  /** Broker-set, ms since the epoch. */
  readonly publishTime: number;
  /** This process's clock when the frame arrived. */
  readonly receivedAt: number;
}

const path = (queue: string) => `persistent/public/default/${encodeURIComponent(queue)}`;

/** Raw access to the lab's Pulsar (no BabelQueue code involved). */
export class RawPulsar {
  constructor(readonly url: string) {}

  /** Creates the `babelqueue` subscription at the earliest position, as a queue's operator would (idempotent). */
  async subscribe(queue: string, subscription = 'babelqueue'): Promise<void> {
    const res = await fetch(`${this.url}/admin/v2/${path(queue)}/subscription/${subscription}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ledgerId: -1, entryId: -1, partitionIndex: -1 }),
    });
    if (res.status !== 204 && res.status !== 409) throw new Error(`subscribe ${queue}: HTTP ${res.status}`);
  }

  /** Publishes bytes with properties over the WebSocket API; resolves on the `ok` receipt. */
  async publish(queue: string, body: Buffer, properties: Record<string, string> = {}, deliverAfterMs?: number): Promise<void> {
    await this.subscribe(queue);
    const ws = await open(`${this.ws()}/producer/${path(queue)}`);
    try {
      const receipt = next(ws, 10_000);
      ws.send(JSON.stringify({ payload: body.toString('base64'), properties, context: '1', ...(deliverAfterMs ? { deliverAfterMs } : {}) }));
      const ack = await receipt;
      if (ack.result !== 'ok') throw new Error(`publish to ${queue} refused: ${JSON.stringify(ack)}`);
    } finally {
      ws.close();
    }
  }

  /**
   * Publishes bodies through a batching producer (as the Java and Go clients
   * do by default): sent together, they are stored as one batch entry.
   */
  async publishBatch(queue: string, bodies: Buffer[]): Promise<void> {
    await this.subscribe(queue);
    const ws = await open(`${this.ws()}/producer/${path(queue)}?batchingEnabled=true&batchingMaxMessages=${bodies.length}&batchingMaxPublishDelay=100`);
    try {
      const receipts = new Promise<void>((resolve, reject) => {
        let left = bodies.length;
        ws.on('message', (data) => {
          const ack = JSON.parse(String(data)) as { result?: string };
          if (ack.result !== 'ok') reject(new Error(`batch publish to ${queue} refused: ${String(data)}`));
          else if (--left === 0) resolve();
        });
      });
      bodies.forEach((body, i) => ws.send(JSON.stringify({ payload: body.toString('base64'), context: String(i) })));
      await receipts;
    } finally {
      ws.close();
    }
  }

  /** Whether the topic has the `babelqueue` subscription (a consumer subscribed once). */
  async hasSubscription(queue: string): Promise<boolean> {
    const res = await fetch(`${this.url}/admin/v2/${path(queue)}/subscriptions`);
    if (res.status === 404) return false;
    return ((await res.json()) as string[]).includes('babelqueue');
  }

  /** The permits each consumer of the `babelqueue` subscription holds inside the broker. */
  async permits(queue: string): Promise<number[]> {
    return (await this.subscriptionConsumers(queue)).map((c) => c.availablePermits ?? 0);
  }

  /** The consumer names the broker lists on the `babelqueue` subscription. */
  async consumers(queue: string): Promise<string[]> {
    return (await this.subscriptionConsumers(queue)).map((c) => c.consumerName ?? '');
  }

  /** The consumers of the `babelqueue` subscription, as the topic's stats list them. */
  private async subscriptionConsumers(queue: string): Promise<{ consumerName?: string; availablePermits?: number }[]> {
    const res = await fetch(`${this.url}/admin/v2/${path(queue)}/stats`);
    if (res.status === 404) return [];
    const stats = (await res.json()) as { subscriptions?: Record<string, { consumers?: { consumerName?: string; availablePermits?: number }[] }> };
    return stats.subscriptions?.babelqueue?.consumers ?? [];
  }

  /** An envelope as another SDK would publish it, with the `bq-` projection. */
  async publishEnvelope(queue: string, data: object = {}, extra: Record<string, string> = {}): Promise<{ body: Buffer; projection: EnvelopeProjection }> {
    const { body, projection } = envelope('urn:babel:orders:created', data, queue);
    await this.publish(queue, body, {
      'bq-job': projection.urn,
      'bq-trace-id': projection.traceId,
      'bq-message-id': projection.messageId,
      'bq-schema-version': '1',
      'bq-source-lang': projection.lang,
      'bq-attempts': '0',
      ...extra,
    });
    return { body, projection };
  }

  /** The `babelqueue` subscription's backlog (0 when the topic does not exist). */
  async backlog(queue: string): Promise<number> {
    const res = await fetch(`${this.url}/admin/v2/${path(queue)}/stats`);
    if (res.status === 404) return 0;
    const stats = (await res.json()) as { subscriptions?: Record<string, { msgBacklog?: number }> };
    return stats.subscriptions?.babelqueue?.msgBacklog ?? 0;
  }

  /** Polls the backlog until it is `count` (acknowledgements reach the stats asynchronously). */
  async waitForBacklog(queue: string, count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = -1;
    while (Date.now() < deadline) {
      last = await this.backlog(queue);
      if (last === count) return;
      await sleep(100);
    }
    throw new Error(`backlog of ${queue} is ${last}, expected ${count}`);
  }

  /**
   * Consumes `count` messages from the `babelqueue` subscription and
   * acknowledges them, each within `timeoutMs`. With `type`, that subscription type.
   */
  async take(queue: string, count: number, timeoutMs = 15_000, type = 'Shared'): Promise<RawMessage[]> {
    const ws = await open(`${this.ws()}/consumer/${path(queue)}/babelqueue?subscriptionType=${type}&subscriptionInitialPosition=Earliest`);
    const out: RawMessage[] = [];
    try {
      const frames = queueFrames(ws);
      while (out.length < count) {
        const frame = await frames(timeoutMs, `message ${out.length + 1} of ${count} on ${queue}`);
        out.push({
          body: Buffer.from(frame.payload, 'base64'),
          properties: frame.properties ?? {},
          messageId: frame.messageId,
          redeliveryCount: frame.redeliveryCount ?? 0,
          publishTime: Date.parse(frame.publishTime),
          receivedAt: Date.now(),
        });
        ws.send(JSON.stringify({ messageId: frame.messageId }));
      }
    } finally {
      await closed(ws);
    }
    return out;
  }

  /** Terminates a topic: every publish to it fails from then on (a DLQ that refuses writes). */
  async terminate(queue: string): Promise<void> {
    await this.subscribe(queue);
    const res = await fetch(`${this.url}/admin/v2/${path(queue)}/terminate`, { method: 'POST' });
    if (res.status !== 200 && res.status !== 204) throw new Error(`terminate ${queue}: HTTP ${res.status}`);
  }

  /** Deletes topics and their subscriptions (force); missing ones are fine. */
  async cleanup(queues: string[]): Promise<void> {
    for (const queue of queues) {
      await fetch(`${this.url}/admin/v2/${path(queue)}?force=true`, { method: 'DELETE' }).catch(() => undefined);
    }
  }

  private ws(): string {
    return `${this.url.replace(/^http/, 'ws')}/ws/v2`;
  }
}

/** A canonical envelope body with its projection, as the App would publish it. */
export function envelope(urn: string, data: object, queue: string): { body: Buffer; projection: EnvelopeProjection } {
  const env = EnvelopeCodec.make(urn, data as never, { queue });
  return {
    body: Buffer.from(EnvelopeCodec.encode(env), 'utf8'),
    projection: {
      urn: env.job,
      traceId: env.trace_id,
      messageId: env.meta.id,
      schemaVersion: env.meta.schema_version,
      lang: env.meta.lang,
      createdAt: env.meta.created_at,
      attempts: env.attempts,
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function closed(ws: WebSocket): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    ws.once('close', () => resolve());
    ws.close();
  });
}

function next(ws: WebSocket, timeoutMs: number): Promise<any> {
  return queueFrames(ws)(timeoutMs, 'a receipt');
}

/** Frames of a socket in arrival order; each wait is bounded. */
function queueFrames(ws: WebSocket): (timeoutMs: number, what: string) => Promise<any> {
  const ready: any[] = [];
  const waiting: ((frame: any) => void)[] = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else ready.push(frame);
  });
  return (timeoutMs, what) => {
    if (ready.length > 0) return Promise.resolve(ready.shift());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(deliver), 1);
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const deliver = (frame: any) => {
        clearTimeout(timer);
        resolve(frame);
      };
      waiting.push(deliver);
    });
  };
}

/** The lab broker's binary-protocol service (the standalone listens on 6650 beside its web service). */
export const serviceUrl = lab.url === undefined ? undefined : `pulsar://${new URL(lab.url).hostname}:6650`;

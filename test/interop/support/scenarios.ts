/**
 * The cross-language scenarios every broker's interop suite runs against the
 * Python SDK: each direction of a plain message, a retry that crosses the
 * language boundary, and a dead-letter record written by one side and read by
 * the other. Both sides work on the same queue names, in the layout the Python
 * SDK uses by default.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApp, silentLogger, type App, type Message, type Transport } from '@babelqueue/core';
import { uniqueQueue, type BrokerSuite } from '../../support/brokers.js';
import { bytes, pythonPeer, type PythonPeer } from './python-peer.js';

export interface InteropTarget {
  /** Broker name, as in `scripts/brokers`. */
  readonly name: string;
  readonly broker: BrokerSuite;
  /** A fresh TypeScript transport on the lab broker, for consuming (and publishing to) `queue`. */
  transport(url: string, queue: string): Transport;
  /** Removes what a test left on the broker (queues, keys). */
  cleanup?(url: string, queues: string[]): Promise<void>;
  /** The dead-letter queue both SDKs use for `queue`. Default `<queue>.dlq`. */
  dlqName?(queue: string): string;
  /**
   * A retry releases the message and the broker counts the delivery (SQS): the
   * body's `attempts` stays as it was produced, and the counted attempt comes
   * from the native count. Default: a retry writes attempts + 1 into the body.
   */
  readonly retryKeepsBody?: boolean;
  /**
   * Creates `queues` before either side touches them, for brokers where the
   * Python SDK's first publish would otherwise not create a queue (Artemis
   * auto-creates an address the SDK attaches to without the queue capability
   * as multicast, and drops what is sent there before anyone subscribed; on SQS
   * neither SDK creates a queue).
   */
  prepare?(url: string, queues: string[]): Promise<void>;
  /**
   * Extra `peer.py consume` arguments for consuming `queue`. On Kafka they name the
   * consumer group, one per queue shared by both sides, so that whichever side
   * consumes next resumes after what the other committed (a retry, not the original).
   */
  peerConsumeArgs?(queue: string): string[];
  /**
   * How long a consume on either side waits for a message before it gives up
   * (a Kafka group join takes seconds). Every consume stops at its one message,
   * so this only bounds a failing run. Default 30 s.
   */
  readonly waitMs?: number;
  /**
   * Runs between our failed delivery and the Python consume of its retry, for
   * brokers where a retry needs moving back to the work queue first (Kafka's
   * retry tiers, moved here by the Python SDK's re-inject consumer).
   */
  retryHandOver?(url: string, queue: string, peer: PythonPeer): Promise<void>;
  /** Checks of the broker's native metadata (the binding's projection), each direction. */
  native?: {
    /** On a message the Python SDK produced, as our consumer surfaces it. */
    fromPython?(message: Message): void;
    /**
     * On a message we produced, as the Python SDK's transport surfaces it (not every one
     * does): its headers, and what else `peer.py consume` reported of the delivery.
     */
    toPython?(headers: Record<string, string>, received: PeerReceived): void;
  };
  /**
   * What the Python SDK reads as `attempts` when our handler failed once and the broker
   * redelivered the message (default 1, the spec's answer), with why it differs.
   */
  readonly pythonRetryAttempts?: { readonly attempts: number; readonly why: string };
}

/** One delivery as `peer.py consume` reports it (`received[i]`). */
export interface PeerReceived {
  /** The body the SDK's transport handed to its runtime, base64. */
  readonly body: string;
  readonly headers: Record<string, string>;
  /** Service Bus only: the delivery's native fields as azure-servicebus surfaces them. */
  readonly native?: {
    readonly subject: string | null;
    readonly correlation_id: string | null;
    readonly message_id: string | null;
    readonly content_type: string | null;
    /** Each value with the Python type it arrived as (`int`, `str`, …). */
    readonly application_properties: Record<string, { value: unknown; type: string }>;
    readonly delivery_count: number | null;
  };
}

const URN = 'urn:babel:interop:order-placed';
const DATA = { order_id: 1042, customer: 'Zoë', lines: [{ sku: 'A-1', qty: 2, price: 0.5 }], gift: false, note: null };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PEER_FAILURE = 'interop peer: handler failure on purpose';

interface Recorded {
  app: App;
  published: Buffer[];
  handled: Message[];
}

export function describeInterop(target: InteropTarget): void {
  const peer = pythonPeer(`${target.name} (Python SDK)`);
  const skip = target.broker.skip || peer.skip;

  describe(`interop over ${target.name}: Python SDK <-> TypeScript`, { skip }, () => {
    const url = target.broker.url!;
    const queues: string[] = [];
    const apps: App[] = [];
    after(async () => {
      for (const app of apps) await app.close();
      await target.cleanup?.(url, queues);
    });

    const dlqOf = (q: string) => target.dlqName?.(q) ?? `${q}.dlq`;
    const queue = async (): Promise<string> => {
      const q = uniqueQueue(`interop-${target.name}`);
      queues.push(q, dlqOf(q));
      await target.prepare?.(url, [q, dlqOf(q)]);
      return q;
    };

    /** A TypeScript app on `q` whose transport records every body it publishes. */
    function tsApp(q: string, options: { fail?: number; maxAttempts?: number; deadLetter?: boolean } = {}): Recorded {
      const transport = target.transport(url, q);
      const published: Buffer[] = [];
      const publish = transport.publish.bind(transport);
      transport.publish = async (message) => {
        published.push(message.body);
        return publish(message);
      };
      const app = createApp({
        transport,
        queue: q,
        logger: silentLogger,
        maxAttempts: options.maxAttempts ?? 3,
        deadLetter: options.deadLetter ?? false,
      });
      apps.push(app);
      const handled: Message[] = [];
      let failures = options.fail ?? 0;
      app.handle(URN, (_data, message) => {
        handled.push(message);
        if (failures > 0) {
          failures--;
          throw new Error('typescript handler failure on purpose');
        }
      });
      return { app, published, handled };
    }

    const pyPublish = (q: string, traceId: string) =>
      peer.run(['publish', '--url', url, '--queue', q, '--urn', URN, '--data', JSON.stringify(DATA), '--trace-id', traceId]);
    const waitMs = target.waitMs ?? 30_000;
    const pyConsume = (q: string, ...flags: string[]) =>
      peer.run([
        'consume', '--url', url, '--queue', q, '--urn', URN, '--max', '1', '--timeout', String(waitMs / 1000),
        ...(target.peerConsumeArgs?.(q) ?? []), ...flags,
      ]);
    const tsConsume = (app: App) => app.consume({ maxMessages: 1, idleMs: waitMs });

    it('Python -> TypeScript: same bytes, URN, data, trace_id, meta and attempts', async () => {
      const q = await queue();
      const traceId = '4bf92f35-77b3-4da6-a3ce-929d0e0e4736';
      const sent = await pyPublish(q, traceId);
      const ts = tsApp(q);
      assert.equal(await tsConsume(ts.app), 1);

      const [m] = ts.handled;
      assert.ok(m, 'the TypeScript handler ran');
      assert.ok(m.body.equals(bytes(sent.body)), 'delivered byte-for-byte as the Python SDK sent it');
      assert.equal(m.urn, URN);
      assert.deepEqual(m.data, DATA);
      assert.equal(m.traceId, traceId);
      assert.equal(m.id, sent.id);
      assert.deepEqual(Object.keys(m.envelope.meta), ['id', 'queue', 'lang', 'schema_version', 'created_at']);
      assert.equal(m.envelope.meta.queue, q);
      assert.equal(m.envelope.meta.lang, 'python');
      assert.equal(m.envelope.meta.schema_version, 1);
      assert.ok(Number.isInteger(m.envelope.meta.created_at) && Math.abs(Date.now() - m.envelope.meta.created_at) < 60_000, "Number.isInteger(m.envelope.meta.created_at) && Math.abs(Date.now() - m.envelope.meta.created_at)...");
      assert.equal(m.envelope.attempts, 0);
      assert.equal(m.attempts, 1, 'the first delivery is counted attempt 1');
      target.native?.fromPython?.(m);
    });

    it('TypeScript -> Python: same bytes, URN, data, trace_id, meta and attempts', async () => {
      const q = await queue();
      const ts = tsApp(q);
      const traceId = '0af76519-16cd-43dd-8448-eb211c80319c';
      const id = await ts.app.publish(URN, DATA, { traceId });
      const got = await pyConsume(q);

      assert.equal(got.processed, 1);
      assert.ok(bytes(got.received[0].body).equals(ts.published[0]!), 'the Python SDK read our bytes unchanged');
      const env = got.handled[0].envelope;
      assert.equal(env.job, URN);
      assert.deepEqual(env.data, DATA);
      assert.equal(env.trace_id, traceId);
      assert.deepEqual(Object.keys(env.meta), ['id', 'queue', 'lang', 'schema_version', 'created_at']);
      assert.equal(env.meta.id, id);
      assert.match(env.meta.id, UUID);
      assert.equal(env.meta.queue, q);
      assert.equal(env.meta.lang, 'node');
      assert.equal(env.meta.schema_version, 1);
      assert.equal(env.attempts, 0);
      target.native?.toPython?.(got.received[0].headers, got.received[0]);
    });

    it('a retry crosses languages: Python fails once, TypeScript gets attempts 1', async () => {
      const q = await queue();
      const sent = await pyPublish(q, 'trace-retry-py');
      const failed = await pyConsume(q, '--fail', '1', '--max-attempts', '3');
      assert.equal(failed.handled.length, 1, 'the Python handler ran and failed');

      const ts = tsApp(q);
      assert.equal(await tsConsume(ts.app), 1);
      const [m] = ts.handled;
      assert.ok(m, 'the retried message reached TypeScript');
      assert.equal(m.envelope.attempts, target.retryKeepsBody ? 0 : 1);
      assert.equal(m.attempts, 2);
      assert.equal(m.id, sent.id);
      assert.equal(m.traceId, 'trace-retry-py');
      assert.deepEqual(m.data, DATA);
    });

    const pythonRetry = target.pythonRetryAttempts ?? { attempts: 1, why: 'the redelivery counts the failed attempt' };
    it(`a retry crosses languages: TypeScript fails once, Python gets attempts ${pythonRetry.attempts}`, async () => {
      const q = await queue();
      const ts = tsApp(q, { fail: 1 });
      const id = await ts.app.publish(URN, DATA, { traceId: 'trace-retry-ts' });
      assert.equal(await tsConsume(ts.app), 1);
      assert.equal(ts.handled.length, 1, 'the TypeScript handler ran and failed');

      await target.retryHandOver?.(url, q, peer);
      const got = await pyConsume(q);
      assert.equal(got.processed, 1);
      const env = got.handled[0].envelope;
      assert.equal(env.attempts, pythonRetry.attempts, pythonRetry.why);
      assert.equal(env.meta.id, id);
      assert.equal(env.trace_id, 'trace-retry-ts');
      assert.deepEqual(env.data, DATA);
    });

    it('dead-lettered by TypeScript, read by the Python SDK', async () => {
      const q = await queue();
      const ts = tsApp(q, { fail: 1, maxAttempts: 1, deadLetter: true });
      const id = await ts.app.publish(URN, DATA, { traceId: 'trace-dlq-ts' });
      assert.equal(await tsConsume(ts.app), 1);

      const got = await pyConsume(dlqOf(q));
      assert.equal(got.processed, 1, 'the Python SDK consumed the DLQ record as an envelope');
      const env = got.handled[0].envelope;
      assert.equal(env.job, URN);
      assert.equal(env.meta.id, id);
      assert.equal(env.meta.lang, 'node');
      assert.equal(env.trace_id, 'trace-dlq-ts');
      assert.deepEqual(env.data, DATA);
      // Like the Python SDK (next test), the record carries the counted attempt
      // at the top level as well as in the block.
      assert.equal(env.attempts, 1);
      assert.equal(env.dead_letter.reason, 'failed');
      assert.equal(env.dead_letter.lang, 'node');
      assert.equal(env.dead_letter.original_queue, q);
      assert.equal(env.dead_letter.attempts, 1);
      assert.match(env.dead_letter.error, /typescript handler failure on purpose/);
      assert.ok(Number.isInteger(env.dead_letter.failed_at), "Number.isInteger(env.dead_letter.failed_at)");
      assert.deepEqual(Object.keys(env).at(-1), 'dead_letter');
    });

    it('dead-lettered by the Python SDK, read by TypeScript', async () => {
      const q = await queue();
      const sent = await pyPublish(q, 'trace-dlq-py');
      const failed = await pyConsume(q, '--fail', '1', '--max-attempts', '1', '--dead-letter');
      assert.equal(failed.handled.length, 1, 'the Python handler ran and failed');

      const ts = tsApp(dlqOf(q));
      assert.equal(await tsConsume(ts.app), 1);
      const [m] = ts.handled;
      assert.ok(m, 'TypeScript consumed the DLQ record as an envelope');
      assert.equal(m.urn, URN);
      assert.equal(m.id, sent.id);
      assert.equal(m.traceId, 'trace-dlq-py');
      assert.deepEqual(m.data, DATA);
      assert.equal(m.envelope.meta.lang, 'python');
      assert.equal(m.envelope.attempts, 1, 'the Python SDK writes the counted attempt at the top level too');
      const block = m.envelope.dead_letter!;
      assert.equal(block.reason, 'failed');
      assert.equal(block.lang, 'python');
      assert.equal(block.original_queue, q);
      assert.equal(block.attempts, 1);
      assert.equal(block.error, PEER_FAILURE);
      assert.equal(block.exception, 'RuntimeError');
      assert.ok(Number.isInteger(block.failed_at), "Number.isInteger(block.failed_at)");
    });
  });
}

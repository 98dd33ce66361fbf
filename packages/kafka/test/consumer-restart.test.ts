import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { createApp, type Logger } from '@babelqueue/core';
import type { ISocketFactory } from 'kafkajs';
import { RangeAssigner } from '../src/range-assigner.js';
import { Lab, kafka, uniqueQueue, until } from './support/kafka-lab.js';

const RESTARTING = 'Kafka consumer stopped and kafkajs will not restart it; starting it again';

const URN = 'urn:babel:orders:created';

/** Whether a request is Kafka's `apiKey` (a request's size, int32, comes first, then its api key, int16). */
const isRequest = (chunk: unknown, apiKey: number) => Buffer.isBuffer(chunk) && chunk.length >= 6 && chunk.readInt16BE(4) === apiKey;
const FETCH = 1;
const FIND_COORDINATOR = 10;

const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

/**
 * The client's sockets to the real broker, with a fault switch: from
 * `fault()` until `heal()`, a socket that sends request `apiKey` is cut — the
 * broker going away in the middle of it, as when it restarts. Cut during the
 * group coordinator look-up, kafkajs says "Failed to find group coordinator",
 * an error it does not restart its consumer from; cut on every fetch, it
 * crashes the consumer once its retries run out and restarts it. A restart of
 * the lab's shared broker cannot be done under the other suites, so the
 * fault is made in the client's sockets.
 */
function faultySockets(apiKey: number) {
  let faulty = false;
  const factory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect);
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (faulty && isRequest(chunk, apiKey)) {
        socket.destroy(reset());
        return false;
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    return socket;
  };
  return {
    factory,
    fault() {
      faulty = true;
    },
    heal() {
      faulty = false;
    },
  };
}

function recordingLogger(lines: string[]): Logger {
  const line = (level: string) => (_fields: Record<string, unknown>, message: string) => void lines.push(`${level} ${message}`);
  return { debug: () => undefined, info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
}

describe('Kafka consumer stopped by kafkajs (real broker)', { skip: kafka.skip }, () => {
  let lab: Lab;
  before(() => {
    lab = new Lab(kafka.url!);
  });
  after(() => lab.close());
  afterEach(() => lab.closeTransports());

  it('is started again when the broker goes away during its group coordinator look-up: run() goes on and a later record is handled', async () => {
    const topic = await lab.topic('restart');
    const groupId = uniqueQueue('restart-group');
    const sockets = faultySockets(FIND_COORDINATOR);
    const lines: string[] = [];
    const logger = recordingLogger(lines);
    const transport = lab.transport({ groupId, logger, kafka: { socketFactory: sockets.factory } });
    const handled: string[] = [];
    const app = createApp({ transport, queue: topic, logger })
      .handle(URN, (data) => void handled.push(String((data as { n: string }).n)));
    const stop = new AbortController();
    const state: { ended?: { error?: unknown } } = {};
    // Read through a call: the run settles it from a callback, which narrowing does not see.
    const ended = () => state.ended;
    const run = app.run({ signal: stop.signal }).then(() => (state.ended = {}), (error: unknown) => (state.ended = { error }));
    // A second member joining the group makes the App's consumer rejoin, and a rejoin looks the coordinator up.
    const intruder = lab.client.consumer({ groupId, sessionTimeout: 6000, partitionAssigners: [RangeAssigner] });
    try {
      await app.publish(URN, { n: 'before' });
      await until(() => handled.includes('before') || ended() !== undefined, 60_000, 'the first record to be handled');

      sockets.fault();
      await intruder.connect();
      await intruder.subscribe({ topic, fromBeginning: true });
      await intruder.run({ autoCommit: false, eachMessage: async () => undefined });
      await until(() => ended() !== undefined || lines.some((l) => l.includes(RESTARTING)), 90_000, 'kafkajs to stop the consumer and the binding to start it again');
      assert.equal(ended(), undefined, `run() ended on the failed look-up: ${String(ended()?.error)}`);
      assert.ok(lines.some((l) => l.startsWith('ERROR kafkajs Consumer: Crash:') && l.includes('Failed to find group coordinator')), 'kafkajs stopped its consumer on "Failed to find group coordinator"');
      sockets.heal();
      await intruder.disconnect();

      await app.publish(URN, { n: 'after' });
      await until(() => handled.includes('after') || ended() !== undefined, 90_000, 'a record published after the fault to be handled');
      assert.equal(ended(), undefined, `run() ended: ${String(ended()?.error)}`);
      assert.ok(handled.includes('after'), 'the consumer started again handles records');
    } finally {
      sockets.heal();
      await intruder.disconnect().catch(() => undefined);
      stop.abort();
      await run;
      await app.close();
    }
  });

  it('stopped while kafkajs handles a crash, its consumer stays stopped: no restart after the stop (a leaked consumer would hold its partitions)', async () => {
    const topic = await lab.topic('stop-in-crash');
    const groupId = uniqueQueue('stop-in-crash-group');
    const sockets = faultySockets(FETCH);
    const lines: string[] = [];
    const stop = new AbortController();
    const logger: Logger = {
      ...recordingLogger(lines),
      error: (_fields, message) => {
        lines.push(`ERROR ${message}`);
        // The stop lands as kafkajs begins its crash handling, while its own disconnect runs.
        if (message.startsWith('kafkajs Consumer: Crash:')) stop.abort();
      },
    };
    const transport = lab.transport({ groupId, logger, kafka: { socketFactory: sockets.factory, retry: { initialRetryTime: 100 } } });
    const handled: string[] = [];
    const app = createApp({ transport, queue: topic, logger })
      .handle(URN, (data) => void handled.push(String((data as { n: string }).n)));
    const run = app.run({ signal: stop.signal });
    try {
      await app.publish(URN, { n: 'before' });
      await until(() => handled.includes('before'), 60_000, 'the first record to be handled');
      sockets.fault();
      await until(() => stop.signal.aborted, 90_000, 'kafkajs to crash its consumer on the cut fetches');
      await run;
      sockets.heal();
      // kafkajs decides on a restart right after its crash handler's disconnect, and logs it.
      const admin = await lab.admin();
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        assert.ok(!lines.some((l) => l.includes('Restarting the consumer')), `kafkajs restarted a stopped consumer:\n${lines.join('\n')}`);
        const { groups } = await admin.describeGroups([groupId]);
        assert.deepEqual(groups[0]?.members ?? [], [], 'a member of the group after the stop');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      sockets.heal();
      stop.abort();
      await run;
      await app.close();
    }
  });
});

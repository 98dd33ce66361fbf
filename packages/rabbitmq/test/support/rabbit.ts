import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { EnvelopeCodec, type JsonObject } from '@babelqueue/core';
import { type EnvelopeProjection } from '@babelqueue/core/binding';
import { broker, uniqueQueue } from '../../../../test/support/brokers.js';

export { uniqueQueue };

/** The RabbitMQ suite: `rabbit.url` is the broker, `rabbit.skip` goes to `describe`. */
export const rabbit = broker('rabbitmq');

/** A plain amqplib connection for reading what the binding wrote, as another SDK would. */
export class Raw {
  private constructor(readonly model: ChannelModel, readonly channel: Channel) {}

  static async open(url: string): Promise<Raw> {
    const model = await connect(url, { noDelay: true });
    const channel = await model.createChannel();
    return new Raw(model, channel);
  }

  /** Takes (and acks) every ready message of `queue`, oldest first. */
  async drain(queue: string): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    for (;;) {
      const message = await this.channel.get(queue, { noAck: true });
      if (message === false) return out;
      out.push(message);
    }
  }

  /** Ready messages of `queue` (0 when it does not exist). */
  async count(queue: string): Promise<number> {
    const channel = await this.model.createChannel();
    channel.on('error', () => undefined);
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } catch {
      return 0;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** True when `queue` exists (a consumer declares its queue before it consumes). */
  async exists(queue: string): Promise<boolean> {
    const channel = await this.model.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.checkQueue(queue);
      return true;
    } catch {
      return false;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /** Waits until `queue` holds `n` ready messages. */
  async waitForCount(queue: string, n: number, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((await this.count(queue)) < n) {
      if (Date.now() > until) throw new Error(`${queue} did not reach ${n} messages in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Deletes queues (and their delay queues) a test created. */
  async cleanup(...queues: string[]): Promise<void> {
    for (const queue of queues) await this.channel.deleteQueue(queue).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.model.close().catch(() => undefined);
  }
}

/** A freshly made envelope and its encoded bytes. */
export function envelope(urn: string, data: JsonObject, queue: string) {
  const env = EnvelopeCodec.make(urn, data, { queue });
  const body = Buffer.from(EnvelopeCodec.encode(env), 'utf8');
  const projection: EnvelopeProjection = {
    urn: env.job,
    traceId: env.trace_id,
    messageId: env.meta.id,
    schemaVersion: env.meta.schema_version,
    lang: env.meta.lang,
    createdAt: env.meta.created_at,
    attempts: env.attempts,
  };
  return { env, body, projection };
}

export { captureLogger } from '../../../../test/support/capture-logger.js';

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * How to reach the broker's node with rabbitmqctl: the broker lab's node
 * (`scripts/brokers`, node babelqueue@localhost with its cookie under
 * .brokers/rabbitmq), else a node started by hand with Debian's defaults.
 */
function ctlTargets(): { cmd: string; args: string[]; env: NodeJS.ProcessEnv }[] {
  const lab = join(process.env.BABELQUEUE_BROKERS_DIR ?? join(repoRoot, '.brokers'), 'rabbitmq');
  const targets: { cmd: string; args: string[]; env: NodeJS.ProcessEnv }[] = [];
  if (existsSync(join(lab, '.erlang.cookie'))) {
    // Debian's /usr/sbin/rabbitmqctl switches to the rabbitmq user (and its
    // cookie); the lab's node runs as this user, so call the tool directly.
    const direct = '/usr/lib/rabbitmq/bin/rabbitmqctl';
    targets.push({
      cmd: existsSync(direct) ? direct : 'rabbitmqctl',
      args: ['-n', 'babelqueue@localhost'],
      env: {
        ...process.env,
        HOME: lab,
        RABBITMQ_NODENAME: 'babelqueue@localhost',
        ERL_EPMD_ADDRESS: '127.0.0.1',
        RABBITMQ_CTL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
      },
    });
  }
  targets.push({ cmd: 'rabbitmqctl', args: [], env: process.env });
  return targets;
}

/**
 * Closes, broker-side, every connection whose client named itself `name`
 * (`rabbitmqctl close_connection`, the targeted form of close_all_connections,
 * so suites running in parallel keep theirs). False when rabbitmqctl cannot
 * reach the broker from here.
 */
export async function closeConnectionsNamed(name: string): Promise<number | false> {
  for (const { cmd, args, env } of ctlTargets()) {
    let listing: string;
    try {
      ({ stdout: listing } = await run(cmd, [...args, '-q', 'list_connections', '--no-table-headers', 'pid', 'client_properties'], { timeout: 30_000, env }));
    } catch {
      continue;
    }
    const pids = listing
      .split('\n')
      .filter((line) => line.includes(`{"connection_name","${name}"}`))
      .map((line) => line.split('\t')[0])
      .filter((pid): pid is string => pid !== undefined && pid.startsWith('<'));
    if (pids.length === 0) continue;
    for (const pid of pids) {
      await run(cmd, [...args, '-q', 'close_connection', pid, 'babelqueue test: connection cut'], { timeout: 30_000, env });
    }
    return pids.length;
  }
  return false;
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export { until } from '../../../../test/support/until.js';
